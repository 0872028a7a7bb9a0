"""Shared pytest fixtures.

The suite runs once per backend: `KERAS_BACKEND=jax pytest tests` (see tests/run.sh).
"""

import importlib.util
import os
import pathlib

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]


def _shared_data_dir():
    env = os.environ.get("PAPERZOO_SHARED_DATA")
    if env:
        return pathlib.Path(env)
    return REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data():
    """Folder of the real datasets beside the project (never committed).

    Tests that need it skip, with the reason, when it is absent (a user's checkout).
    """
    path = _shared_data_dir()
    if not path.is_dir():
        pytest.skip(f"shared data folder {path} is absent; set PAPERZOO_SHARED_DATA")
    return path


# --- one leg for end-to-end runs --------------------------------------------------------------
ALL_LEGS = "PAPERZOO_TEST_ALL_RECIPES"


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "one_leg(backend): an end-to-end run (a recipe's CLI, an application script) whose backend-specific parts "
        "are tested on every leg elsewhere (the trainer's own tests, the recipe's kill-and-resume on another leg): "
        f"run on `backend`'s leg only, unless ${ALL_LEGS}=1",
    )
    config.addinivalue_line(
        "markers",
        "backend_free(backend): tests of code that never reaches a Keras backend (NumPy, SciPy, scikit-learn or "
        "pure Python: dataset files, text metrics, statistics, reports, the benchmark harness), so that every leg "
        f"would run the very same computation: run on `backend`'s leg only, unless ${ALL_LEGS}=1. Put it on a "
        "module (`pytestmark`) only when no test of the module builds or runs a Keras model or op.",
    )
    config.addinivalue_line(
        "markers",
        "needs_tensorflow: the test runs TensorFlow (export, tf.data, keras-hub's WordPiece, tensorflow-datasets) "
        "whatever the backend. tests/run.sh runs the JAX and torch legs where TensorFlow is not installed, where these "
        "skip, and then these alone (`-m needs_tensorflow`) where it is. An unmarked test that needs it fails there.",
    )


WHY_SKIPPED = {"one_leg": "an end-to-end run", "backend_free": "no Keras backend involved, the same on every leg"}
TENSORFLOW_INSTALLED = importlib.util.find_spec("tensorflow") is not None


def pytest_runtest_setup(item):
    if item.get_closest_marker("needs_tensorflow") is not None and not TENSORFLOW_INSTALLED:
        pytest.skip("needs TensorFlow, which is not installed here (tests/run.sh runs it where it is)")
    if os.environ.get(ALL_LEGS):
        return
    for name, why in WHY_SKIPPED.items():
        marker = item.get_closest_marker(name)
        if marker is None:
            continue
        import keras

        if keras.backend.backend() != marker.args[0]:
            pytest.skip(f"{why}: on the {marker.args[0]} leg only (${ALL_LEGS}=1: every leg)")


# --- the slow end-to-end files first ---------------------------------------------------------
# pytest-xdist hands tests to its workers in collection order: a minute-long child-process run
# collected last leaves one worker busy while the other idles. These files (each test a child
# process or a whole trainer, 20-140 s) are collected first; the rest keep their order.
SLOW_FILES = ("test_kill_and_resume.py", "test_examples.py", "test_reproduce.py", "test_export_recipes.py",
              "test_data_parallel.py", "test_mixed_precision.py", "test_backend_agreement.py")


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: item.path.name not in SLOW_FILES)  # stable: the order within each group is kept
