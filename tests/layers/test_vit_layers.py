"""Patch embedding, position embeddings (1-D, 2-D, relative, resizing) and the Transformer block."""

import math

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.layers.patch_embedding import ClassToken, PatchEmbedding, patchify, unpatchify
from keras_paperzoo.layers.position_embedding import (
    FactorizedPositionEmbedding2D,
    LearnedPositionEmbedding,
    RelativePositionMultiHeadAttention,
    interpolation_matrix,
    relative_position_index,
    resize_embeddings_1d,
    resize_position_embeddings,
)
from keras_paperzoo.layers.transformer_block import AttentionGlorotUniform, TransformerBlock
from tests.model_checks import check_config_roundtrip


def np_(x):
    return np.asarray(ops.convert_to_numpy(x))


RNG = np.random.default_rng(0)


# --- patches ---------------------------------------------------------------------------


def test_patch_embedding_is_linear_projection_of_flattened_patches():
    images = RNG.normal(size=(2, 16, 24, 3)).astype("float32")
    layer = PatchEmbedding(patch_size=(8, 4), hidden_dim=5)
    tokens = np_(layer(images))
    assert tokens.shape == (2, 2 * 6, 5) and layer.grid_size == (2, 6)
    kernel, bias = np_(layer.projection.kernel), np_(layer.projection.bias)
    expected = np_(patchify(images, (8, 4))) @ kernel.reshape(-1, 5) + bias
    np.testing.assert_allclose(tokens, expected, atol=1e-5)
    # Raster order: token 1 is the patch at row 0, column 1.
    np.testing.assert_allclose(np_(patchify(images, (8, 4)))[0, 1], images[0, 0:8, 4:8].reshape(-1), atol=0)
    np.testing.assert_array_equal(np_(unpatchify(patchify(images, (8, 4)), (8, 4), (2, 6), 3)), images)
    check_config_roundtrip(layer)


def test_patch_embedding_rejects_indivisible_images():
    with pytest.raises(ValueError, match="Input height 30 should be divisible by patch size 16"):
        PatchEmbedding(16, 8)(np.zeros((1, 30, 32, 3), "float32"))


def test_class_token_prepends_one_learned_vector():
    layer = ClassToken()
    out = np_(layer(np.ones((3, 4, 6), "float32")))
    assert out.shape == (3, 5, 6)
    np.testing.assert_array_equal(out[:, 0], 0.0)  # zero-initialised, as the official code
    np.testing.assert_array_equal(out[:, 1:], 1.0)
    assert tuple(layer.token.shape) == (1, 1, 6)
    check_config_roundtrip(layer)


# --- absolute position embeddings --------------------------------------------------------


def test_learned_position_embedding_adds_its_table():
    layer = LearnedPositionEmbedding()
    x = RNG.normal(size=(2, 17, 8)).astype("float32")
    out = np_(layer(x))
    np.testing.assert_allclose(out, x + np_(layer.embeddings)[None], atol=1e-6)
    assert 0.01 < np_(layer.embeddings).std() < 0.03  # N(0, 0.02^2)
    check_config_roundtrip(layer)


def test_factorized_2d_embedding_concatenates_x_and_y():
    layer = FactorizedPositionEmbedding2D(grid_size=(2, 3), num_prefix_tokens=1)
    x = np.zeros((1, 7, 8), "float32")
    table = np_(layer(x))[0]
    col, row = np_(layer.column_embeddings), np_(layer.row_embeddings)
    assert col.shape == (3, 4) and row.shape == (2, 4)
    np.testing.assert_array_equal(table[0], 0.0)  # the class token gets no position vector
    for r in range(2):
        for c in range(3):
            np.testing.assert_allclose(table[1 + r * 3 + c], np.concatenate([col[c], row[r]]), atol=0)
    assert layer.count_params() == (2 + 3) * 4
    with pytest.raises(ValueError, match="hidden_dim 7 should be even"):
        FactorizedPositionEmbedding2D(2)(np.zeros((1, 5, 7), "float32"))
    check_config_roundtrip(layer)


# --- relative position -----------------------------------------------------------------------


