"""MAE's masked-patch MSE and per-patch normalised targets."""

import numpy as np
import pytest

from keras import ops

from keras_paperzoo.losses.masked_reconstruction import masked_patch_mse, normalized_patch_targets

RNG = np.random.default_rng(0)


def np_(x):
    return np.asarray(ops.convert_to_numpy(x))


def test_normalized_targets_use_each_patch_mean_and_unbiased_variance():
    patches = RNG.random((2, 5, 12)).astype("float32") * 3 + 1
    expected = (patches - patches.mean(-1, keepdims=True)) / np.sqrt(patches.var(-1, ddof=1, keepdims=True) + 1e-6)
    out = np_(normalized_patch_targets(patches))
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out.mean(-1), 0.0, atol=1e-5)
    np.testing.assert_allclose(out.std(-1, ddof=1), 1.0, atol=1e-4)


def test_constant_patches_normalise_to_zero_not_nan():
    np.testing.assert_array_equal(np_(normalized_patch_targets(np.full((1, 2, 4), 0.7, "float32"))), 0.0)


def test_one_value_patches_are_refused():
    with pytest.raises(ValueError, match="at least 2 values per patch; got 1"):
        normalized_patch_targets(np.zeros((1, 2, 1), "float32"))


def test_loss_is_the_mean_over_masked_patches_only():
    pred = RNG.normal(size=(2, 6, 4)).astype("float32")
    target = RNG.normal(size=(2, 6, 4)).astype("float32")
    mask = np.array([[1, 0, 0, 1, 1, 0], [0, 0, 1, 0, 0, 0]], "float32")
    per_patch = ((pred - target) ** 2).mean(-1)
    expected = (per_patch * mask).sum() / mask.sum()
    assert float(np_(masked_patch_mse(pred, target, mask))) == pytest.approx(expected, rel=1e-6)
    visible_changed = np.where(mask[..., None] == 0, pred + 100.0, pred)
    assert float(np_(masked_patch_mse(visible_changed, target, mask))) == pytest.approx(expected, rel=1e-6)
    masked_changed = pred.copy()
    masked_changed[1, 2] += 1.0
    assert float(np_(masked_patch_mse(masked_changed, target, mask))) != pytest.approx(expected, rel=1e-3)


def test_nothing_masked_gives_zero():
    assert float(np_(masked_patch_mse(np.ones((1, 3, 2), "float32"), np.zeros((1, 3, 2), "float32"),
                                      np.zeros((1, 3), "float32")))) == 0.0
