"""Every example in examples/ runs to its end at smoke size, each on one backend leg.

An example reads `PAPERZOO_EXAMPLE_SMOKE` (set to 1 here): it then shrinks itself to a few steps (a
tiny preset, one short epoch). Each runs as its reader would run it, as `__main__` with its own
working folder (examples write their pictures there), in a child process
(`tests/examples_child.py`) that runs a group of examples one after another: one import of Keras,
its backend and keras-hub per group instead of per example (issue 18). `PAPERZOO_EXAMPLE_GROUPS`
sets the number of groups per leg (default 2, so that the two test workers share them);
`PAPERZOO_EXAMPLES=a,b` runs only those, on any leg. The examples that run TensorFlow whatever the
backend (`NEEDS_TENSORFLOW`: keras-hub's WordPiece, tf.data translation batches) are one more
group, marked `needs_tensorflow` (tests/conftest.py).

Which leg runs which (`legs_of`, issue 35): each example runs on one backend, by its place in
examples/ in the cycle torch, JAX, torch, TensorFlow (the two that need TensorFlow on the JAX and
torch legs, where they mix a TensorFlow input pipeline with another backend's model). Torch takes
half: at smoke size an example is mostly compiling on JAX and TensorFlow (a third of the examples
took 152 s on the JAX leg and 24 s on torch). An example is
end-to-end plumbing around a trainer that every leg tests on its own (fit, save, load, resume in
tests/models and tests/recipes); running each example on two or three backends cost 370 s of the
suite's 2,017 s. `PAPERZOO_TEST_ALL_RECIPES=1` runs every example on every leg.
"""

import json
import os
import pathlib
import subprocess
import sys

import pytest

import keras

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
SWITCH = "PAPERZOO_EXAMPLE_SMOKE"


SMOKE_EXAMPLES = [p for p in sorted(EXAMPLES.glob("*.py")) if SWITCH in p.read_text(encoding="utf-8")]
GROUPS = int(os.environ.get("PAPERZOO_EXAMPLE_GROUPS", "2"))
NEEDS_TENSORFLOW = ("bert_sample_text", "transformer_toy_translation")
LEG_CYCLE = ("torch", "jax", "torch", "tensorflow")


def legs_of(path):
    """The backend whose leg runs this example: torch, JAX, torch, TensorFlow in turn by its place in examples/
    (JAX and torch in turn for the examples that need TensorFlow whatever the backend)."""
    if path.stem in NEEDS_TENSORFLOW:
        return (("jax", "torch")[NEEDS_TENSORFLOW.index(path.stem) % 2],)
    others = [p for p in SMOKE_EXAMPLES if p.stem not in NEEDS_TENSORFLOW]
    return (LEG_CYCLE[others.index(path) % len(LEG_CYCLE)],)


def _selected(needs_tensorflow=False, backend=None):
    only = [name for name in os.environ.get("PAPERZOO_EXAMPLES", "").split(",") if name]
    every_leg = backend is None or os.environ.get("PAPERZOO_TEST_ALL_RECIPES") or only
    return [p for p in SMOKE_EXAMPLES
            if (not only or p.stem in only) and (p.stem in NEEDS_TENSORFLOW) == needs_tensorflow
            and (every_leg or backend in legs_of(p))]


@pytest.mark.backend_free("torch")
def test_each_example_runs_on_one_leg_and_the_legs_share_them():
    for needs_tensorflow in (False, True):
        legs = [set(_selected(needs_tensorflow, backend)) for backend in ("torch", "jax", "tensorflow")]
        assert set.union(*legs) == set(_selected(needs_tensorflow))
        assert sum(map(len, legs)) == len(_selected(needs_tensorflow)), "an example runs on two legs"
        if not needs_tensorflow:  # torch about half, JAX and TensorFlow about a quarter each
            torch_leg, jax_leg, tf_leg = map(len, legs)
            assert abs(jax_leg - tf_leg) <= 1 and abs(torch_leg - (jax_leg + tf_leg)) <= 2, (torch_leg, jax_leg, tf_leg)
    assert not _selected(True, "tensorflow"), "the TensorFlow leg would add nothing to a TensorFlow input pipeline"


def test_the_examples_that_need_tensorflow_exist():
    assert set(NEEDS_TENSORFLOW) <= {p.stem for p in SMOKE_EXAMPLES}


@pytest.mark.backend_free("tensorflow")
def test_every_example_has_the_smoke_switch():
    missing = [p.name for p in sorted(EXAMPLES.glob("*.py")) if p not in SMOKE_EXAMPLES]
    assert not missing, f"examples without the {SWITCH} switch run only at full size: {missing}"


@pytest.mark.slow(reason="a child process running a third of the examples one after another, each training its "
                         "trainer at smoke size: 60-200 s")
@pytest.mark.parametrize("group", [*range(GROUPS), pytest.param("tf", marks=pytest.mark.needs_tensorflow)],
                         ids=lambda g: f"group{g}")
def test_examples_run_at_smoke_size(group, tmp_path):
    backend = keras.backend.backend()
    paths = (_selected(needs_tensorflow=True, backend=backend) if group == "tf"
             else _selected(backend=backend)[group::GROUPS])
    if not paths:
        pytest.skip(f"no example in this group on the {backend} leg")
    env = {**os.environ, SWITCH: "1", "KERAS_BACKEND": keras.backend.backend(), "TF_CPP_MIN_LOG_LEVEL": "3",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(EXAMPLES.parent), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-m", "tests.examples_child", str(tmp_path), *map(str, paths)],
                          cwd=EXAMPLES.parent, env=env, capture_output=True, text=True, timeout=1800)
    lines = [line for line in done.stdout.splitlines() if line.startswith("EXAMPLES ")]
    assert done.returncode == 0 and lines, done.stderr[-3000:]
    results = json.loads(lines[-1][len("EXAMPLES "):])
    assert [r["example"] for r in results] == [p.stem for p in paths]
    failed = [f"{r['example']}:\n{r['error']}" for r in results if r["error"]]
    assert not failed, "\n\n".join(failed)
    # each prints its result table, trained beside untrained
    untabled = [r["example"] for r in results if "random init" not in r["stdout"]]
    assert not untabled, f"no 'random init' row in the output of {untabled}"
