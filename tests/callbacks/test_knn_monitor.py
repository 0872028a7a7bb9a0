"""KNNMonitor logs the kNN accuracy of an encoder each epoch."""

import numpy as np
import pytest

import keras

from keras_paperzoo.callbacks.knn_monitor import KNNMonitor


def _clusters(n, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n)
    return (np.eye(3, 6)[labels] * 3 + rng.normal(size=(n, 6))).astype("float32"), labels


def test_knn_acc_is_logged_in_history_every_n_epochs():
    inputs = keras.Input((6,))
    model = keras.Model(inputs, keras.layers.Dense(1)(inputs))
    model.compile("sgd", "mse")
    train, test = _clusters(120, 0), _clusters(60, 1)
    # Identity features: the clusters are separable, so kNN is near perfect.
    identity = keras.Model(inputs, inputs)
    monitor = KNNMonitor(train, test, encoder=identity, k=20, every=2)
    history = model.fit(train[0], np.zeros(120), epochs=4, verbose=0, callbacks=[monitor])
    assert [epoch for epoch, _ in monitor.history] == [1, 3]
    assert monitor.history[0][1] >= 0.95
    # Keras's History keeps only keys present at every epoch when the first epoch lacks them;
    # with every=1 the metric is there each epoch.
    every = KNNMonitor(train, test, encoder=lambda m: identity, k=20)
    history = model.fit(train[0], np.zeros(120), epochs=2, verbose=0, callbacks=[every])
    assert len(history.history["knn_acc"]) == 2 and history.history["knn_acc"][0] >= 0.95


def test_model_without_encoder_needs_one():
    inputs = keras.Input((6,))
    model = keras.Model(inputs, keras.layers.Dense(1)(inputs))
    model.compile("sgd", "mse")
    train = _clusters(30, 0)
    with pytest.raises(ValueError, match="has no `encoder`; pass encoder="):
        model.fit(train[0], np.zeros(30), epochs=1, verbose=0, callbacks=[KNNMonitor(train, train, k=5)])
    with pytest.raises(ValueError, match="every must be an int >= 1"):
        KNNMonitor(train, train, every=0)
