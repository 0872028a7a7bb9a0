"""BEiTBackbone: [M] replacement, pooled output, LayerScale, 1/sqrt(2l) rescaling, drop path, counts, save."""

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.layers.transformer_block import TransformerBlock
from keras_paperzoo.models.beit import BEIT_PRESETS, BEiTBackbone, beit_parameter_count
from keras_paperzoo.training.layerwise_decay import vit_layer_ids
from tests.model_checks import check_config_roundtrip, check_saved_model

TINY = dict(patch_size=2, num_layers=2, hidden_dim=16, num_heads=2, mlp_dim=32, image_shape=(16, 16, 1))


def np_(x):
    return np.asarray(ops.convert_to_numpy(x))


def images(batch=2, seed=0):
    return np.random.default_rng(seed).normal(size=(batch, 16, 16, 1)).astype("float32")


@pytest.fixture(scope="module")
def backbone():
    model = BEiTBackbone(**TINY)
    rng = np.random.default_rng(5)
    for block in model.transformer_blocks:  # zero-initialised tables: make them matter
        table = block.attention.relative_position_bias.table
        table.assign(rng.normal(size=table.shape).astype("float32"))
    return model


def manual_hidden(backbone, x, patch_mask=None):
    tokens = np_(backbone.patch_embedding(x))  # (B, N, D)
    if patch_mask is not None:
        token = np_(backbone.mask_embedding.token)[0, 0]
        tokens = np.where(patch_mask[..., None], token[None, None], tokens)  # e_[M] at the masked positions
    h = backbone.class_token(tokens)
    for block in backbone.transformer_blocks:
        h = block(h)
    return np_(h)


def layer_norm(x, eps=1e-6):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)


def test_shapes_and_pooled_output_is_the_normalised_patch_mean(backbone):
    x = images()
    assert backbone.grid_size == (8, 8) and backbone.num_patches == 64 and backbone.hidden_dim == 16
    assert backbone.patch_size == 2 and backbone.position_layer is None  # no absolute positions
    pooled = np_(backbone(x))
    assert pooled.shape == (2, 16)
    hidden = manual_hidden(backbone, x)  # LN(avg_i h_i^L), class token left out; norm at (1, 0)
    np.testing.assert_allclose(pooled, layer_norm(hidden[:, 1:].mean(1)), atol=1e-4)
    np.testing.assert_allclose(np_(backbone.encode(x)), layer_norm(hidden), atol=1e-4)


def test_masked_patches_get_the_mask_embedding(backbone):
    x = images()
    mask = np.zeros((2, 64), bool)
    mask[0, [0, 5, 9, 63]] = mask[1, 10:30] = True
    encoded = np_(backbone.encode(x, mask))
    assert encoded.shape == (2, 65, 16)
    np.testing.assert_allclose(encoded, layer_norm(manual_hidden(backbone, x, mask)), atol=1e-4)
    # The pixels of masked patches no longer reach the output; visible ones do.
    changed = x.copy()
    changed[1, 2:4, 4:16] += 5.0  # patches (1, 2..7): indices 10..15, all masked in image 1
    np.testing.assert_allclose(np_(backbone.encode(changed, mask)), encoded, atol=1e-5)
    assert np.abs(np_(backbone.encode(changed, np.zeros_like(mask))) - np_(backbone.encode(x))).max() > 1e-3
    np.testing.assert_allclose(np_(backbone.encode(x, np.zeros_like(mask))), np_(backbone.encode(x)), atol=1e-6)


def test_layer_scale_rescaling_and_drop_path_settings(backbone):
    for l, block in enumerate(backbone.transformer_blocks, start=1):
        np.testing.assert_array_equal(np_(block.attention_scale), np.full(16, 0.1, "float32"))
        np.testing.assert_array_equal(np_(block.mlp_scale), np.full(16, 0.1, "float32"))
        assert block.output_scale == pytest.approx(1 / np.sqrt(2 * l))
    assert [b.drop_path_rate for b in backbone.transformer_blocks] == [0.0, 0.1]  # linspace(0, 0.1, L)
    assert backbone.transformer_blocks[0].drop_path is None and backbone.transformer_blocks[1].drop_path.rate == 0.1
    x = images()
    np.testing.assert_array_equal(np_(backbone(x, training=False)), np_(backbone(x)))


