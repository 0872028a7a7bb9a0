"""JAX and PyTorch without TensorFlow (issue 19, part 1): `tests/no_tensorflow_child.py` in a
subprocess where TensorFlow, TF Text and tensorflow-datasets cannot be imported.

Every module imports; every trainer (torch) or a classifier and the GAN (JAX, whose
compilation costs 10-40 s a trainer) fits on a PyDataset and on a DataLoader (torch) or NumPy
(JAX) and reloads from `.keras`; export, tf.data and tensorflow-datasets refuse in one line. tests/run.sh
runs the JAX and torch legs, this file included, where TensorFlow is not installed at all (the child
then needs no hiding); in an environment that has it, the child hides it.
"""

import os
import subprocess
import sys

import pytest

import keras

from tests.trainer_zoo import TRAINERS

HERE = os.path.dirname(os.path.abspath(__file__))
JAX_TRAINERS = ("resnet", "gan")


@pytest.mark.slow(reason="a child process importing every module and fitting, saving and reloading every trainer "
                         "(torch; JAX: two), without TensorFlow: 30-95 s of CPU")
def test_the_package_trains_saves_and_refuses_export_without_tensorflow():
    backend = keras.backend.backend()
    if backend == "tensorflow":
        pytest.skip("the TensorFlow backend needs TensorFlow")
    trainers = ["resnet"] + sorted(set(TRAINERS) - {"resnet"}) if backend == "torch" else list(JAX_TRAINERS)
    env = dict(os.environ, KERAS_BACKEND=backend)
    done = subprocess.run([sys.executable, os.path.join(HERE, "no_tensorflow_child.py"), *trainers],
                          env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0 and f"OK {len(trainers)}" in done.stdout, done.stderr[-3000:]
