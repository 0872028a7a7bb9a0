"""The dense linear probe and its mIoU (`evaluation/dense_probe.py`)."""

import numpy as np
import pytest

import keras

from keras_paperzoo.evaluation.dense_probe import dense_linear_probe, mean_iou, miou_above


def test_mean_iou_by_hand():
    labels = np.array([0, 0, 1, 1])
    predictions = np.array([0, 1, 1, 1])
    # class 0: 1 / 2; class 1: 2 / 3
    assert mean_iou(predictions, labels, 2) == pytest.approx((1 / 2 + 2 / 3) / 2)


def test_miou_above_tells_a_real_gap_from_none():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, (40, 4, 4))
    noisy = np.where(rng.random(labels.shape) < 0.5, labels, rng.integers(0, 3, labels.shape))
    gap = miou_above(labels, noisy, labels, 3)
    assert gap["holds"] and gap["difference_points"] > 20
    none = miou_above(noisy, noisy, labels, 3)
    assert not none["holds"] and none["difference_points"] == 0.0


@pytest.mark.one_leg("tensorflow")  # a Keras fit of a few seconds; the probe's code has no backend branch
def test_probe_reads_a_map_that_encodes_the_cells():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, (32, 2, 2))
    maps = np.eye(3, dtype="float32")[labels] + 0.01 * rng.standard_normal((32, 2, 2, 3)).astype("float32")
    backbone = keras.Sequential([keras.Input((2, 2, 3)), keras.layers.Identity()])
    result = dense_linear_probe(backbone, (maps[:24], labels[:24]), (maps[24:], labels[24:]), num_classes=3,
                                epochs=40, batch_size=32, learning_rate=0.1)
    assert result["accuracy"] == 1.0 and result["miou"] == 1.0 and result["predictions"].shape == (8, 2, 2)
