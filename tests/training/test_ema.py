import numpy as np
import pytest

import keras

from keras_paperzoo.training import ema_update


def test_ema_formula_matches_to_1e6():
    rng = np.random.default_rng(0)
    source = keras.layers.Dense(5)
    target = keras.layers.Dense(5)
    source.build((None, 3))
    target.build((None, 3))
    s0 = [w.numpy().copy() for w in source.weights]
    t0 = [w.numpy().copy() for w in target.weights]
    for w in source.weights:
        w.assign(rng.normal(size=w.shape).astype("float32"))
    s0 = [w.numpy().copy() for w in source.weights]
    ema_update(target.weights, source.weights, 0.999)
    for t, a, b in zip(target.weights, t0, s0):
        np.testing.assert_allclose(t.numpy(), 0.999 * a + 0.001 * b, atol=1e-6)
    ema_update(target.weights, source.weights, 0.0)  # m = 0 copies
    for t, b in zip(target.weights, s0):
        np.testing.assert_allclose(t.numpy(), b, atol=1e-7)


def test_ema_errors():
    a, b = keras.Variable(np.zeros(3)), keras.Variable(np.zeros(4))
    with pytest.raises(ValueError, match="shape"):
        ema_update([a], [b], 0.9)
    with pytest.raises(ValueError, match="momentum"):
        ema_update([a], [a], 1.5)
    with pytest.raises(ValueError, match="as many"):
        ema_update([a], [], 0.9)
