"""The same GAN steps on TensorFlow, JAX and PyTorch (4 JAX devices: tests/training/test_data_parallel.py).

Each run is a separate process (a process has one Keras backend). These tests run
once, in the TensorFlow pass of the suite: they start the other backends themselves.
"""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import keras

SCRIPT = pathlib.Path(__file__).with_name("gan_steps_script.py")
REPO = SCRIPT.parents[2]

pytestmark = pytest.mark.skipif(
    keras.backend.backend() != "tensorflow",
    reason="runs once per suite (in the tensorflow pass); it launches every backend itself",
)


def _run(backend, inp, out, *flags, env=None):
    full_env = dict(os.environ, KERAS_BACKEND=backend, PYTHONPATH=str(REPO), **(env or {}))
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(inp), str(out), *flags],
        env=full_env, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return np.load(out)


@pytest.fixture(scope="module")
def initial(tmp_path_factory):
    sys.path.insert(0, str(SCRIPT.parent))
    import gan_steps_script

    path = tmp_path_factory.mktemp("gan") / "initial.npz"
    gan_steps_script.initial_state(path)
    return path


def _weights(result):
    keys = sorted((k for k in result.files if k.startswith("weights_")), key=lambda k: int(k.split("_")[1]))
    return [result[k] for k in keys]


def test_three_backends_agree_after_three_gan_steps(initial, tmp_path):
    runs = {b: _run(b, initial, tmp_path / f"{b}.npz") for b in ("tensorflow", "jax", "torch")}
    start = _weights(np.load(initial))
    reference = _weights(runs["tensorflow"])
    assert any(not np.allclose(a, b) for a, b in zip(start, reference)), "the steps changed nothing"
    for backend in ("jax", "torch"):
        for a, b in zip(_weights(runs[backend]), reference):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6, err_msg=backend)
        np.testing.assert_allclose(runs[backend]["d_loss"], runs["tensorflow"]["d_loss"], rtol=1e-4)
