"""RandomMasking: MAE's per-sample uniform masking, the same masks on every backend."""

import math

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.layers.random_masking import RandomMasking, num_visible_tokens
from tests.model_checks import check_config_roundtrip


def np_(x):
    return np.asarray(ops.convert_to_numpy(x))


# --- a NumPy reference of the layer's keys (uint32 arithmetic) ---------------------------


def _fmix32(x):
    x = np.asarray(x, dtype=np.uint32)
    x = x ^ (x >> np.uint32(16))
    x = x * np.uint32(0x85EBCA6B)
    x = x ^ (x >> np.uint32(13))
    x = x * np.uint32(0xC2B2AE35)
    return x ^ (x >> np.uint32(16))


def reference_masks(seed, draw, batch, num_tokens, mask_ratio):
    """(mask, ids_restore) of the `draw`-th call (0-based) of RandomMasking(seed=seed)."""
    with np.errstate(over="ignore"):
        stream = _fmix32(_fmix32(np.uint32(seed)) ^ _fmix32(np.uint32(draw) + np.uint32(0x9E3779B9)))
        hashed = _fmix32(np.arange(batch * num_tokens, dtype=np.uint32).reshape(batch, num_tokens) + stream)
    bits = max(1, math.ceil(math.log2(num_tokens)))
    keys = (hashed & np.uint32((0xFFFFFFFF << bits) & 0xFFFFFFFF)) | np.arange(num_tokens, dtype=np.uint32)
    keys = keys.view(np.int32)  # the layer sorts signed int32 keys
    ids_shuffle = np.argsort(keys, axis=1, kind="stable")
    ids_restore = np.argsort(ids_shuffle, axis=1, kind="stable")
    keep = num_visible_tokens(num_tokens, mask_ratio)
    mask = (np.take_along_axis(np.arange(num_tokens)[None, :].repeat(batch, 0), ids_restore, 1) >= keep)
    return mask.astype("float32"), ids_restore


# The masks of RandomMasking(0.75, seed=0) on (2, 16, D) tokens, first and second call,
# generated once; every backend must give exactly these.
EXPECTED_SEED0 = [
    np.array(
        [[1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 0],
         [0, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 1, 1]], dtype="float32"),
    np.array(
        [[1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0],
         [1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1]], dtype="float32"),
]


def _index_tokens(batch, num_tokens, dim=3):
    """tokens[b, n, :] = 100 b + n, so a token says where it came from."""
    values = 100.0 * np.arange(batch)[:, None] + np.arange(num_tokens)[None, :]
    return np.repeat(values[:, :, None], dim, axis=2).astype("float32")


# --- counts and rounding -----------------------------------------------------------------


@pytest.mark.parametrize("num_tokens, ratio, keep", [(196, 0.75, 49), (16, 0.75, 4), (16, 0.5, 8),
                                                     (10, 0.9, 1), (10, 0.75, 3), (49, 0.75, 12)])
def test_exactly_round_n_times_one_minus_ratio_visible_per_sample(num_tokens, ratio, keep):
    # (10, 0.9): int(10 * (1 - 0.9)) would be 0 by float error; rounding keeps 1.
    # (10, 0.75): 2.5 rounds up to 3.
    assert num_visible_tokens(num_tokens, ratio) == keep
    layer = RandomMasking(ratio, seed=1)
    visible, mask, ids_restore = layer(_index_tokens(5, num_tokens), training=True)
    assert tuple(visible.shape) == (5, keep, 3)
    assert tuple(mask.shape) == (5, num_tokens) and tuple(ids_restore.shape) == (5, num_tokens)
    np.testing.assert_array_equal(np_(mask).sum(axis=1), num_tokens - keep)
    assert set(np.unique(np_(mask))) <= {0.0, 1.0}


def test_visible_tokens_are_the_unmasked_ones_and_unshuffle_restores_patch_order():
    batch, n = 4, 16
    tokens = _index_tokens(batch, n)
    visible, mask, ids_restore = (np_(t) for t in RandomMasking(0.75, seed=3)(tokens, training=True))
    for b in range(batch):
        kept = visible[b, :, 0] - 100 * b  # the patch index each visible token came from
        np.testing.assert_array_equal(np.sort(kept), np.flatnonzero(mask[b] == 0))
        assert len(set(kept.tolist())) == len(kept)  # without replacement
    # The decoder's un-shuffle: visible tokens then mask tokens (-1), gathered by ids_restore.
    shuffled = np.concatenate([visible, -np.ones((batch, n - visible.shape[1], 3), "float32")], axis=1)
    restored = np_(ops.take_along_axis(ops.convert_to_tensor(shuffled), ids_restore[:, :, None], axis=1))
    expected = np.where(mask[:, :, None] == 0, tokens, -1.0)
    np.testing.assert_array_equal(restored, expected)
    # ids_restore is a permutation per row.
    np.testing.assert_array_equal(np.sort(ids_restore, axis=1), np.tile(np.arange(n), (batch, 1)))


# --- the same seed, the same masks, on every backend ---------------------------------------


