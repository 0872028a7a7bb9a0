"""Every recipe, killed with SIGKILL in the middle of an epoch and resumed, ends bit-identical to the uninterrupted run.

Registry-driven: each recipe of `keras_paperzoo.recipes.RECIPES` is run by the real
`paperzoo train` in child processes, so a recipe added later is tested the day it is
registered (with tiny_runs.py's `FAST_ARGUMENTS[name]`, else `DEFAULT_ARGUMENTS` on a
tiny image `.npz`; a recipe too slow for it is listed in `TOO_SLOW_TO_RESUME` with the
reason). Child 1 runs the whole recipe, then the same command again, which SIGKILLs
itself after batch 1 of epoch 1 (0-based: the second of three epochs), via the
`$PAPERZOO_FAULT` hook of `keras_paperzoo.callbacks.run_checkpoint`. Child 2 runs
`paperzoo train NAME --resume` with no other argument (the run's own are kept). Then
every array of every `.keras` file (weights and optimizer state), the newest
checkpoint of every training stage (every saved variable, the `SeedGenerator`
states, Python's and NumPy's random states, the history), every other file and
every number of metrics.json but the timings, and every value of the TensorBoard logs
must be equal, bit for bit.

What a recipe must do to pass: call `recipes.common.start_run`, `Run.fit`,
`Run.save_model` / `Run.write_text` and `Run.finish` (see recipes/common.py).

Cost: each recipe runs on one backend's leg per suite run (`LEG`, `leg_of`), about
50 s of CPU each; `PAPERZOO_TEST_ALL_RECIPES=1` runs every recipe, the slow ones
too, on every leg (done when the machinery or a recipe changes).

The crash-safety of the checkpoint file itself (a kill between the weights and
`state.json`, an unreadable newest checkpoint, a kill after `fit` but before the final
files) is checked on the GAN in `test_kills_while_saving_and_after_fit_lose_nothing`.
"""

import io
import json
import os
import resource
import signal
import subprocess
import sys
import textwrap
import zipfile

import h5py
import numpy as np
import pytest

import keras

from keras_paperzoo.callbacks.tensorboard import read_logs
from keras_paperzoo.recipes import RECIPES
from keras_paperzoo.recipes.common import LOGS_DIR
from tests.conftest import with_fast_xla_flags
from tests.recipes.tiny_runs import TOO_SLOW_TO_RESUME, recipe_arguments, skip_if_too_slow, tiny_data  # noqa: F401

BACKEND = keras.backend.backend()
KILL_AT = "kill@batch:1:1"
# One thread per child: PyTorch's and XLA's idle threads spin on a busy 2-core machine (the GPT recipe on torch
# took 52 s of CPU with the default threads, 22 s with one). Both runs of a test use the same settings.
ENV = {"TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONWARNINGS": "ignore", "KERAS_BACKEND": BACKEND, "OMP_NUM_THREADS": "1",
       "TF_NUM_INTRAOP_THREADS": "1", "TF_NUM_INTEROP_THREADS": "1", "XLA_FLAGS": with_fast_xla_flags("--xla_cpu_multi_thread_eigen=false")}
DRIVER = textwrap.dedent(
    """
    import os, sys
    from keras_paperzoo.cli import main
    reference, broken, fault, argv = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    os.environ["PAPERZOO_FAULT"] = "keep-checkpoint"
    code = main(argv + ["--output-dir", reference])
    if code:
        sys.exit(code)
    os.environ["PAPERZOO_FAULT"] = fault
    main(argv + ["--output-dir", broken])
    sys.exit(3)  # not reached: the fault kills the process
    """
)


@pytest.fixture(scope="module")
def compilation_cache(tmp_path_factory):
    """One JAX compilation cache for the children: the resumed process reuses the first one's compiled steps."""
    return str(tmp_path_factory.mktemp("jax_cache"))


