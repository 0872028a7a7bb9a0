"""Issue 33, items 3, 6 and 9: what the install carries and the lines that say what it lacks.

- pyproject.toml: `.[jax]`, `.[torch]` and `.[test]` install no TensorFlow, TF Text,
  tensorflow-datasets or keras-hub (whose metadata pulls TensorFlow in); the core carries
  TensorBoard; `tf` and `export` carry TensorFlow and what tensorflow-datasets imports.
- TensorBoard's own loader reads the logs `TensorBoardLogs` writes without TensorFlow.
- A tensorflow-datasets name that fails names the real cause: a module not installed (with
  the extra), the network only for a connection that failed.
- Where keras-hub is not installed, the other models import and BERT asks for it in one line.
(tests/fresh_install.sh installs `.[jax]` in a new environment and trains; not run by the suite.)
"""

import os
import pathlib
import subprocess
import sys
import textwrap
import tomllib

import numpy as np
import pytest
from PIL import Image

from keras_paperzoo.data.checks import DatasetError
from keras_paperzoo.data.tfds_source import _load_error

ROOT = pathlib.Path(__file__).resolve().parents[1]
TENSORFLOW = ("tensorflow", "tensorflow-text", "tensorflow-datasets", "keras-hub", "tf-nightly")


def _names(requirements):
    return {r.split(";")[0].split("[")[0].split(">")[0].split("=")[0].split("<")[0].strip().lower()
            for r in requirements}


@pytest.mark.backend_free("torch")
def test_the_jax_torch_and_test_installs_carry_no_tensorflow_and_tensorboard_comes_with_the_core():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core, extras = project["dependencies"], project["optional-dependencies"]
    for name in ("jax", "torch", "test"):
        assert not _names(core + extras[name]) & set(TENSORFLOW), name
    assert {"keras", "tensorboard", "numpy", "scikit-learn", "pillow"} <= _names(core)
    assert {"tensorflow", "tensorflow-datasets", "importlib_resources", "tensorflow-text", "keras-hub"} <= _names(extras["tf"])
    assert {"keras-paperzoo", "ai-edge-litert"} <= _names(extras["export"]) and "keras-paperzoo[tf]" in extras["export"]


@pytest.mark.backend_free("torch")
def test_tensorboards_loader_reads_the_logs_written_without_tensorflow(tmp_path):
    event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    from keras_paperzoo.callbacks.tensorboard import TensorBoardLogs

    picture = tmp_path / "samples_epoch_002.png"
    Image.fromarray(np.arange(6 * 4 * 3, dtype=np.uint8).reshape(6, 4, 3)).save(picture)
    holder = type("Pictures", (), {"last_path": None})()
    logs = TensorBoardLogs(tmp_path / "logs", pictures=[holder])
    for epoch, loss in enumerate((0.75, 0.5, 0.25)):
        holder.last_path = str(picture) if epoch == 2 else None
        logs.on_epoch_end(epoch, {"loss": loss, "val_loss": 2 * loss})
    logs.on_train_end()

    train = event_accumulator.EventAccumulator(str(tmp_path / "logs" / "train"), size_guidance={"images": 0})
    train.Reload()
    assert [(s.step, s.value) for s in train.Scalars("epoch_loss")] == [(0, 0.75), (1, 0.5), (2, 0.25)]
    (image,) = train.Images("samples")
    assert (image.step, image.width, image.height) == (2, 4, 6)
    assert image.encoded_image_string == picture.read_bytes()
    validation = event_accumulator.EventAccumulator(str(tmp_path / "logs" / "validation"))
    validation.Reload()
    assert [s.value for s in validation.Scalars("epoch_loss")] == [1.5, 1.0, 0.5]


def _raised(error, cause=None):
    try:
        try:
            raise cause if cause is not None else error
        except Exception:
            if cause is None:
                raise
            raise error
    except Exception as raised:
        return raised


@pytest.mark.backend_free("torch")
def test_a_tfds_failure_names_its_real_cause():
    missing = ModuleNotFoundError("No module named 'importlib_resources'", name="importlib_resources")
    message = str(_load_error("cifar10", "train", _raised(RuntimeError("builder failed"), missing)))
    assert "'importlib_resources'" in message and 'pip install -e ".[tf]"' in message
    assert "internet" not in message and "download" not in message

    offline = _raised(ValueError("download failed"), ConnectionError("Failed to resolve storage.googleapis.com"))
    message = str(_load_error("cifar10", "train", offline))
    assert "internet" in message and "Failed to resolve" not in message and "\n" not in message

    message = str(_load_error("cifar10", "train", KeyError("label")))
    assert "KeyError" in message and "internet" not in message
    assert all(isinstance(_load_error("x", "train", e), DatasetError) for e in (missing, offline))


CHILD = textwrap.dedent("""
    import importlib.machinery, sys

    class Absent(importlib.machinery.PathFinder):
        @classmethod
        def find_spec(cls, fullname, path=None, target=None):
            if fullname.split(".")[0] == "keras_hub":
                return None
            return importlib.machinery.PathFinder.find_spec(fullname, path, target)

    sys.meta_path[:] = [Absent if f is importlib.machinery.PathFinder else f for f in sys.meta_path]
    from keras_paperzoo.models import GAN, SimCLR  # noqa: F401
    import keras_paperzoo.evaluation, keras_paperzoo.callbacks  # noqa: F401, E401
    try:
        from keras_paperzoo.models import BertBackbone  # noqa: F401
    except ImportError as error:
        print(type(error).__name__, error)
""")


@pytest.mark.one_leg("torch")
def test_without_keras_hub_the_other_models_import_and_bert_asks_for_it_in_one_line():
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == ('MissingDependency BertBackbone needs keras-hub, which is not installed: pip install '
                                   '--no-deps "keras-hub>=0.32" (--no-deps keeps TensorFlow out; the tf extra '
                                   'installs it with TensorFlow).')
