"""Shared pytest fixtures.

The suite runs once per backend: `KERAS_BACKEND=jax pytest tests` (see tests/run.sh).
"""

import importlib.util
import os
import pathlib

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]

# --- JAX compiles less ------------------------------------------------------------------------
# On the JAX leg most of a test's time is XLA compiling a tiny model's step, and most of that is LLVM optimising
# the CPU code of programs that then run for milliseconds. `--xla_backend_optimization_level=0` (the same HLO, the
# same fusions; LLVM without its optimisations) cut the CPU time of a mixed-precision test from 46 to 27 s
# (2026-12-05). Set here, before any test imports JAX, so that the tests' child processes (examples, recipes run
# by the CLI, virtual devices) inherit it; tests/virtual_devices.py and the kill-and-resume children add it to the
# XLA_FLAGS they set. $PAPERZOO_TEST_XLA_OPTIMIZED=1 compiles as users do.
FAST_XLA_FLAGS = "--xla_backend_optimization_level=0"


def with_fast_xla_flags(flags=""):
    """`flags` (an XLA_FLAGS value) with FAST_XLA_FLAGS, unless $PAPERZOO_TEST_XLA_OPTIMIZED is set."""
    if os.environ.get("PAPERZOO_TEST_XLA_OPTIMIZED") or FAST_XLA_FLAGS in flags:
        return flags
    return f"{flags} {FAST_XLA_FLAGS}".strip()


os.environ["XLA_FLAGS"] = with_fast_xla_flags(os.environ.get("XLA_FLAGS", ""))


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
    global _IN_WORKER
    _IN_WORKER = hasattr(config, "workerinput")  # an xdist worker: its controller keeps the timing report
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
    config.addinivalue_line(
        "markers",
        "slow(reason=...): a test that may cost more than $PAPERZOO_SLOW_LIMIT_S (60) seconds, and why; an unmarked "
        "test (or one marked without a reason) that passes over the limit fails the run (the guard at the end of this file)",
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


# --- the 60-second guard -----------------------------------------------------------------------
# A test that passes but costs more than SLOW_LIMIT_S seconds without `@pytest.mark.slow(reason=...)` fails the
# run (exit status 1, listed under "tests over the time limit"): the suite must stay well inside CI's time, and a
# new slow test is either made cheaper or says why it cannot be. Its cost is its setup and call (fixtures included),
# measured as the smaller of wall time and CPU time (this process's threads and its finished child processes):
# wall time alone grows with whatever else runs on the machine, CPU time alone counts XLA's compile threads
# twice on two cores. $PAPERZOO_SLOW_LIMIT_S sets the limit (0: no guard).
SLOW_LIMIT = "PAPERZOO_SLOW_LIMIT_S"
_START = pytest.StashKey()
_over_limit = []
_IN_WORKER = False


def slow_limit():
    return float(os.environ.get(SLOW_LIMIT, "60"))


def _clock():
    import resource
    import time

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter(), time.process_time() + children.ru_utime + children.ru_stime


def slow_reason(item):
    """The reason of the test's `slow` marker (None when unmarked or marked without a reason)."""
    marker = item.get_closest_marker("slow")
    if marker is None:
        return None
    return marker.kwargs.get("reason") or (marker.args[0] if marker.args else None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    item.stash[_START] = _clock()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if call.when == "call" and _START in item.stash:
        (wall0, cpu0), (wall1, cpu1) = item.stash[_START], _clock()
        report = outcome.get_result()  # user_properties travel from an xdist worker to the controller
        report.user_properties.append(("paperzoo_cost", {"wall": wall1 - wall0, "cpu": cpu1 - cpu0,
                                                          "slow_reason": slow_reason(item)}))


def over_limit(cost, limit):
    """Whether a passed test's cost (paperzoo_cost) breaks the limit: min(wall, CPU) > limit and no slow reason."""
    return limit > 0 and min(cost["wall"], cost["cpu"]) > limit and not cost["slow_reason"]


def pytest_runtest_logreport(report):
    if _IN_WORKER or report.when != "call" or not report.passed:
        return
    cost = dict(report.user_properties).get("paperzoo_cost")
    if cost and over_limit(cost, slow_limit()):
        _over_limit.append((report.nodeid, cost))


def pytest_sessionfinish(session, exitstatus):
    if _over_limit and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter):
    if not _over_limit:
        return
    terminalreporter.section("tests over the time limit", red=True)
    terminalreporter.line(f"passed, but each took over {slow_limit():g} s (the smaller of wall and CPU time) without "
                          f"@pytest.mark.slow(reason=...): make it cheaper or give the reason (${SLOW_LIMIT}=0: no guard)")
    for nodeid, cost in _over_limit:
        terminalreporter.line(f"{cost['wall']:7.1f} s wall {cost['cpu']:7.1f} s CPU  {nodeid}")