def run_child(argv, cwd, fault=None, cache=None):
    env = {**os.environ, **ENV}
    if cache and BACKEND == "jax":
        env.update(JAX_COMPILATION_CACHE_DIR=cache, JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
                   JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0")
    env.pop("PAPERZOO_FAULT", None)
    if fault:
        env["PAPERZOO_FAULT"] = fault
    return subprocess.run([sys.executable, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)


def h5_arrays(source):
    arrays = {}
    with h5py.File(source, "r") as f:
        f.visititems(lambda name, obj: arrays.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
    return arrays


def keras_file_arrays(path):
    with zipfile.ZipFile(path) as archive:
        return h5_arrays(io.BytesIO(archive.read("model.weights.h5")))


def differences(reference, resumed):
    """Every difference between two finished runs' folders, as readable strings (empty when bit-identical)."""
    found = []

    def compare_arrays(a, b, label):
        if a.keys() != b.keys():
            found.append(f"{label}: variables {sorted(set(a) ^ set(b))[:5]}")
            return
        for key in a:
            x, y = np.asarray(a[key]), np.asarray(b[key])
            if x.shape != y.shape or not np.array_equal(x, y, equal_nan=x.dtype.kind == "f"):
                gap = np.max(np.abs(x.astype("float64") - y.astype("float64"))) if x.shape == y.shape else "shape"
                found.append(f"{label}:{key} differs by {gap}")

    for path in sorted(p for p in reference.rglob("*") if p.is_file()):
        relative = path.relative_to(reference)
        other = resumed / relative
        if relative.parts[0] in ("checkpoint", LOGS_DIR):  # logs: event files are named by time and process
            continue
        if not other.is_file():
            found.append(f"{relative}: missing after resume")
        elif path.suffix == ".keras":
            compare_arrays(keras_file_arrays(path), keras_file_arrays(other), str(relative))
        elif relative.name == "metrics.json":
            a, b = (json.loads(p.read_text()) for p in (path, other))
            found += [f"metrics.json:{k} {a[k]!r} != {b.get(k)!r}" for k in a
                      if not k.endswith("seconds") and a[k] != b.get(k)]
        elif path.read_bytes() != other.read_bytes():
            found.append(f"{relative}: contents differ")
    logged, logged_again = read_logs(reference / LOGS_DIR), read_logs(resumed / LOGS_DIR)
    if not logged:
        found.append("no TensorBoard values logged")
    found += [f"logs: {key} {logged[key]!r:.40} != {logged_again.get(key)!r:.40}" for key in logged
              if logged[key] != logged_again.get(key)]
    stages = sorted(p.parent.name for p in (reference / "checkpoint").glob("*/state.json"))
    if not stages:
        found.append("no checkpoint kept (PAPERZOO_FAULT=keep-checkpoint)")
    for stage in stages:
        a, b = (json.loads((r / "checkpoint" / stage / "state.json").read_text())["states"][0]
                for r in (reference, resumed))
        found += [f"checkpoint/{stage}: {key} differs" for key in a if key != "bytes" and a[key] != b.get(key)]
        compare_arrays(h5_arrays(reference / "checkpoint" / stage / a["weights"]),
                       h5_arrays(resumed / "checkpoint" / stage / b["weights"]), f"checkpoint/{stage}")
    return found


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def newest_epoch(run, stage="train"):
    state = json.loads((run / "checkpoint" / stage / "state.json").read_text())
    return state["states"][0]["epoch"]


BACKENDS = ("jax", "tensorflow", "torch")


# Each recipe's leg, fixed so that registering a recipe moves no other (the nine older ones where stop 22's CI
# ran them; every recipe passes on every leg with $PAPERZOO_TEST_ALL_RECIPES=1, checked when it was added).
# Issue 35: gpt, resnet-cifar and instdisc (about 68 s each on JAX at load 15) and deepcluster moved from JAX and
# TensorFlow to torch, where a recipe's children compile nothing; JAX keeps cmc and bert (and bert's task run),
# TensorFlow simclr and the GAN's save-time kills, so that every leg still resumes recipes bit-identically.
LEG = {"bert": "jax", "gpt": "torch", "resnet-cifar": "torch", "instdisc": "torch", "cmc": "jax",
       # byol and mae on torch, not TensorFlow (2026-11-26): 47 / 46 s of CPU in the children there, mae 188 s on
       # TF (246 / 331 s wall on TF's leg): TF traces Keras's optimizer once per variable (LARS and a target
       # network; a ViT's blocks). Their trainers' exact resumes run on every leg (test_byol.py, test_mae.py);
       # TF keeps simclr's, deepcluster's and the GAN's save-time kills. densecl on torch too (173 s on TF).
       "byol": "torch", "mae": "torch", "simclr": "tensorflow",
       "gan": "torch", "moco": "torch", "transformer": "torch", "cpc": "torch", "invaspread": "torch", "swav": "torch",
       "deepcluster": "torch", "densecl": "torch", "igpt": "torch", "beit": "torch"}


def leg_of(name):
    """The backend whose CI leg runs `name`'s kill-and-resume test (`LEG`; a recipe not listed yet: the
    recipes in turn), so that each leg runs a third of them (about 50 s of CPU each).
    $PAPERZOO_TEST_ALL_RECIPES=1 runs every recipe on every leg."""
    if name in TOO_SLOW_TO_RESUME:
        return None
    if name in LEG:
        return LEG[name]
    unlisted = [n for n in sorted(RECIPES) if n not in TOO_SLOW_TO_RESUME and n not in LEG]
    return BACKENDS[unlisted.index(name) % len(BACKENDS)]


# The recipes that run TensorFlow on any backend: keras-hub's WordPiece (bert), tf.data translation batches.
NEEDS_TENSORFLOW = ("bert", "transformer")


def _recipes(names):
    return [pytest.param(n, marks=pytest.mark.needs_tensorflow) if n in NEEDS_TENSORFLOW else n for n in names]


CHILDREN_ARE_SLOW = pytest.mark.slow(reason="a recipe run twice by `paperzoo train` in child processes (each "
                                            "importing Keras and compiling the recipe's steps), then resumed: 20-70 s")


@CHILDREN_ARE_SLOW
@pytest.mark.parametrize("name", _recipes(sorted(RECIPES)))
def test_kill_mid_epoch_and_resume_is_bit_identical(name, tiny_data, compilation_cache, tmp_path):
    skip_if_too_slow(name, TOO_SLOW_TO_RESUME)
    if leg_of(name) not in (None, BACKEND) and not os.environ.get("PAPERZOO_TEST_ALL_RECIPES"):
        pytest.skip(f"run on the {leg_of(name)} leg (each recipe on one backend per suite run; "
                    "PAPERZOO_TEST_ALL_RECIPES=1 runs all)")
    cpu = _children_cpu()
    reference, broken = tmp_path / "reference", tmp_path / "broken"
    argv = ["train", name, *recipe_arguments(name, tiny_data), "--verbose", "0"]
    killed = run_child(["-c", DRIVER, str(reference), str(broken), KILL_AT, *argv], cwd=tmp_path,
                       cache=compilation_cache)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    assert (reference / "metrics.json").is_file() and not (broken / "metrics.json").exists()
    stage = sorted(p.parent.name for p in (broken / "checkpoint").glob("*/state.json"))[0]
    assert newest_epoch(broken, stage) == 1  # killed in the second epoch, after its first batches
    resumed = run_child(["-m", "keras_paperzoo", "train", name, "--resume", "--output-dir", str(broken),
                         "--verbose", "0"], cwd=tmp_path, fault="keep-checkpoint", cache=compilation_cache)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert differences(reference, broken) == []
    print(f"{name} on {BACKEND}: {_children_cpu() - cpu:.1f} s of CPU in the children")  # shown with pytest -rP


@CHILDREN_ARE_SLOW
def test_kills_while_saving_and_after_fit_lose_nothing(tiny_data, compilation_cache, tmp_path):
    """A kill between a checkpoint's weights and its state.json, an unreadable newest checkpoint, a kill after
    `fit` but before model.keras and metrics.json: `--resume` still ends bit-identical (GAN; the checkpoint files
    are the same on every backend, so one leg runs it unless $PAPERZOO_TEST_ALL_RECIPES is set)."""
    if BACKEND != "tensorflow" and not os.environ.get("PAPERZOO_TEST_ALL_RECIPES"):
        pytest.skip("run on the tensorflow leg")
    reference, broken = tmp_path / "reference", tmp_path / "broken"
    argv = ["train", "gan", *recipe_arguments("gan", tiny_data), "--verbose", "0"]
    killed = run_child(["-c", DRIVER, str(reference), str(broken), "kill@save:2", *argv], cwd=tmp_path,
                       cache=compilation_cache)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    folder = broken / "checkpoint" / "train"
    assert newest_epoch(broken) == 2 and (folder / "epoch-000003.weights.h5").is_file()  # written, not yet named
    newest = folder / "epoch-000002.weights.h5"
    newest.write_bytes(newest.read_bytes()[:1000])  # and the newest named one unreadable

    resume = ["-m", "keras_paperzoo", "train", "gan", "--resume", "--output-dir", str(broken), "--verbose", "0"]
    after_fit = run_child(resume, cwd=tmp_path, fault="kill@fitted", cache=compilation_cache)
    assert after_fit.returncode == -signal.SIGKILL, after_fit.stderr[-3000:]
    assert "newest checkpoint was unreadable" in after_fit.stderr and "after epoch 1 instead" in after_fit.stderr
    assert newest_epoch(broken) == 3 and not (broken / "model.keras").exists()
    assert not (broken / "metrics.json").exists()

    finished = run_child(resume, cwd=tmp_path, fault="keep-checkpoint", cache=compilation_cache)
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert differences(reference, broken) == []


def _gpt_sentiment(folder):
    rng = np.random.default_rng(0)
    lines = [{"text": " ".join(rng.choice(["good", "bad", "the", "cat", "sat"], 4)), "label": int(i % 2)}
             for i in range(24)]
    task_file = folder / "sentiment.jsonl"
    task_file.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return task_file


def _bert_conll(folder):
    from tests.recipes.test_bert_recipe import _write_conll

    return _write_conll(folder / "ner.txt")


# (recipe, --task, the task file, the leg): each on one leg, the stages being Run.fit's, tested on every leg above.
TASK_RUNS = {"gpt": ("classification", _gpt_sentiment, "torch"), "bert": ("tagging", _bert_conll, "jax")}
TASK_KEY = {"gpt": "task", "bert": "fine_tuning_task"}  # where metrics.json names the fine-tuning task


@CHILDREN_ARE_SLOW
@pytest.mark.parametrize("name", _recipes(sorted(TASK_RUNS)))
def test_a_task_run_killed_in_pre_training_resumes_and_fine_tunes_bit_identically(name, tiny_data, compilation_cache,
                                                                                   tmp_path):
    """`paperzoo train gpt --task classification --task-data FILE` and `paperzoo train bert --task tagging
    --task-data FILE`: killed in the pre-training stage, `--resume` (no other argument) keeps the task and its
    file, finishes pre-training, fine-tunes the head (GPTClassifier, BertTokenTagger), and every file equals the
    uninterrupted run's (the two stages' checkpoints, model.keras the fine-tuned model, metrics.json).
    One leg each (`TASK_RUNS`) unless $PAPERZOO_TEST_ALL_RECIPES."""
    task, write_task_file, leg = TASK_RUNS[name]
    if BACKEND != leg and not os.environ.get("PAPERZOO_TEST_ALL_RECIPES"):
        pytest.skip(f"run on the {leg} leg")
    task_file = write_task_file(tmp_path)
    reference, broken = tmp_path / "reference", tmp_path / "broken"
    argv = ["train", name, *recipe_arguments(name, tiny_data), "--task", task, "--task-data", str(task_file),
            "--verbose", "0"]
    killed = run_child(["-c", DRIVER, str(reference), str(broken), KILL_AT, *argv], cwd=tmp_path,
                       cache=compilation_cache)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    metrics = json.loads((reference / "metrics.json").read_text())
    assert metrics[TASK_KEY[name]] == task and not (broken / "metrics.json").exists()
    resumed = run_child(["-m", "keras_paperzoo", "train", name, "--resume", "--output-dir", str(broken),
                         "--verbose", "0"], cwd=tmp_path, fault="keep-checkpoint", cache=compilation_cache)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert differences(reference, broken) == []