def test_output_projections_are_rescaled_exactly():
    def block(scale):
        init = keras.initializers.TruncatedNormal(stddev=0.02, seed=7)
        b = TransformerBlock(num_heads=2, mlp_dim=32, kernel_initializer=init, output_scale=scale, layer_scale_init=0.1)
        b.build((None, 5, 16))
        return b

    plain, scaled = block(1.0), block(1 / np.sqrt(2 * 3))  # layer 3
    for a, b in ((plain.attention._output_dense.kernel, scaled.attention._output_dense.kernel),
                 (plain.mlp_dense_2.kernel, scaled.mlp_dense_2.kernel)):
        np.testing.assert_allclose(np_(b), np_(a) / np.sqrt(6), rtol=1e-6)
        assert np.abs(np_(a)).max() > 0
    np.testing.assert_array_equal(np_(scaled.mlp_dense_1.kernel), np_(plain.mlp_dense_1.kernel))
    assert not np_(scaled.mlp_dense_1.bias).any()  # zero biases with kernel_initializer (BEiT)
    # LayerScale: z' = z + gamma_1 * MSA(LN(z)), z'' = z' + gamma_2 * MLP(LN(z')), against the block's own parts.
    x = np.random.default_rng(0).normal(size=(2, 5, 16)).astype("float32")
    h = x + 0.1 * np_(scaled.attention(scaled.attention_norm(x), scaled.attention_norm(x)))
    expected = h + 0.1 * np_(scaled._mlp(scaled.mlp_norm(h), False))
    np.testing.assert_allclose(np_(scaled(x)), expected, atol=1e-5)


def test_parameter_counts():
    assert BEiTBackbone(**TINY).count_params() == beit_parameter_count(**TINY)
    variant = dict(TINY, layer_scale_init=None, use_relative_position_bias=False, use_absolute_position_embedding=True)
    model = BEiTBackbone(**variant)
    assert model.count_params() == beit_parameter_count(**variant)
    assert model.count_params() == beit_parameter_count(**TINY) - 2 * (2 * 16 + 228 * 2) + 65 * 16
    base = beit_parameter_count(**BEIT_PRESETS["beit_base_patch16_224"]["config"])
    assert base == 85_773_504
    # The official BEiT-B fine-tuning model (timm beit_base_patch16_224): 86,530,984 with its 1000-way head;
    # ours has no head, and adds [M] (768), the pre-training final norm (1536) and 12 key biases (12 x 768).
    assert base == 86_530_984 - (768 * 1000 + 1000) + 768 + 1536 + 12 * 768
    assert beit_parameter_count(**BEIT_PRESETS["beit_large_patch16_224"]["config"]) == 303_433_216
    tiny = BEIT_PRESETS["beit_tiny_digits"]["config"]
    assert tiny["image_shape"] == (32, 32, 1) and tiny["patch_size"] == 4 and tiny["num_layers"] == 4


def test_layerwise_decay_recognises_beit_blocks(backbone):
    layer_of, depth = vit_layer_ids(backbone)
    assert depth == 2
    by_path = {v.path: layer_of[id(v)] for v in backbone.trainable_variables}
    assert by_path["mask_embedding/token"] == 0 and by_path["class_token/token"] == 0
    assert by_path["patch_embedding/projection/kernel"] == 0
    assert by_path["transformer_block_1/attention/relative_position_bias/relative_position_bias_table"] == 2
    assert by_path["transformer_block_0/attention_layer_scale"] == 1 and by_path["pooled_norm/gamma"] == 3


def test_config_save_and_bad_inputs(backbone, tmp_path):
    clone = check_config_roundtrip(backbone)
    assert clone.grid_size == (8, 8) and clone.layer_scale_init == 0.1
    check_saved_model(backbone, images(), tmp_path, atol=1e-5)
    with pytest.raises(ValueError, match="divisible by patch_size"):
        BEiTBackbone(**dict(TINY, image_shape=(15, 16, 1)))
    with pytest.raises(ValueError, match=r"^BEiTBackbone drop_path_rate must be a number in \[0, 1\); "
                                         r"got drop_path_rate=1.0\.$"):
        BEiTBackbone(**dict(TINY, drop_path_rate=1.0))
    with pytest.raises(ValueError, match=r"^BEiTBackbone layer_scale_init must be a number > 0 or None \(no LayerScale\); "
                                         r"got layer_scale_init=0.0\.$"):
        BEiTBackbone(**dict(TINY, layer_scale_init=0.0))
    with pytest.raises(ValueError, match=r"^BEiTBackbone image_shape must be \(height, width, channels\) of positive "
                                         r"ints; got \(16, 16\)\.$"):
        BEiTBackbone(**dict(TINY, image_shape=(16, 16)))
    with pytest.raises(ValueError, match="mask"):
        backbone.encode(images(), np.zeros((2, 63), bool))
    with pytest.raises(ValueError, match="Unknown"):
        BEiTBackbone.from_preset("beit_tiny_digits", pooling="token")
