"""Weighted kNN (InstDisc protocol) against hand-computed examples."""

import math

import numpy as np
import pytest

from keras_paperzoo.evaluation.knn import knn_accuracy, knn_predict

# backend_free (tests/conftest.py): the kNN classifier is NumPy (keras.utils.Progbar only prints): every leg would run
# the same code.
pytestmark = pytest.mark.backend_free("tensorflow")


def test_weighted_vote_by_hand():
    # Train features on the unit circle at angles 0, 10, 20 (class 0) and 90, 100 (class 1) degrees.
    angles = np.radians([0, 10, 20, 90, 100])
    train = np.stack([np.cos(angles), np.sin(angles)], 1)
    labels = np.array([0, 0, 0, 1, 1])
    # A test point at 65 degrees: cosines 0.423, 0.574, 0.707 (class 0) and 0.906, 0.819 (class 1).
    test = np.array([[math.cos(math.radians(65)), math.sin(math.radians(65))]]) * 3.0  # norm is irrelevant
    # k = 3: neighbours 90 (1), 100 (1), 20 (0): class 1 wins by count and weight.
    assert knn_predict(train, labels, test, k=3, temperature=0.1)[0] == 1
    # k = 5: weights exp(cos / T). At T = 1 class 0 (three votes, 1.53 + 1.77 + 2.03 = 5.33)
    # beats class 1 (2.47 + 2.27 = 4.74); at T = 0.1 class 1 wins (8631 + 3610 = 12241
    # against 68.5 + 309.7 + 1177.4 = 1556).
    cos = np.cos(np.radians([65, 55, 45, 25, 35]))
    assert np.exp(cos[:3]).sum() > np.exp(cos[3:]).sum()
    assert knn_predict(train, labels, test, k=5, temperature=1.0)[0] == 0
    assert knn_predict(train, labels, test, k=5, temperature=0.1)[0] == 1
    assert knn_accuracy(train, labels, np.concatenate([test, test]), [1, 0], k=5, temperature=0.1) == 0.5


def test_cosine_not_euclidean_and_chunking_agree():
    rng = np.random.default_rng(0)
    train = rng.normal(size=(300, 8)) * rng.uniform(0.1, 10, size=(300, 1))  # random norms
    labels = rng.integers(0, 4, 300)
    test = rng.normal(size=(50, 8))
    full = knn_predict(train, labels, test, k=20, batch_size=1024)
    chunked = knn_predict(train, labels, test, k=20, batch_size=7)
    np.testing.assert_array_equal(full, chunked)
    rescaled = knn_predict(train * 5.0, labels, test * 0.01, k=20)  # scale-free: cosine similarity
    np.testing.assert_array_equal(full, rescaled)


def test_separable_clusters_are_classified_perfectly():
    rng = np.random.default_rng(1)
    centres = np.eye(3, 16) * 5
    train_labels = np.repeat(np.arange(3), 100)
    test_labels = np.repeat(np.arange(3), 20)
    train = centres[train_labels] + rng.normal(size=(300, 16))
    test = centres[test_labels] + rng.normal(size=(60, 16))
    assert knn_accuracy(train, train_labels, test, test_labels, k=200) == 1.0


def test_bad_arguments_name_the_value():
    train, labels = np.ones((5, 2)), np.zeros(5)
    with pytest.raises(ValueError, match=r"k must be an int in \[1, 5\].*got 200"):
        knn_predict(train, labels, train, k=200)
    with pytest.raises(ValueError, match="temperature must be > 0"):
        knn_predict(train, labels, train, k=2, temperature=0)
    with pytest.raises(ValueError, match="5 train features but 4 train labels"):
        knn_predict(train, labels[:4], train, k=2)
