"""applications/resnet_cifar.py and vit_cifar.py: run end to end on 'digits' with a tiny budget."""

import json

import numpy as np
import pytest

import keras

from tests.applications.scripts import load_application as _load


@pytest.fixture(scope="module")
def resnet_cifar():
    return _load("resnet_cifar")


def test_balanced_subset_is_seeded_and_balanced(resnet_cifar):
    labels = np.repeat(np.arange(10), 50)[::-1]
    rows = resnet_cifar.balanced_subset(labels, 123, seed=3)
    assert len(rows) == 123 and len(set(rows.tolist())) == 123
    counts = np.bincount(labels[rows], minlength=10)
    assert counts.min() == 12 and counts.sum() == 123  # 12 of every class, 3 more drawn from the rest
    assert np.array_equal(rows, resnet_cifar.balanced_subset(labels, 123, seed=3))
    assert not np.array_equal(rows, resnet_cifar.balanced_subset(labels, 123, seed=4))
    assert np.array_equal(resnet_cifar.balanced_subset(labels, 0, seed=3), np.arange(500))


def test_claims_compare_the_right_numbers_with_their_margin(resnet_cifar):
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


@pytest.mark.one_leg("torch")
def test_both_scripts_run_a_tiny_budget_and_write_their_reports(tmp_path, resnet_cifar):
    from PIL import Image

    common = ["--dataset", "digits", "--train-images", "64", "--test-images", "40", "--epochs", "2",
              "--batch-size", "32", "--backend", keras.backend.backend(), "--output-dir", str(tmp_path),
              "--verbose", "0"]
    assert resnet_cifar.main(common + ["--nets", "resnet20_cifar", "--warmup-steps", "1"]) == 0
    metrics = json.loads((tmp_path / "resnet_cifar_metrics.json").read_text())
    run = metrics["nets"]["resnet20_cifar"]
    assert run["parameters"] == 271_098  # Table 6's 0.27M with the 10-way head
    assert run["steps"] == 4 and len(run["train_error_percent_per_epoch"]) == 2
    assert 0.0 <= run["test_error_percent"] <= 100.0
    budget = metrics["budget"]
    assert (budget["train_images"], budget["test_images"], budget["epochs"], budget["batch_size"]) == (64, 40, 2, 32)
    assert (budget["steps_per_epoch"], budget["warmup_steps"]) == (2, 1)  # 64 / 32 images; lr 0.01 for 1 update
    assert budget["backend"] == keras.backend.backend()
    assert "| ResNet-20 | 271,098 | 8.75 |" in (tmp_path / "resnet_cifar_results.md").read_text()
    assert Image.open(tmp_path / "resnet_cifar_training_error.png").size == (960, 440)

    vit_cifar = _load("vit_cifar")
    assert vit_cifar.main(common + ["--layers", "1"]) == 0
    vit = json.loads((tmp_path / "vit_cifar_metrics.json").read_text())
    token, gap = vit["nets"]["ViT (class token)"], vit["nets"]["ViT (global average pooling)"]
    # The class token and its position-table row: 2 x D = 384 more parameters than GAP.
    assert token["parameters"] - gap["parameters"] == 2 * 192
    assert vit["budget"]["layers"] == 1 and vit["budget"]["patch_size"] == 4
    table = (tmp_path / "vit_cifar_results.md").read_text()
    assert "ViT (class token)" in table and "ResNet-20 (resnet_cifar.py)" in table


def test_scripts_refuse_a_missing_dataset_and_unknown_nets(tmp_path, resnet_cifar):
    with pytest.raises(SystemExit, match="not found"):
        resnet_cifar.main(["--dataset", str(tmp_path / "absent.zip"), "--output-dir", str(tmp_path)])
    with pytest.raises(SystemExit):
        resnet_cifar.main(["--nets", "resnet18", "--output-dir", str(tmp_path)])
    with pytest.raises(SystemExit):  # the warm-up must end before the first drop (update 8 of 16)
        resnet_cifar.main(["--dataset", "digits", "--train-images", "64", "--batch-size", "8", "--epochs", "2",
                           "--warmup-steps", "8", "--backend", keras.backend.backend(), "--output-dir", str(tmp_path)])