def test_relative_position_index_2d_shares_embeddings_by_offset():
    index, count = relative_position_index((2, 3), num_prefix_tokens=1, offsets="2d")
    assert index.shape == (7, 7) and count == 3 + 3 * 5
    assert index[0, 0] == 0 and set(index[0, 1:]) == {1} and set(index[1:, 0]) == {2}
    patches = [(r, c) for r in range(2) for c in range(3)]
    by_offset = {}
    for i, (rq, cq) in enumerate(patches):
        for j, (rk, ck) in enumerate(patches):
            by_offset.setdefault((rq - rk, cq - ck), set()).add(index[1 + i, 1 + j])
    assert all(len(v) == 1 for v in by_offset.values())  # one embedding per 2-D offset
    assert len(by_offset) == 3 * 5  # and a different one for each
    index_1d, count_1d = relative_position_index((2, 3), num_prefix_tokens=0, offsets="1d")
    assert count_1d == 2 * 6 - 1 and index_1d[0, 5] == 0 and index_1d[5, 0] == 10  # raster offsets n_q - n_k
    np.testing.assert_array_equal(np.diag(index_1d), 5)  # offset 0 is the middle entry


def test_relative_attention_is_plain_attention_plus_query_offset_logits():
    x = RNG.normal(size=(2, 5, 8)).astype("float32")  # class token + 2x2 grid
    rel = RelativePositionMultiHeadAttention(num_heads=2, key_dim=4, grid_size=2, num_prefix_tokens=1)
    plain = keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
    rel(x, x)
    plain(x, x)
    for name in ("query_dense", "key_dense", "value_dense", "output_dense"):
        for a, b in zip(getattr(plain, name).weights, getattr(rel, name).weights):
            b.assign(a)
    out, scores = rel(x, x, return_attention_scores=True)
    np.testing.assert_allclose(np_(ops.sum(scores, axis=-1)), 1.0, atol=1e-5)
    assert tuple(scores.shape) == (2, 2, 5, 5)
    # With a zero offset table it is exactly MultiHeadAttention.
    rel.relative_embeddings.assign(np.zeros(rel.relative_embeddings.shape, "float32"))
    np.testing.assert_allclose(np_(rel(x, x)), np_(plain(x, x)), atol=1e-5)
    # The extra logits: q_i^h . r^h_{offset(i, j)} / sqrt(d_h).
    table = RNG.normal(size=rel.relative_embeddings.shape).astype("float32")
    rel.relative_embeddings.assign(table)
    q = np_(rel.query_dense(x)) / math.sqrt(4)  # (B, T, H, d)
    index, _ = relative_position_index(2, 1, "2d")
    expected = np.einsum("bthd,tshd->bhts", q, table[index])
    np.testing.assert_allclose(np_(rel.relative_logits(ops.convert_to_tensor(q))), expected, atol=1e-5)
    assert not np.allclose(np_(rel(x, x)), np_(plain(x, x)), atol=1e-4)


# --- resizing ---------------------------------------------------------------------------------


def test_resize_to_the_same_grid_is_the_identity():
    table = RNG.normal(size=(1 + 16, 6)).astype("float32")
    np.testing.assert_array_equal(resize_position_embeddings(table, 4, 4), table)
    batched = table[None]
    np.testing.assert_array_equal(resize_position_embeddings(batched, (4, 4), (4, 4)), batched)


def test_resize_keeps_prefix_rows_and_changes_grid_rows():
    table = RNG.normal(size=(1 + 16, 6)).astype("float32")
    out = resize_position_embeddings(table, 4, (6, 5))
    assert out.shape == (1 + 30, 6)
    np.testing.assert_array_equal(out[0], table[0])
    with pytest.raises(ValueError, match="expected 1 prefix rows"):
        resize_position_embeddings(table, 5, 6)


@pytest.mark.parametrize("interpolation", ["bicubic", "bilinear"])
def test_resize_reproduces_a_linear_function_of_row_and_column(interpolation):
    # Half-pixel centres (timm, align_corners=False): new cell i sits at old coordinate
    # (i + 0.5) * old / new - 0.5; away from the borders a linear function is kept exactly.
    old, new = 6, 10
    r, c = np.meshgrid(np.arange(old), np.arange(old), indexing="ij")
    f = lambda rr, cc: np.stack([2.0 * rr - 3.0 * cc + 1.0, 0.5 * rr + cc], axis=-1)  # noqa: E731
    table = np.concatenate([np.full((1, 2), 7.0), f(r, c).reshape(-1, 2)]).astype("float64")
    out = resize_position_embeddings(table, old, new, interpolation=interpolation)[1:].reshape(new, new, 2)
    src = (np.arange(new) + 0.5) * old / new - 0.5
    rr, cc = np.meshgrid(src, src, indexing="ij")
    expected = f(rr, cc)
    lo, hi = (1, 2) if interpolation == "bicubic" else (0, 1)  # taps floor(src) - lo .. floor(src) + hi
    inner = [i for i in range(new) if np.floor(src[i]) - lo >= 0 and np.floor(src[i]) + hi <= old - 1]
    assert inner, "no interior points"
    np.testing.assert_allclose(out[np.ix_(inner, inner)], expected[np.ix_(inner, inner)], atol=1e-9)
    # Corner-to-corner bilinear (the official JAX code's scipy zoom) keeps it everywhere.
    exact = resize_position_embeddings(
        table, old, new, interpolation="bilinear", antialias=False, align_corners=True
    )[1:].reshape(new, new, 2)
    grid = np.linspace(0, old - 1, new)
    rr, cc = np.meshgrid(grid, grid, indexing="ij")
    np.testing.assert_allclose(exact, f(rr, cc), atol=1e-9)


