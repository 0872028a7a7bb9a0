"""Shared pytest fixtures.

The suite runs once per backend: `KERAS_BACKEND=jax pytest tests` (see tests/run.sh).
"""

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
