"""keras_paperzoo/reproductions/resnet_cifar.py and vit_cifar.py: subsets, claims, tables, refusals.

Their smoke runs are in test_reproduce.py."""

import numpy as np
import pytest

import keras

from keras_paperzoo.data.subsets import balanced_subset
from keras_paperzoo.reproductions import common, resnet_cifar, vit_cifar


def test_balanced_subset_is_seeded_and_balanced():
    labels = np.repeat(np.arange(10), 50)[::-1]
    rows = balanced_subset(labels, 123, seed=3)
    assert len(rows) == 123 and len(set(rows.tolist())) == 123
    counts = np.bincount(labels[rows], minlength=10)
    assert counts.min() == 12 and counts.sum() == 123  # 12 of every class, 3 more drawn from the rest
    assert np.array_equal(rows, balanced_subset(labels, 123, seed=3))
    assert not np.array_equal(rows, balanced_subset(labels, 123, seed=4))
    assert np.array_equal(balanced_subset(labels, 0, seed=3), np.arange(500))


def test_claims_compare_the_right_numbers_with_their_margin():
    def run(test, train):
        return {"test_error_percent": test, "final_train_error_percent": train}

    nets = {"plain20_cifar": run(30, 20), "plain56_cifar": run(40, 35),
            "resnet20_cifar": run(25, 15), "resnet56_cifar": run(39.5, 10)}
    claims = resnet_cifar.claims(nets, {"test_images": 10_000, "train_images": 4_000})
    assert {k: c["holds"] for k, c in claims.items()} == {
        "resnet20_test_error_below_plain20": True,
        "resnet20_train_error_below_plain20": True,
        "resnet56_test_error_below_plain56": False,  # 0.5 points: inside 2 standard errors
        "resnet56_train_error_below_plain56": True,
        "plain56_train_error_above_plain20": True,
        "resnet56_train_error_below_resnet20": True,
    }
    margin = claims["resnet56_test_error_below_plain56"]
    assert margin["difference_points"] == 0.5
    # 2 * sqrt((0.395 * 0.605 + 0.4 * 0.6) / 10,000) = 1.38 points
    assert margin["two_standard_errors_points"] == pytest.approx(1.38, abs=0.01)
    assert resnet_cifar.claims({"resnet20_cifar": run(1, 1)}, {"test_images": 1, "train_images": 1}) == {}


def test_vit_table_puts_the_resnet_rows_of_the_same_folder_beside_its_own():
    run = {"parameters": 1000, "test_error_percent": 50.0, "final_train_error_percent": 40.0, "train_seconds": 60.0}
    budget = {"preset": "vit_ti16", "patch_size": 4, "layers": 1, "dropout": 0.0, "train_images": 64, "epochs": 2,
              "steps_per_epoch": 2, "batch_size": 32, "test_images": 40, "backend": "torch"}
    resnets = {"budget": dict(budget), "nets": {"resnet20_cifar": dict(run, parameters=271_098)}}
    table = vit_cifar.table({"ViT (class token)": run}, budget, resnets)
    assert "ViT (class token)" in table and "ResNet-20 (resnet_cifar.py)" in table


def test_scripts_refuse_a_missing_dataset_and_unknown_nets(tmp_path, offline):
    with pytest.raises(FileNotFoundError, match="absent.zip does not exist"):
        resnet_cifar.main(["--dataset", str(tmp_path / "absent.zip"), "--output-dir", str(tmp_path)])
    with pytest.raises(ValueError, match="CIFAR-10 was not found .*put cifar10.npz .*--dataset digits"):
        resnet_cifar.main(["--output-dir", str(tmp_path)])
    with pytest.raises(common.UsageError):
        resnet_cifar.main(["--nets", "resnet18", "--output-dir", str(tmp_path)])
    with pytest.raises(common.UsageError, match="--warmup-steps 8"):  # must end before the first drop (update 8 of 16)
        resnet_cifar.main(["--dataset", "digits", "--train-images", "64", "--batch-size", "8", "--epochs", "2",
                           "--warmup-steps", "8", "--backend", keras.backend.backend(), "--output-dir", str(tmp_path)])
