"""Every example in examples/ runs to its end at smoke size, on every backend.

An example reads `PAPERZOO_EXAMPLE_SMOKE` (set to 1 here): it then shrinks itself to a few steps (a tiny
preset, one short epoch). Each runs as its reader would, `python examples/NAME.py`, in a child process whose
working folder is a temporary one (examples write their pictures there), on this leg's backend: every
example on each of the three legs, so that none rots on a backend. Examples without the switch are listed
and skipped with the reason (none today).
"""

import os
import pathlib
import subprocess
import sys

import pytest

import keras

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
SWITCH = "PAPERZOO_EXAMPLE_SMOKE"


SMOKE_EXAMPLES = [p for p in sorted(EXAMPLES.glob("*.py")) if SWITCH in p.read_text(encoding="utf-8")]


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.stem)
def test_example_runs_at_smoke_size(path, tmp_path):
    if path not in SMOKE_EXAMPLES:
        pytest.skip(f"{path.name} has no {SWITCH} switch: it runs only at full size")
    env = {**os.environ, SWITCH: "1", "KERAS_BACKEND": keras.backend.backend(), "TF_CPP_MIN_LOG_LEVEL": "3",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(EXAMPLES.parent), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "random init" in done.stdout  # the result table, trained beside untrained
