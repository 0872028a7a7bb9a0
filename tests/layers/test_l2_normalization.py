import numpy as np
import pytest

import keras

from keras_paperzoo.layers import L2Normalization
from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model


def test_l2_normalization_divides_by_the_norm_and_leaves_zero_at_zero():
    x = np.array([[3.0, 4.0], [0.0, 0.0], [1e-3, 0.0]], "float32")
    y = keras.ops.convert_to_numpy(L2Normalization()(x))
    np.testing.assert_allclose(y, [[0.6, 0.8], [0.0, 0.0], [1.0, 0.0]], rtol=1e-6)
    y = keras.ops.convert_to_numpy(L2Normalization(axis=0)(x))
    np.testing.assert_allclose(np.linalg.norm(y, axis=0), [1.0, 1.0], rtol=1e-6)


def test_float16_inputs_keep_a_zero_vector_at_zero():
    # Under mixed precision the layer computes in float16, where epsilon^2 = 1e-24 is 0 (rsqrt(0) = inf).
    x = np.array([[0.0, 0.0], [3.0, 4.0]], "float16")
    y = L2Normalization(dtype="mixed_float16")(x)
    assert keras.backend.standardize_dtype(y.dtype) == "float16"
    np.testing.assert_allclose(keras.ops.convert_to_numpy(y).astype("float32"), [[0.0, 0.0], [0.6, 0.8]], atol=1e-3)


def test_a_zero_feature_vector_keeps_the_weights_finite():
    # A zero-initialised projection gives z = 0 for every sample. keras.layers.UnitNormalization's
    # gradient there is 0 * inf = NaN on JAX (MoCo's head turned NaN in CI); PyTorch's normalize is finite.
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, kernel_initializer="zeros"), L2Normalization()])
    model.compile(optimizer=keras.optimizers.SGD(1e-13), loss="mse")
    x = np.random.default_rng(0).normal(size=(8, 3)).astype("float32")
    target = np.full((8, 4), 0.5, "float32")
    model.fit(x, target, batch_size=8, epochs=1, verbose=0)
    kernel, bias = (keras.ops.convert_to_numpy(w) for w in model.layers[0].weights)
    assert np.isfinite(kernel).all() and np.isfinite(bias).all()
    # d mse / d y = 2 (0 - 0.5) / (8 x 4) per entry; d y / d z = 1 / epsilon at z = 0 (as PyTorch);
    # the bias sums 8 rows: -0.25 x 1e12, times lr 1e-13 -> +0.025.
    np.testing.assert_allclose(bias, np.full(4, 0.025), rtol=1e-4)


def test_l2_normalization_config_save_fit_and_errors(tmp_path):
    check_config_roundtrip(L2Normalization(axis=1, epsilon=1e-6, name="n"))
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), L2Normalization()])
    model.compile("sgd", "mse")
    x = np.random.default_rng(0).normal(size=(16, 4)).astype("float32")
    check_fit(model, x, x[:, :3], batch_size=8)
    check_saved_model(model, x, tmp_path)
    with pytest.raises(ValueError, match=r"epsilon must be a number in \[1e-18, 1\); got 0"):
        L2Normalization(epsilon=0)
    with pytest.raises(ValueError, match="got 'tiny'"):
        L2Normalization(epsilon="tiny")
    with pytest.raises(ValueError, match="axis must be an int; got 'last'"):
        L2Normalization(axis="last")
