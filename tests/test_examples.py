"""Every example in examples/ runs to its end at smoke size, each on one backend leg by default.

An example reads `PAPERZOO_EXAMPLE_SMOKE` (set to 1 here): it then shrinks itself to a few steps (a
tiny preset, one short epoch). Each runs as its reader would, `python examples/NAME.py`, in a child
process whose working folder is a temporary one (examples write their pictures there).

`PAPERZOO_TEST_ALL_EXAMPLES=1` runs every example on every leg (each was run so on all three backends
when it was written). By default each runs on one leg, so that the three legs share the cost (a smoke
run compiles a whole trainer: up to a minute on JAX) and every backend runs some examples: the leg named
in `LEG` (fixed, so that adding an example moves no other), else the unlisted examples in turn (torch,
tensorflow, jax, ...). Running all 16 on every leg would add about ten minutes to a suite already over
its 40-minute target (docs/command.md).
"""

import os
import pathlib
import subprocess
import sys

import pytest

import keras

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
SWITCH = "PAPERZOO_EXAMPLE_SMOKE"


LEGS = ("tensorflow", "jax", "torch")
SMOKE_EXAMPLES = [p for p in sorted(EXAMPLES.glob("*.py")) if SWITCH in p.read_text(encoding="utf-8")]
# (simclr_digits and instdisc_digits moved from JAX to torch in stop 24: 64 s and 50 s of compilation on JAX,
# the longest leg; JAX keeps cmc_digits)
LEG = {"byol_digits": "tensorflow", "invaspread_digits": "tensorflow", "simclr_digits": "torch",
       "instdisc_digits": "torch", "cmc_digits": "jax", "cpc_digits": "torch", "resnet_digits": "tensorflow",
       "gpt_sonnets": "torch", "mae_digits": "torch", "gan_digits": "jax", "vit_digits": "tensorflow",
       "moco_digits": "torch", "bert_sample_text": "torch", "transformer_toy_translation": "torch",
       "alexnet_digits": "tensorflow", "vgg_digits": "tensorflow",
       "deepcluster_digits": "jax", "densecl_digits": "torch", "swav_digits": "torch"}


def leg_of(path):
    if path.stem in LEG:
        return LEG[path.stem]
    unlisted = [p for p in SMOKE_EXAMPLES if p.stem not in LEG]
    return LEGS[(unlisted.index(path) + 2) % len(LEGS)]  # torch first: the listed ones lean on the others


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.stem)
def test_example_runs_at_smoke_size(path, tmp_path):
    if path not in SMOKE_EXAMPLES:
        pytest.skip(f"{path.name} has no {SWITCH} switch: it runs only at full size")
    leg = leg_of(path)
    if keras.backend.backend() != leg and os.environ.get("PAPERZOO_TEST_ALL_EXAMPLES") != "1":
        pytest.skip(f"{path.name} runs on the {leg} leg (PAPERZOO_TEST_ALL_EXAMPLES=1: every leg)")
    env = {**os.environ, SWITCH: "1", "KERAS_BACKEND": keras.backend.backend(), "TF_CPP_MIN_LOG_LEVEL": "3",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(EXAMPLES.parent), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "random init" in done.stdout  # the result table, trained beside untrained
