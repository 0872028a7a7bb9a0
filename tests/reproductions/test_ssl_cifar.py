"""keras_paperzoo/reproductions/ssl_cifar.py: the claims' arithmetic and its refusals (smoke runs: test_reproduce.py)."""

import pytest

from keras_paperzoo.reproductions import common
from keras_paperzoo.reproductions import ssl_cifar as _ssl_cifar


@pytest.fixture(scope="module")
def ssl_cifar():
    return _ssl_cifar


def _run(knn, probe=None, **extra):
    return {"knn_h_percent": knn, "probe_h_percent": probe if probe is not None else knn, **extra}


def test_claims_use_two_standard_errors(ssl_cifar):
    runs = {
        "random init": _run(80.0, knn_z_percent=70.0, probe_z_percent=70.0),
        "simclr": _run(88.0, 90.0, run="SimCLR, t = 0.5", knn_z_percent=84.0, probe_z_percent=89.5),
        "simclr_t0.1": _run(86.0, run="SimCLR, t = 0.1", knn_z_percent=86.5, probe_z_percent=85.0),
        "byol": _run(85.0, run="BYOL", output_std_per_epoch=[0.1, 0.09], spread_if_uniform=0.125),
        "byol_no_predictor": _run(79.0, run="BYOL, no predictor", output_std_per_epoch=[0.05, 0.001],
                                  spread_if_uniform=0.125),
        "moco": _run(87.0, run="MoCo v2"),
    }
    claims = ssl_cifar.claims(runs, 2000)
    holds = {name: claim["holds"] for name, claim in claims.items()}
    assert holds == {
        "SimCLR, t = 0.5: kNN above random init": True,
        "SimCLR, t = 0.1: kNN above random init": True,
        "BYOL: kNN above random init": True,
        "BYOL, no predictor: kNN above random init": False,
        "MoCo v2: kNN above random init": True,
        "BYOL, no predictor: output_std falls toward 0 (below 0.2 / sqrt(d))": True,  # 0.001 < 0.025
        "BYOL: kNN above BYOL, no predictor": True,
        "BYOL, no predictor: kNN at or below random init": True,
        "SimCLR, t = 0.1: kNN on h above z": False,
        "SimCLR, t = 0.1: linear probe on h above z": False,  # +1.0 < 2 s.e. (2.2)
        "SimCLR, t = 0.5: kNN on h above z": True,
        "SimCLR, t = 0.5: linear probe on h above z": False,
        "temperature: SimCLR, t = 0.1 kNN above SimCLR, t = 0.5": False,  # -2.0
        "SimCLR, t = 0.5 kNN above MoCo v2": False,
        "SimCLR, t = 0.5 kNN above BYOL": True,
        "MoCo v2 kNN above BYOL": False,
    }
    # 2 * sqrt((0.88 * 0.12 + 0.86 * 0.14) / 2000) = 2.13 points
    margin = claims["temperature: SimCLR, t = 0.1 kNN above SimCLR, t = 0.5"]  # the lower t first, whichever wins
    assert (margin["difference_points"], margin["two_standard_errors_points"]) == (-2.0, pytest.approx(2.13, abs=0.01))
    collapse = claims["BYOL, no predictor: output_std falls toward 0 (below 0.2 / sqrt(d))"]
    assert (collapse["first_epoch"], collapse["last_epoch"], collapse["threshold"]) == (0.05, 0.001, 0.025)
    cpc = ssl_cifar.claims({"cpc": _run(50.0, run="CPC v1", mi_bound_per_epoch=[0.4, 0.9]),
                            "random init (CPC's patch encoder)": _run(47.0)}, 2000)
    assert cpc["CPC v1: the bound log N - L rises"] == {"holds": True, "first_epoch": 0.4, "last_epoch": 0.9}
    assert cpc["CPC v1: kNN above random init (CPC's patch encoder)"]["holds"] is False  # +3.0 < 3.13
    assert ssl_cifar.parse_runs("byol, moco") == ["byol", "moco"]
    with pytest.raises(common.UsageError, match="unknown \\['dino'\\]"):
        ssl_cifar.parse_runs("byol,dino")


def test_script_refuses_bad_runs_and_missing_data(tmp_path, ssl_cifar, offline):
    with pytest.raises(common.UsageError, match="dino"):
        ssl_cifar.main(["--dataset", "digits", "--runs", "dino", "--output-dir", str(tmp_path)])
    with pytest.raises(ValueError, match="MNIST was not found .*put mnist.npz"):
        ssl_cifar.main(["--dataset", "mnist", "--output-dir", str(tmp_path)])