def test_same_seed_gives_the_stored_masks_on_every_backend():
    layer = RandomMasking(0.75, seed=0)
    tokens = _index_tokens(2, 16)
    for draw in range(2):
        _, mask, ids_restore = layer(tokens, training=True)
        np.testing.assert_array_equal(np_(mask), EXPECTED_SEED0[draw])
        ref_mask, ref_restore = reference_masks(0, draw, 2, 16, 0.75)
        np.testing.assert_array_equal(np_(mask), ref_mask)
        np.testing.assert_array_equal(np_(ids_restore), ref_restore)


@pytest.mark.parametrize("seed", [1, 12345, 2**31 - 1])
def test_masks_match_the_numpy_reference_for_other_seeds_and_shapes(seed):
    layer = RandomMasking(0.6, seed=seed)
    tokens = _index_tokens(3, 49)
    for draw in range(3):
        _, mask, ids_restore = layer(tokens, training=True)
        ref_mask, ref_restore = reference_masks(seed, draw, 3, 49, 0.6)
        np.testing.assert_array_equal(np_(mask), ref_mask)
        np.testing.assert_array_equal(np_(ids_restore), ref_restore)


class AlwaysMask(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.masking = RandomMasking(0.75, seed=0)

    def call(self, tokens):
        return self.masking(tokens, training=True)[1]


def test_masks_are_the_same_inside_compiled_functions():
    # predict runs under jax.jit / tf.function (XLA where the backend compiles): wrapping
    # int32 arithmetic must agree with NumPy's uint32 there too.
    model = AlwaysMask(name="always_mask")
    mask = model.predict(_index_tokens(2, 16), batch_size=2, verbose=0)
    np.testing.assert_array_equal(mask, EXPECTED_SEED0[0])


def test_each_position_is_masked_with_probability_mask_ratio():
    layer = RandomMasking(0.75, seed=5)
    mask = np_(layer(np.zeros((4000, 16, 1), "float32"), training=True)[1])
    frequency = mask.mean(axis=0)
    np.testing.assert_allclose(frequency, 0.75, atol=0.03)  # 4 sigma at n = 4000
    # Pairs of positions are masked together as often as sampling without replacement says:
    # P(both masked) = (12/16)(11/15) = 0.55.
    both = (mask[:, :, None] * mask[:, None, :]).mean(axis=0)[~np.eye(16, dtype=bool)]
    np.testing.assert_allclose(both, 12 / 16 * 11 / 15, atol=0.035)
    # All C(16, 4) = 1820 masks equally likely: 4000 draws hit 1820 (1 - (1 - 1/1820)^4000)
    # = 1618 distinct ones on average (standard deviation about 12).
    assert abs(len({row.tobytes() for row in mask}) - 1618) < 50


def test_noise_argument_keeps_the_smallest_keys():
    noise = np.random.default_rng(0).random((3, 16)).astype("float32")
    _, mask, _ = RandomMasking(0.75, seed=0)(_index_tokens(3, 16), training=True, noise=noise)
    expected = np.ones((3, 16), "float32")
    np.put_along_axis(expected, np.argsort(noise, axis=1)[:, :4], 0.0, axis=1)
    np.testing.assert_array_equal(np_(mask), expected)


# --- masking off at inference ------------------------------------------------------------


@pytest.mark.parametrize("training", [False, None])
def test_masking_is_off_at_inference(training):
    tokens = _index_tokens(2, 16)
    visible, mask, ids_restore = RandomMasking(0.75, seed=0)(tokens, training=training)
    np.testing.assert_array_equal(np_(visible), tokens)
    np.testing.assert_array_equal(np_(mask), np.zeros((2, 16)))
    np.testing.assert_array_equal(np_(ids_restore), np.tile(np.arange(16), (2, 1)))


# --- config and errors -------------------------------------------------------------------


def test_config_roundtrip_keeps_ratio_and_seed_and_thus_the_masks():
    layer = RandomMasking(0.6, seed=9)
    clone = check_config_roundtrip(layer)
    assert clone.mask_ratio == 0.6 and clone.seed == 9
    a = np_(layer(_index_tokens(2, 16), training=True)[1])
    b = np_(clone(_index_tokens(2, 16), training=True)[1])
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("ratio", [0, 0.0, 1.0, 1.5, -0.1, True, "0.5", None])
def test_mask_ratio_outside_the_open_unit_interval_is_refused(ratio):
    with pytest.raises(ValueError, match=r"mask_ratio must be a number in \(0, 1\)"):
        RandomMasking(ratio)


def test_a_ratio_that_keeps_no_token_or_every_token_is_refused():
    with pytest.raises(ValueError, match=r"keeps 0 visible .* at least one token must stay visible"):
        RandomMasking(0.9)(np.zeros((1, 4, 2), "float32"), training=True)
    with pytest.raises(ValueError, match=r"keeps 4 visible"):
        RandomMasking(0.1)(np.zeros((1, 4, 2), "float32"), training=True)


@pytest.mark.parametrize("seed", [-1, 2**31, 1.5, True])
def test_bad_seed_is_refused(seed):
    with pytest.raises(ValueError, match=r"seed must be None or an int in \[0, 2\*\*31\)"):
        RandomMasking(0.75, seed=seed)


def test_tokens_must_be_batch_tokens_dim():
    with pytest.raises(ValueError, match="expects \\(batch, tokens, dim\\)"):
        RandomMasking(0.75)(np.zeros((2, 16), "float32"), training=True)
