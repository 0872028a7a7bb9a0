"""Fixed 2-D sin-cos position embeddings (MAE App. A.1)."""

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.layers.sincos_position_embedding import SinCosPositionEmbedding2D, sincos_position_table_2d
from tests.model_checks import check_config_roundtrip, check_saved_model


def test_table_values_follow_the_formula():
    dim, grid = 16, (3, 5)
    table = sincos_position_table_2d(grid, dim, num_prefix_tokens=1)
    assert table.shape == (1 + 15, 16) and table.dtype == np.float32
    np.testing.assert_array_equal(table[0], 0.0)  # the class token's row
    omega = 1.0 / 10000.0 ** (np.arange(4) / 4.0)  # D/4 = 4 frequencies: 1, 0.1, 0.01, 0.001
    r, c = 2, 3
    row = table[1 + r * 5 + c]  # raster order
    np.testing.assert_allclose(row[0:4], np.sin(c * omega), rtol=1e-6)  # column half first
    np.testing.assert_allclose(row[4:8], np.cos(c * omega), rtol=1e-6)
    np.testing.assert_allclose(row[8:12], np.sin(r * omega), rtol=1e-6)
    np.testing.assert_allclose(row[12:16], np.cos(r * omega), rtol=1e-6)
    assert np.isclose(omega[1], 0.1)


def test_every_patch_gets_a_distinct_vector_and_no_prefix_means_no_zero_row():
    table = sincos_position_table_2d(14, 768, num_prefix_tokens=0)
    assert table.shape == (196, 768)
    distances = np.linalg.norm(table[:, None] - table[None], axis=-1) + np.eye(196)
    assert distances.min() > 0.1


def test_layer_adds_the_table_and_survives_save_load(tmp_path):
    layer = SinCosPositionEmbedding2D(grid_size=(2, 4), num_prefix_tokens=1)
    x = np.random.default_rng(0).normal(size=(2, 9, 8)).astype("float32")
    out = np.asarray(ops.convert_to_numpy(layer(x)))
    np.testing.assert_allclose(out, x + sincos_position_table_2d((2, 4), 8, 1)[None], atol=1e-6)
    assert layer.weights == []  # fixed, nothing to train
    clone = check_config_roundtrip(layer)
    assert clone.grid_size == (2, 4) and clone.num_prefix_tokens == 1
    inputs = keras.Input((9, 8))
    check_saved_model(keras.Model(inputs, layer(inputs)), x, tmp_path)


def test_width_not_divisible_by_four_is_refused():
    with pytest.raises(ValueError, match="width divisible by 4; got 10"):
        sincos_position_table_2d(4, 10)


def test_wrong_sequence_length_is_refused():
    with pytest.raises(ValueError, match=r"Sequence length 11 should be 1 prefix tokens \+ 3x3 patches"):
        SinCosPositionEmbedding2D(3, 1)(np.zeros((1, 11, 8), "float32"))
