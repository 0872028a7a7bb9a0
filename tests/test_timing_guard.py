"""The suite's 60-second guard (tests/conftest.py): a test that passes over $PAPERZOO_SLOW_LIMIT_S seconds without
`@pytest.mark.slow(reason=...)` fails the run, one marked with a reason does not."""

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT, over_limit

pytestmark = pytest.mark.backend_free("torch")

TESTS = '''
import time

import pytest


def burn(seconds):  # CPU time, not sleep: the guard counts the smaller of wall and CPU time
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass


def test_quick():
    burn(0.05)


def test_sleeps():  # wall time only: a test waiting on a loaded machine is not slow
    time.sleep(0.6)


@pytest.mark.slow(reason="a reason")
def test_slow_with_a_reason():
    burn(0.6)


@pytest.mark.slow
def test_slow_without_a_reason():
    burn(0.6)


def test_slow_unmarked():
    burn(0.6)
'''


def _pytest(folder, *args):
    env = {**os.environ, "PAPERZOO_SLOW_LIMIT_S": "0.3", "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider", "-q",
                           "-o", "addopts=", str(folder / "test_timed.py"), *args],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_a_passing_test_over_the_limit_without_a_reason_fails_the_run(tmp_path):
    (tmp_path / "test_timed.py").write_text(TESTS, encoding="utf-8")
    run = _pytest(tmp_path)
    assert run.returncode == 1, run.stdout[-3000:]
    assert "5 passed" in run.stdout
    report = run.stdout.split("tests over the time limit")[1]
    assert "test_slow_unmarked" in report and "test_slow_without_a_reason" in report
    assert "test_slow_with_a_reason" not in report and "test_sleeps" not in report and "test_quick" not in report

    fine = _pytest(tmp_path, "-k", "quick or sleeps or with_a_reason")
    assert fine.returncode == 0, fine.stdout[-3000:]
    assert "tests over the time limit" not in fine.stdout


def test_the_cost_is_the_smaller_of_wall_and_cpu_time():
    assert over_limit({"wall": 61, "cpu": 70, "slow_reason": None}, 60)
    assert not over_limit({"wall": 200, "cpu": 50, "slow_reason": None}, 60)  # waiting on a loaded machine
    assert not over_limit({"wall": 50, "cpu": 90, "slow_reason": None}, 60)  # two compile threads
    assert not over_limit({"wall": 90, "cpu": 90, "slow_reason": "why"}, 60)
    assert not over_limit({"wall": 90, "cpu": 90, "slow_reason": None}, 0)  # $PAPERZOO_SLOW_LIMIT_S=0: no guard