def test_resize_matches_torch_interpolate():
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F

    for old, new in [((4, 4), (6, 6)), ((14, 14), (24, 24)), ((6, 5), (3, 4))]:
        grid = RNG.normal(size=(old[0], old[1], 3))
        table = np.concatenate([RNG.normal(size=(1, 3)), grid.reshape(-1, 3)])
        for interpolation in ("bicubic", "bilinear"):
            for antialias, align in ((True, False), (False, False), (False, True)):
                ours = resize_position_embeddings(table, old, new, 1, interpolation, antialias, align)[1:]
                ref = F.interpolate(
                    torch.tensor(grid).permute(2, 0, 1)[None], size=new, mode=interpolation,
                    antialias=antialias, align_corners=align,
                )[0].permute(1, 2, 0).reshape(-1, 3).numpy()
                np.testing.assert_allclose(ours, ref, atol=1e-10)
    col = RNG.normal(size=(4, 3))
    np.testing.assert_allclose(resize_embeddings_1d(col, 6), interpolation_matrix(4, 6) @ col, atol=1e-12)


# --- Transformer block -------------------------------------------------------------------------


def _layer_norm(x, eps):
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps)


def _erf_gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


@pytest.mark.parametrize("norm_first", [True, False])
def test_transformer_block_equations(norm_first):
    x = RNG.normal(size=(2, 5, 8)).astype("float32")
    block = TransformerBlock(num_heads=2, mlp_dim=16, norm_first=norm_first, dropout_rate=0.3)
    y, scores = block(x, return_attention_scores=True)
    y = np_(y)
    attend = lambda z: np_(block.attention(z, z))  # noqa: E731  (LayerNorms are (1, 0) at init)

    def mlp(z):
        h = _erf_gelu(z @ np_(block.mlp_dense_1.kernel) + np_(block.mlp_dense_1.bias))
        return h @ np_(block.mlp_dense_2.kernel) + np_(block.mlp_dense_2.bias)

    if norm_first:  # z' = z + MSA(LN(z)); z = z' + MLP(LN(z'))
        z1 = x + attend(_layer_norm(x, 1e-6).astype("float32"))
        expected = z1 + mlp(_layer_norm(z1, 1e-6))
    else:  # z' = LN(z + MSA(z)); z = LN(z' + MLP(z'))
        z1 = _layer_norm(x + attend(x), 1e-6)
        expected = _layer_norm(z1 + mlp(z1), 1e-6)
    np.testing.assert_allclose(y, expected, atol=2e-5)  # dropout is off at inference
    assert tuple(scores.shape) == (2, 2, 5, 5)
    np.testing.assert_allclose(np_(ops.sum(scores, axis=-1)), 1.0, atol=1e-5)
    check_config_roundtrip(block)


def test_transformer_block_gelu_variants_and_errors():
    x = np.linspace(-3, 3, 7, dtype="float32")
    exact = TransformerBlock(1, 4)._activation_fn(x)
    tanh = TransformerBlock(1, 4, activation="gelu_approximate")._activation_fn(x)
    np.testing.assert_allclose(np_(exact), _erf_gelu(x), atol=1e-6)
    assert np.abs(np_(exact) - np_(tanh)).max() > 1e-4
    with pytest.raises(ValueError, match="hidden_dim 10 should be divisible by num_heads 3"):
        TransformerBlock(3, 8)(np.zeros((1, 4, 10), "float32"))
    with pytest.raises(ValueError, match="relative_position needs grid_size"):
        TransformerBlock(2, 8, relative_position="2d")


def test_attention_kernels_are_xavier_on_the_d_by_d_matrix():
    block = TransformerBlock(num_heads=2, mlp_dim=8)
    block.build((None, 17, 32))
    limit = math.sqrt(6.0 / (32 + 32))  # Keras's own GlorotUniform would give sqrt(6 / (32 * 2 + 32 * 16))
    for dense in (block.attention.query_dense, block.attention.output_dense):
        kernel = np_(dense.kernel)
        assert kernel.max() <= limit and kernel.max() > 0.9 * limit
    assert AttentionGlorotUniform()((4, 16, 64)).shape == (4, 16, 64)
