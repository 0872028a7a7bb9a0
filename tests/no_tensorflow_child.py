"""Run by tests/test_no_tensorflow.py in a process where TensorFlow cannot be imported.

A path finder blind to them makes `import name` raise ModuleNotFoundError, as in an environment
without the packages (the TF-free leg of tests/run.sh has none installed at all). Then, on
$KERAS_BACKEND (jax or torch):

1. every module of keras_paperzoo imports;
2. each trainer named on the command line fits on a `keras.utils.PyDataset` and on a
   `torch.utils.data.DataLoader` (torch) or NumPy arrays (JAX; on torch every trainer's own
   tests fit NumPy on the TF-free leg), and its `.keras` file reloads in safe mode with
   identical weights;
3. export, the tf.data pipeline and a tensorflow-datasets name each refuse in one line that
   names the package to install, and `paperzoo export` prints that line and exits 2;
4. `paperzoo train gan` at a tiny size trains and writes its TensorBoard logs.

Prints "OK <n trainers>" at the end; any failure raises.
"""

import importlib.machinery
import sys

ABSENT = ("tensorflow", "tensorflow_text", "tensorflow_datasets")


class Absent(importlib.machinery.PathFinder):
    """The path finder, blind to ABSENT: `import tensorflow` raises ModuleNotFoundError and
    `importlib.util.find_spec("tensorflow")` returns None, as where it is not installed."""

    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname.split(".")[0] in ABSENT:
            return None
        return importlib.machinery.PathFinder.find_spec(fullname, path, target)


sys.meta_path[:] = [Absent if finder is importlib.machinery.PathFinder else finder for finder in sys.meta_path]

import contextlib  # noqa: E402
import importlib  # noqa: E402
import io  # noqa: E402
import os  # noqa: E402
import pkgutil  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def import_every_module():
    import keras_paperzoo

    failed = []
    for module in pkgutil.walk_packages(keras_paperzoo.__path__, "keras_paperzoo."):
        if module.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(module.name)
        except Exception as error:  # noqa: BLE001 (all are reported)
            failed.append(f"{module.name}: {type(error).__name__}: {error}")
    assert not failed, "modules that fail to import without TensorFlow:\n" + "\n".join(failed)


class Batches:
    """`x` (and `y`) in batches, as a PyDataset (`keras_dataset`) or a torch Dataset of examples."""

    def __init__(self, x, y, batch_size):
        import keras

        self.x, self.y, self.batch_size, self.tree = x, y, batch_size, keras.tree
        self.n = len(keras.tree.flatten(x)[0])

    def keras_dataset(self):
        import keras

        outer = self

        class Data(keras.utils.PyDataset):
            def __len__(self):
                return outer.n // outer.batch_size

            def __getitem__(self, i):
                rows = slice(i * outer.batch_size, (i + 1) * outer.batch_size)
                return outer.take(rows)

        return Data()

    def take(self, rows):
        x = self.tree.map_structure(lambda a: a[rows], self.x)
        return x if self.y is None else (x, self.tree.map_structure(lambda a: a[rows], self.y))

    def torch_loader(self):
        import torch

        outer = self

        class Examples(torch.utils.data.Dataset):
            def __len__(self):
                return outer.n

            def __getitem__(self, i):
                return outer.take(i)

        return torch.utils.data.DataLoader(Examples(), batch_size=self.batch_size, shuffle=False)


def check_trainer(name, folder):
    import keras

    from tests.trainer_zoo import TRAINERS

    keras.utils.set_random_seed(0)
    model, x, y, batch_size = TRAINERS[name]()
    model.compile()
    batches = Batches(x, y, batch_size)
    inputs = {"PyDataset": dict(x=batches.keras_dataset())}
    if keras.backend.backend() == "torch":  # NumPy fits: every trainer's own tests, on the TF-free leg (tests/run.sh)
        inputs["DataLoader"] = dict(x=batches.torch_loader())
    else:
        inputs["NumPy"] = dict(x=x, y=y, batch_size=batch_size)
    for kind, kwargs in inputs.items():
        logs = model.fit(**kwargs, epochs=1, shuffle=False, verbose=0).history
        assert all(np.isfinite(v[-1]) for v in logs.values()), f"{name} on {kind}: {logs}"
    path = os.path.join(folder, f"{name}.keras")
    model.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    for a, b in zip(model.weights, loaded.weights, strict=True):
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b), err_msg=name)
    return path


def one_line(error):
    message = str(error)
    assert "\n" not in message and "pip install tensorflow" in message, message
    return message


def check_refusals(model_path):
    from keras_paperzoo.cli import main as paperzoo
    from keras_paperzoo.data import load_dataset
    from keras_paperzoo.data.indexed import index_dataset
    from keras_paperzoo.export import export_model_file
    from keras_paperzoo.optional import MissingDependency

    checks = (
        lambda: export_model_file(model_path, model_path + ".saved_model", format="saved_model"),
        lambda: index_dataset(None),  # a tf.data pipeline
    )
    for check in checks:
        try:
            check()
        except MissingDependency as error:
            one_line(error)
        else:
            raise AssertionError("a TensorFlow feature ran without TensorFlow")
    try:
        load_dataset("cifar10", split="train")
    except ValueError as error:
        assert "tensorflow-datasets" in str(error) or "tensorflow_datasets" in str(error), str(error)
    else:
        raise AssertionError("a tensorflow-datasets name loaded without tensorflow-datasets")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = paperzoo(["export", model_path, "--format", "saved_model"])
    printed = err.getvalue().strip().splitlines()
    assert code == 2 and len(printed) == 1 and "pip install tensorflow" in printed[0], (code, printed)


def check_train_writes_tensorboard_logs(folder):
    """`paperzoo train gan` at a tiny size writes its TensorBoard logs without TensorFlow."""
    import pathlib

    from keras_paperzoo.callbacks.tensorboard import read_logs
    from keras_paperzoo.cli import main as paperzoo
    from tests.recipes.tiny_runs import make_tiny_data

    folder = pathlib.Path(folder)
    make_tiny_data(folder)
    out = folder / "gan_run"
    code = paperzoo(["train", "gan", "--dataset", str(folder / "images.npz"), "--epochs", "2", "--steps-per-epoch", "2",
                     "--batch-size", "8", "--parzen-samples", "20", "--output-dir", str(out), "--verbose", "0"])
    assert code == 0, code
    logged = read_logs(out / "logs")
    assert {(run, tag, step) for run, tag, step in logged if tag == "epoch_d_loss"} == {
        ("train", "epoch_d_loss", 0), ("train", "epoch_d_loss", 1)}, sorted(logged)[:6]
    assert any(tag == "samples" for _, tag, _ in logged), "the sample grid was not logged"


def main(trainers):
    import_every_module()
    with tempfile.TemporaryDirectory() as folder:
        paths = [check_trainer(name, folder) for name in trainers]
        check_refusals(paths[0])
        check_train_writes_tensorboard_logs(folder)
    assert not any(name in sys.modules for name in ABSENT)
    print(f"OK {len(trainers)}")


if __name__ == "__main__":
    main(sys.argv[1:])
