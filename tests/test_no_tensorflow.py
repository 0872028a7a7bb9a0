"""JAX and PyTorch without TensorFlow (issue 19, part 1): `tests/no_tensorflow_child.py` in a
subprocess where TensorFlow, TF Text and tensorflow-datasets cannot be imported.

Every module imports; every trainer (torch) or a classifier and the GAN (JAX, whose
compilation costs 10-40 s a trainer) fits on NumPy, a PyDataset and (torch) a DataLoader and
reloads from `.keras`; export, tf.data and tensorflow-datasets refuse in one line. The TF-free
leg of tests/run.sh runs this file again where TensorFlow is not installed at all; run.sh's main legs
skip it ($PAPERZOO_TF_FREE_LEG_FOLLOWS), so that each backend runs it once, there.
"""

import importlib.util
import os
import subprocess
import sys

import pytest

import keras

from tests.trainer_zoo import TRAINERS

HERE = os.path.dirname(os.path.abspath(__file__))
JAX_TRAINERS = ("resnet", "gan")
# Set by tests/run.sh on its three main legs, which are followed by the TF-free leg that runs this file.
TF_FREE_LEG_FOLLOWS = "PAPERZOO_TF_FREE_LEG_FOLLOWS"


def test_the_package_trains_saves_and_refuses_export_without_tensorflow():
    backend = keras.backend.backend()
    if backend == "tensorflow":
        pytest.skip("the TensorFlow backend needs TensorFlow")
    if os.environ.get(TF_FREE_LEG_FOLLOWS) and importlib.util.find_spec("tensorflow") is not None:
        # The same child, the same trainers and the same backend run again in tests/run.sh's TF-free leg, where
        # TensorFlow is not installed at all (stronger than hiding it): running it here too repeats it.
        pytest.skip(f"run by tests/run.sh's TF-free leg, where TensorFlow is not installed (${TF_FREE_LEG_FOLLOWS})")
    trainers = ["resnet"] + sorted(set(TRAINERS) - {"resnet"}) if backend == "torch" else list(JAX_TRAINERS)
    env = dict(os.environ, KERAS_BACKEND=backend)
    done = subprocess.run([sys.executable, os.path.join(HERE, "no_tensorflow_child.py"), *trainers],
                          env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0 and f"OK {len(trainers)}" in done.stdout, done.stderr[-3000:]
