"""Claims against two binomial standard errors, and their one-line report."""

import numpy as np
import pytest

from keras_paperzoo.evaluation.claims import accuracy_above, claim_line, two_standard_errors

# backend_free (tests/conftest.py): the claim lines are pure Python arithmetic: every leg would run the same code.
pytestmark = pytest.mark.backend_free("tensorflow")


def test_two_standard_errors_and_the_verdict():
    # 2 * sqrt((0.84 * 0.16 + 0.805 * 0.195) / 5000) = 1.53 points
    assert two_standard_errors(84.0, 80.5, 5000) == pytest.approx(1.53, abs=0.005)
    assert accuracy_above(84.0, 80.5, 5000) == {"holds": True, "difference_points": 3.5,
                                                "two_standard_errors_points": 1.53}
    assert not accuracy_above(51.0, 50.0, 5000)["holds"]  # 1 point < 2.0
    assert not accuracy_above(50.0, 51.0, 5000)["holds"]  # below is never above
    with pytest.raises(ValueError, match="n \\(test images\\) must be >= 1"):
        two_standard_errors(50.0, 50.0, 0)


def test_claim_line():
    assert claim_line("a above b", accuracy_above(84.0, 80.5, 5000)) == (
        "- a above b: holds (difference +3.50 points, 2 s.e. 1.53)")
    assert claim_line("spread falls", {"holds": False, "first_epoch": 0.0764, "last_epoch": 0.0472}) == (
        "- spread falls: not shown (first_epoch 0.0764, last_epoch 0.0472)")


def test_paired_bootstrap_above_against_a_hand_count():
    from keras_paperzoo.evaluation.claims import paired_bootstrap_above

    accuracy = lambda p, y: float(np.mean(p == y))  # noqa: E731
    labels = np.zeros(400, int)
    better = np.where(np.arange(400) < 300, 0, 1)  # 75 % right
    worse = np.where(np.arange(400) < 200, 0, 1)  # 50 % right, wrong on a superset of better's misses
    claim = paired_bootstrap_above(accuracy, better, worse, labels, seed=0)
    # the paired difference is the mean of 100 ones among 400 rows: s.e. sqrt(0.25 * 0.75 / 400) = 0.0217
    assert claim["holds"] and claim["difference"] == 0.25
    assert claim["two_standard_errors"] == pytest.approx(2 * 0.0217, rel=0.15)
    assert not paired_bootstrap_above(accuracy, worse, worse, labels)["holds"]
    with pytest.raises(ValueError, match="resamples must be an int >= 2; got 1"):
        paired_bootstrap_above(accuracy, better, worse, labels, resamples=1)
