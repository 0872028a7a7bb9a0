"""BEiT's relative position bias: the table, the gathered (heads, T, T) bias, and attention with it."""

import numpy as np
import pytest

from keras import ops

from keras_paperzoo.layers.relative_position_bias import RelativePositionBias, RelativePositionBiasAttention
from tests.model_checks import check_config_roundtrip

GRID, HEADS = (3, 2), 2


def np_(x):
    return np.asarray(ops.convert_to_numpy(x))


def numpy_bias(table, grid):
    """B[h, i, j] built from the coordinates: rows 0 cls->cls, 1 cls->patch, 2 patch->cls, then 2-D offsets."""
    h, w = grid
    t = 1 + h * w
    bias = np.zeros((table.shape[1], t, t), table.dtype)
    for i in range(t):
        for j in range(t):
            if i == 0 and j == 0:
                row = 0
            elif i == 0:
                row = 1
            elif j == 0:
                row = 2
            else:
                (ri, ci), (rj, cj) = divmod(i - 1, w), divmod(j - 1, w)
                row = 3 + (ri - rj + h - 1) * (2 * w - 1) + (ci - cj + w - 1)
            bias[:, i, j] = table[row]
    return bias


def test_table_shape_zero_init_and_gathered_bias():
    layer = RelativePositionBias(GRID, HEADS)
    layer.build()
    assert tuple(layer.table.shape) == ((2 * 3 - 1) * (2 * 2 - 1) + 3, HEADS)  # 18 rows
    assert not np_(layer.table).any()  # the official code's zeros
    table = np.random.default_rng(0).normal(size=(18, HEADS)).astype("float32")
    layer.table.assign(table)
    np.testing.assert_array_equal(np_(layer.bias()), numpy_bias(table, GRID))
    logits = np.random.default_rng(1).normal(size=(2, HEADS, 7, 7)).astype("float32")
    np.testing.assert_allclose(np_(layer(logits)), logits + numpy_bias(table, GRID)[None], rtol=1e-6)


def test_bias_is_added_to_the_attention_logits():
    rng = np.random.default_rng(2)
    d, key_dim = 8, 4
    attention = RelativePositionBiasAttention(num_heads=HEADS, key_dim=key_dim, grid_size=GRID)
    x = rng.normal(size=(2, 7, d)).astype("float32")
    attention(x, x)
    table = rng.normal(size=(18, HEADS)).astype("float32")
    attention.relative_position_bias.table.assign(table)
    out, scores = attention(x, x, return_attention_scores=True)
    w = {v.path.split("/")[-2] + "/" + v.name: np_(v) for v in attention.weights}
    q = np.einsum("btd,dhk->bthk", x, w["query/kernel"]) + w["query/bias"]
    k = np.einsum("btd,dhk->bthk", x, w["key/kernel"]) + w["key/bias"]
    v = np.einsum("btd,dhk->bthk", x, w["value/kernel"]) + w["value/bias"]
    logits = np.einsum("bthk,bshk->bhts", q, k) / np.sqrt(key_dim) + numpy_bias(table, GRID)[None]
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    expected = np.einsum("bhts,bshk->bthk", probs, v)
    expected = np.einsum("bthk,hkd->btd", expected, w["attention_output/kernel"]) + w["attention_output/bias"]
    np.testing.assert_allclose(np_(scores), probs, atol=1e-5)
    np.testing.assert_allclose(np_(out), expected, atol=1e-4)
    attention.relative_position_bias.table.assign(np.zeros_like(table))
    assert np.abs(np_(attention(x, x)) - expected).max() > 1e-3  # the bias changed the output


def test_wrong_sequence_length_and_config():
    attention = RelativePositionBiasAttention(num_heads=HEADS, key_dim=4, grid_size=GRID)
    x = np.zeros((1, 6, 8), "float32")  # 6 tokens, the grid needs 1 + 6 = 7
    with pytest.raises(ValueError, match="Sequence length 6"):
        attention(x, x)
    with pytest.raises(ValueError, match="num_heads"):
        RelativePositionBias(GRID, 0)
    clone = check_config_roundtrip(RelativePositionBiasAttention(num_heads=HEADS, key_dim=4, grid_size=GRID))
    assert clone.grid_size == GRID and clone.num_prefix_tokens == 1
    assert check_config_roundtrip(RelativePositionBias(GRID, HEADS)).num_embeddings == 18
