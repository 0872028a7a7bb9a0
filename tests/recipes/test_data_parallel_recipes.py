"""`paperzoo train RECIPE --data-parallel`: one recipe over every local device (issue 19, part 3).

On the JAX leg, in children with 4 virtual CPU devices (the devices exist only if XLA_FLAGS is
set before JAX starts): MoCo v2 (shuffled BN, a queue, kNN and a linear probe of 62 training and
13 test images, counts that 4 devices cannot share) trains to the losses and evaluation of one
device, is killed mid-epoch and resumed with `--resume` alone bit-identical to the uninterrupted
run, still data-parallel; a batch the devices cannot share is refused in one line. On every leg,
in-process: TensorFlow and torch refuse the flag in one line; a resumed run takes the run's flag.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import keras

from keras_paperzoo.recipes import common
from keras_paperzoo.recipes.common import RecipeError
from tests.conftest import with_fast_xla_flags
from tests.recipes.test_kill_and_resume import DRIVER, ENV, KILL_AT, differences
from tests.recipes.tiny_runs import make_tiny_data

BACKEND = keras.backend.backend()
DEVICES = 4
FOUR_DEVICES = {**ENV, "KERAS_BACKEND": "jax", "JAX_PLATFORMS": "cpu", "XLA_FLAGS": with_fast_xla_flags(
    f"--xla_force_host_platform_device_count={DEVICES} --xla_cpu_multi_thread_eigen=false")}
on_jax = pytest.mark.skipif(BACKEND != "jax", reason="keras.distribution is JAX-only (the other legs check the refusal)")


def _child(argv, cwd, fault=None):
    env = {**os.environ, **FOUR_DEVICES}
    env.pop("PAPERZOO_FAULT", None)
    if fault:
        env["PAPERZOO_FAULT"] = fault
    return subprocess.run([sys.executable, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def odd_images(tmp_path_factory):
    """62 training and 13 test images: neither splits over 4 devices."""
    folder = tmp_path_factory.mktemp("dp_data")
    tiny = np.load(make_tiny_data(folder)["images"])
    path = folder / "odd.npz"
    np.savez(path, x_train=tiny["x_train"][:62], y_train=tiny["y_train"][:62],
             x_test=tiny["x_test"][:13], y_test=tiny["y_test"][:13])
    return str(path)


def _moco(dataset, *extra):
    return ["train", "moco", "--dataset", dataset, "--preset", "moco_tiny", "--epochs", "3", "--steps-per-epoch", "3",
            "--batch-size", "8", "--probe-epochs", "2", "--verbose", "0", *extra]


@on_jax
@pytest.mark.slow(reason="MoCo's recipe on one and on four devices, killed and resumed, in child processes")
def test_a_data_parallel_recipe_matches_one_device_and_resumes_bit_identical(odd_images, tmp_path):
    reference, broken, single = tmp_path / "reference", tmp_path / "broken", tmp_path / "single"
    killed = _child(["-c", DRIVER, str(reference), str(broken), KILL_AT, *_moco(odd_images, "--data-parallel")],
                    cwd=tmp_path)
    assert killed.returncode == -9, killed.stderr[-3000:]  # the reference finished, the second run was killed
    assert json.loads((reference / "checkpoint" / "run.json").read_text())["arguments"]["data_parallel"] is True
    resumed = _child(["-m", "keras_paperzoo", "train", "moco", "--resume", "--output-dir", str(broken), "--verbose", "0"],
                     cwd=tmp_path, fault="keep-checkpoint")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert differences(reference, broken) == []

    one = _child(["-m", "keras_paperzoo", *_moco(odd_images), "--output-dir", str(single)], cwd=tmp_path)
    assert one.returncode == 0, one.stderr[-3000:]
    four, one = (json.loads((run / "metrics.json").read_text()) for run in (reference, single))
    assert four["data_parallel_devices"] == DEVICES and "data_parallel_devices" not in one
    # The papers' global batch: the same loss on 4 devices as on one (a per-device queue or BN would not be).
    np.testing.assert_allclose(four["loss"], one["loss"], rtol=1e-4)
    assert four["knn_acc"] == one["knn_acc"] and four["linear_probe_accuracy"] == one["linear_probe_accuracy"]


@on_jax
def test_a_batch_the_devices_cannot_share_is_refused_in_one_line(odd_images, tmp_path):
    done = _child(["-m", "keras_paperzoo", *_moco(odd_images, "--data-parallel", "--batch-size", "6"),
                   "--output-dir", str(tmp_path / "run")], cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "paperzoo: error: --batch-size 6 does not split over the 4 devices of --data-parallel: give a multiple of 4 "
        "(the global batch).")


@on_jax
def test_the_distribution_splits_the_batches_it_can_and_replicates_the_others():
    code = ("from keras_paperzoo.training.data_parallel import use_data_parallel, device_count\n"
            "import keras\n"
            "print(use_data_parallel(), device_count())\n"
            "layout = keras.distribution.distribution().get_data_layout\n"
            "print([list(layout((n, 3)).axes) for n in (8, 62, 1)])\n")
    done = _child(["-c", code], cwd=os.getcwd())
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split("\n")[:2] == ["4 4", "[['batch', None], [None, None], [None, None]]"]


# --- in-process, every leg -----------------------------------------------------------------------

@pytest.fixture
def no_distribution():
    yield
    keras.distribution.set_distribution(None)


def _args(tmp_path, **overrides):
    from tests.recipes.test_run import _args as run_args

    return run_args(tmp_path, **{"data_parallel": True, **overrides})


@pytest.mark.skipif(BACKEND == "jax", reason="the JAX leg trains data-parallel above")
def test_tensorflow_and_torch_refuse_the_flag_in_one_line(tmp_path):
    with pytest.raises(RecipeError, match=rf"^--data-parallel needs the JAX backend .*; this is {BACKEND}: use "
                                          r"--backend jax, or train on one device \(docs/accelerators.md\).$"):
        common.start_run(_args(tmp_path), "gan")


@on_jax
def test_a_resumed_run_is_data_parallel_again_without_the_flag(tmp_path, no_distribution):
    common.start_run(_args(tmp_path), "gan")._record_arguments()
    keras.distribution.set_distribution(None)
    args = _args(tmp_path, resume=True, data_parallel=None)
    common.start_run(args, "gan")
    assert args.data_parallel is True
    assert isinstance(keras.distribution.distribution(), keras.distribution.DataParallel)
