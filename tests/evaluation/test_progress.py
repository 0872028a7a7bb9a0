"""The long evaluations (kNN, Parzen, feature extraction) show a Keras progress bar with verbose=1, nothing with 0."""

import re

import numpy as np
import pytest

import keras

from keras_paperzoo.evaluation import extract_features, knn_accuracy, parzen_evaluation


@pytest.fixture
def points():
    rng = np.random.default_rng(0)
    return rng.normal(size=(40, 3)).astype("float32"), rng.integers(0, 2, 40)


def _bar_total(text, unit):
    """The target printed in a finished Progbar line: '30/30 ... 1s 10ms/image'."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)  # Keras's bold
    finished = [line for line in text.replace("\r", "\n").splitlines() if f"/{unit}" in line or f"{unit}s/" in line]
    assert finished, f"no progress bar with unit {unit!r} in {text!r}"
    return finished[-1].split()[0]


def test_knn_shows_progress_over_the_test_points(points, capsys):
    x, y = points
    assert knn_accuracy(x, y, x[:30], y[:30], k=5, batch_size=8, verbose=0) == knn_accuracy(x, y, x[:30], y[:30], k=5)
    assert capsys.readouterr().out == ""
    knn_accuracy(x, y, x[:30], y[:30], k=5, batch_size=8, verbose=1)
    assert _bar_total(capsys.readouterr().out, "image") == "30/30"


def test_parzen_shows_progress_for_sigma_and_test_points(points, capsys):
    x, _ = points
    quiet = parzen_evaluation(x, x[:10], x[:25], batch_size=4)
    assert capsys.readouterr().out == ""
    loud = parzen_evaluation(x, x[:10], x[:25], batch_size=4, verbose=1)
    assert loud["log_likelihood"] == quiet["log_likelihood"]
    text = capsys.readouterr().out
    assert "10/10" in text and _bar_total(text, "point") == "25/25"


def test_feature_extraction_shows_progress(points, capsys):
    x, y = points
    encoder = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4)])
    features, _ = extract_features(encoder, (x, y), batch_size=16, verbose=1)
    assert features.shape == (40, 4)
    assert _bar_total(capsys.readouterr().out, "image") == "40/40"
