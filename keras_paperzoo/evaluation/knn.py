"""Weighted k-nearest-neighbour classification of features: the kNN monitor of InstDisc.

Wu et al. 2018 ("Unsupervised Feature Learning via Non-Parametric Instance
Discrimination", Sec. 3.4) classify a test image by its k nearest training
features under cosine similarity s_i, each neighbour voting for its class with
weight exp(s_i / T):

    score(c) = sum_{i in top-k} exp(s_i / T) [y_i = c],    prediction = argmax_c score(c)

with k = 200. T = 0.07 in InstDisc; the MoCo authors' CIFAR demo (and most
self-supervised code since) uses T = 0.1, the default here. Ties between classes
go to the smallest class index.

Example:

```python
accuracy = knn_accuracy(train_features, train_labels, test_features, test_labels)
```
"""

import keras
import numpy as np


def _normalize(features):
    features = np.asarray(features, "float32")
    if features.ndim != 2:
        raise ValueError(f"features should be (N, D); got shape {features.shape}.")
    return features / np.maximum(np.linalg.norm(features, axis=1, keepdims=True), 1e-12)


def knn_predict(train_features, train_labels, test_features, k=200, temperature=0.1, num_classes=None,
                batch_size=1024, verbose=0):
    """Predicted class (N_test,) of each test feature by the weighted vote above (verbose=1: a progress bar)."""
    train = _normalize(train_features)  # (N, D)
    test = _normalize(test_features)  # (M, D)
    labels = np.asarray(train_labels).reshape(-1).astype("int64")
    if len(labels) != len(train):
        raise ValueError(f"{len(train)} train features but {len(labels)} train labels.")
    if train.shape[1] != test.shape[1]:
        raise ValueError(f"train features have {train.shape[1]} dimensions, test features {test.shape[1]}.")
    if not isinstance(k, int) or not 1 <= k <= len(train):
        raise ValueError(f"k must be an int in [1, {len(train)}] (the number of train features); got {k!r}.")
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0; got {temperature}.")
    if labels.min() < 0:
        raise ValueError(f"train labels must be class indices >= 0; got {labels.min()}.")
    num_classes = int(num_classes or labels.max() + 1)
    predictions = []
    progress = keras.utils.Progbar(len(test), verbose=verbose, unit_name="image")
    for start in range(0, len(test), batch_size):
        similarity = test[start : start + batch_size] @ train.T  # (m, N) cosine similarities
        nearest = np.argpartition(-similarity, k - 1, axis=1)[:, :k]  # (m, k), any order
        weights = np.exp(np.take_along_axis(similarity, nearest, axis=1) / temperature)  # (m, k)
        votes = np.zeros((len(nearest), num_classes), "float64")
        np.add.at(votes, (np.arange(len(nearest))[:, None], labels[nearest]), weights)  # (m, classes)
        predictions.append(votes.argmax(axis=1))
        progress.add(len(nearest))
    return np.concatenate(predictions) if predictions else np.zeros((0,), "int64")


def knn_accuracy(train_features, train_labels, test_features, test_labels, k=200, temperature=0.1,
                 num_classes=None, batch_size=1024, verbose=0):
    """Top-1 accuracy in [0, 1] of the weighted kNN classifier (InstDisc protocol).

    Args:
        train_features: (N, D) features of the labelled bank (the training set).
        train_labels: (N,) class indices.
        test_features: (M, D). test_labels: (M,).
        k: neighbours (200).
        temperature: T of the exp(s / T) weights (0.1).
        num_classes: default max label + 1.
        verbose: 1 shows a progress bar over the test features.
    """
    test_labels = np.asarray(test_labels).reshape(-1)
    predictions = knn_predict(train_features, train_labels, test_features, k, temperature, num_classes, batch_size,
                              verbose)
    if len(predictions) != len(test_labels):
        raise ValueError(f"{len(predictions)} test features but {len(test_labels)} test labels.")
    return float(np.mean(predictions == test_labels))
