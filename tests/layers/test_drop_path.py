"""DropPath (stochastic depth): identity at inference, per-sample 0 or 1/(1-r) in training, mean kept."""

import numpy as np
import pytest

from keras import ops

from keras_paperzoo.layers.drop_path import DropPath
from tests.model_checks import check_config_roundtrip


def test_identity_at_inference():
    x = np.random.default_rng(0).normal(size=(8, 5, 3)).astype("float32")
    layer = DropPath(0.5, seed=0)
    for training in (False, None):
        np.testing.assert_array_equal(ops.convert_to_numpy(layer(x, training=training)), x)
    np.testing.assert_array_equal(ops.convert_to_numpy(DropPath(0.0)(x, training=True)), x)


def test_training_drops_whole_samples_and_keeps_the_mean():
    rate, batch = 0.3, 4000
    layer = DropPath(rate, seed=3)
    out = ops.convert_to_numpy(layer(np.ones((batch, 4, 2), "float32"), training=True))
    per_sample = out.reshape(batch, -1)
    assert np.all(per_sample == per_sample[:, :1])  # one draw per sample, shared by its other axes
    values = per_sample[:, 0]
    np.testing.assert_allclose(np.unique(values), [0.0, 1.0 / (1.0 - rate)], rtol=1e-6)
    assert abs((values == 0).mean() - rate) < 0.03  # 4,000 draws: std 0.0072
    assert abs(values.mean() - 1.0) < 0.05  # E[x * keep / (1 - r)] = x; std of the mean 0.010
    again = ops.convert_to_numpy(DropPath(rate, seed=3)(np.ones((batch, 4, 2), "float32"), training=True))
    np.testing.assert_array_equal(again, out)  # seeded
    second = ops.convert_to_numpy(layer(np.ones((batch, 4, 2), "float32"), training=True))
    assert (second != out).any()  # the seed generator advances


def test_bad_rate_and_config():
    for rate in (-0.1, 1.0, True):
        with pytest.raises(ValueError, match="rate"):
            DropPath(rate)
    clone = check_config_roundtrip(DropPath(0.2, seed=1))
    assert clone.rate == 0.2 and clone.seed == 1
