"""Linear probe on frozen features (MoCo's protocol; MAE's batch-norm variant)."""

import numpy as np
import pytest

import keras

from keras_paperzoo.evaluation.features import extract_features
from keras_paperzoo.evaluation.linear_probe import build_probe_head, linear_probe


def _separable(n, seed):
    # Four classes, linearly separable (one-vs-rest margins), but not by any one raw feature.
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 4, n)
    directions = np.array([[1, 1, 0, 0], [1, -1, 0, 0], [-1, 0, 1, 0], [0, 0, -1, 1]], "float32")
    x = directions[labels] + 0.15 * rng.normal(size=(n, 4))
    return x.astype("float32"), labels.astype("int32")


def _encoder():
    # A fixed random linear map with batch norm: the probe must leave it untouched.
    inputs = keras.Input((4,))
    x = keras.layers.Dense(16, kernel_initializer=keras.initializers.Orthogonal(seed=0), name="proj")(inputs)
    x = keras.layers.BatchNormalization(name="bn")(x)
    return keras.Model(inputs, x)


def test_paper_defaults_reach_high_accuracy_and_leave_the_encoder_frozen():
    encoder = _encoder()
    before = [keras.ops.convert_to_numpy(w).copy() for w in encoder.weights]
    result = linear_probe(encoder, _separable(512, 0), _separable(256, 1), epochs=10, batch_size=64)
    assert result["accuracy"] >= 0.97 and result["train_accuracy"] >= 0.97
    # Encoder weights and batch-norm statistics are unchanged (inference mode, no gradient).
    for a, b in zip(before, encoder.weights):
        np.testing.assert_array_equal(a, keras.ops.convert_to_numpy(b))
    # MoCo's optimizer: SGD lr 30, momentum 0.9, no weight decay, /10 at 60 % and 80 % of the run.
    optimizer = result["head"].optimizer
    assert optimizer.momentum == pytest.approx(0.9) and optimizer.l2 == 0.0
    assert float(keras.ops.convert_to_numpy(optimizer.learning_rate)) == pytest.approx(0.3)  # 30 / 100
    assert optimizer._learning_rate.boundaries == [48, 64]  # 8 steps x 10 epochs
    # The classifier chains encoder and head on images.
    x, y = _separable(32, 2)
    logits = result["classifier"].predict(x, verbose=0)
    np.testing.assert_allclose(logits, result["head"].predict(encoder.predict(x, verbose=0), verbose=0), atol=1e-4)


def test_mae_batch_norm_without_affine_and_weight_init():
    head = build_probe_head(6, 3, batch_norm=True, seed=0)
    bn = head.get_layer("probe_bn")
    assert not bn.center and not bn.scale and bn.epsilon == 1e-6
    assert len(bn.trainable_weights) == 0
    kernel = keras.ops.convert_to_numpy(head.get_layer("probe_fc").kernel)
    assert abs(kernel.std() - 0.01) < 0.005 and np.all(keras.ops.convert_to_numpy(head.get_layer("probe_fc").bias) == 0)
    result = linear_probe(_encoder(), _separable(512, 0), _separable(256, 1), epochs=5, batch_size=64,
                          learning_rate=0.1, batch_norm=True)
    assert result["accuracy"] >= 0.97


def test_features_from_batches_pool_maps_and_errors():
    inputs = keras.Input((4, 4, 2))
    encoder = keras.Model(inputs, keras.layers.Conv2D(3, 1, use_bias=False)(inputs))
    x = np.random.default_rng(0).random((10, 4, 4, 2)).astype("float32")
    y = np.arange(10)
    from_arrays, labels = extract_features(encoder, (x, y), batch_size=3)
    from_batches, labels2 = extract_features(encoder, [(x[:6], y[:6]), (x[6:], y[6:, None])])
    np.testing.assert_allclose(from_arrays, from_batches, atol=1e-6)
    np.testing.assert_array_equal(labels, labels2)
    kernel = keras.ops.convert_to_numpy(encoder.layers[-1].kernel)[0, 0]  # (2, 3): pooling commutes
    np.testing.assert_allclose(from_arrays, x.mean(axis=(1, 2)) @ kernel, atol=1e-5)
    with pytest.raises(ValueError, match="epochs must be an int >= 1"):
        linear_probe(encoder, (x, y), (x, y), epochs=0)
