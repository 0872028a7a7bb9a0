"""keras_paperzoo/reproductions/instdisc_proximal.py: the oscillation arithmetic and the claims (smoke run: test_reproduce.py)."""

import numpy as np
import pytest

from keras_paperzoo.reproductions import common
from keras_paperzoo.reproductions import instdisc_proximal


@pytest.fixture(scope="module")
def app():
    return instdisc_proximal


def test_per_update_losses_and_their_oscillation(app):
    # Keras logs running means within an epoch: 2, (2 + 4) / 2, (2 + 4 + 3) / 3 -> 2, 4, 3; a new epoch restarts.
    np.testing.assert_allclose(app.per_step_values([[2.0, 3.0, 3.0], [1.0, 1.5]]), [2, 4, 3, 1, 2], atol=1e-12)
    # A slow trend plus +-a alternating: each change is about 2a, so sd(diff) / sqrt(2) = a sqrt(2).
    t = np.arange(400)
    zigzag = 5.0 - 0.001 * t + 0.1 * (-1.0) ** t
    assert app.step_oscillation(zigzag) == pytest.approx(0.1 * np.sqrt(2), rel=2e-3)  # (ddof 1)
    assert app.step_oscillation(5.0 - 0.001 * t) == pytest.approx(0.0, abs=1e-12)  # a trend alone: no oscillation
    # About its 11-update moving average the zigzag deviates by a (up to the window's own +-a / 11).
    assert app.moving_average_deviation(zigzag) == pytest.approx(0.1, rel=0.1)
    noisy = 5.0 + np.random.default_rng(0).normal(0, 0.2, 400)
    measured = app.oscillation(noisy)  # the second half: 200 updates, 4 blocks of 50
    assert measured["updates_measured"] == 200
    assert measured["oscillation"] == pytest.approx(0.2, rel=0.15)  # independent noise: its own sd
    assert 0.0 < measured["oscillation_se"] < 0.05
    smooth = app.oscillation(5.0 + np.random.default_rng(1).normal(0, 0.05, 400))
    claim = app.less_oscillation(smooth, measured)
    assert claim["holds"] and claim["ratio"] == pytest.approx(0.25, rel=0.2)
    assert not app.less_oscillation(measured, smooth)["holds"]
    short = app.oscillation(noisy[:8])  # 4 updates measured: no blocks, no s.e., so no claim
    assert short["oscillation_se"] is None and not app.less_oscillation(short, measured)["holds"]


def test_claims_compare_each_run_with_its_objectives_original(app):
    def run(name, oscillation, knn):
        return {"run": app.RUNS[name][0], "objective_loss": {"oscillation": oscillation, "oscillation_se": 0.005},
                "memory_bank_knn_percent": knn}

    runs = {"paper": run("paper", 0.30, 60.0), "proximal_30": run("proximal_30", 0.10, 70.0),
            "authors_code": run("authors_code", 0.29, 61.0), "nce_proximal_30": run("nce_proximal_30", 0.1, 9.0)}
    holds = {name: claim["holds"] for name, claim in app.claims(runs, 300).items()}
    base = "softmax, lambda = 0, bank replaced"
    assert holds == {
        f"softmax, lambda = 30, bank replaced: the loss oscillates less than {base}": True,
        f"softmax, lambda = 30, bank replaced: memory-bank kNN above {base}": True,  # +10 > 2 s.e. (7.7)
        f"softmax, lambda = 0, bank momentum 0.5 (the authors' code): the loss oscillates less than {base}": False,
        f"softmax, lambda = 0, bank momentum 0.5 (the authors' code): memory-bank kNN above {base}": False,
    }  # (0.01 < 2 s.e. = 0.014; the NCE run has no NCE baseline here: no claim)
    assert app.claims({"proximal_30": runs["proximal_30"]}, 300) == {}  # nothing to compare with
    assert app.parse_runs("paper, proximal_30") == ["paper", "proximal_30"]
    with pytest.raises(common.UsageError, match=r"unknown \['proximal_99'\]"):
        app.parse_runs("paper,proximal_99")


def test_script_refuses_bad_runs_and_missing_data(tmp_path, app, offline):
    with pytest.raises(common.UsageError, match="swav"):
        app.main(["--runs", "swav", "--output-dir", str(tmp_path)])
    with pytest.raises(ValueError, match="MNIST was not found .*put mnist.npz"):
        app.main(["--dataset", "mnist", "--output-dir", str(tmp_path)])
