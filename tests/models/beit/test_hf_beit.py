"""from_transformers on BEiT: a transformers BeitModel with random weights (no download) converts exactly."""

import numpy as np
import pytest

import keras

from keras_paperzoo.convert.hf import from_transformers
from keras_paperzoo.convert.hf_beit import hf_relative_position_index, modern_names, relative_table_from_hf
from keras_paperzoo.layers.position_embedding import relative_position_index
from keras_paperzoo.models.beit import BEiTBackbone

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")


def _hf_beit(**overrides):
    torch.manual_seed(0)
    settings = dict(image_size=16, patch_size=4, num_channels=3, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=4, intermediate_size=37, use_relative_position_bias=True,
                    use_mean_pooling=True, layer_scale_init_value=0.1, use_mask_token=True, layer_norm_eps=1e-6)
    settings.update(overrides)
    model = transformers.BeitModel(transformers.BeitConfig(**settings)).eval()
    with torch.no_grad():  # every parameter random, so that a misplaced one shows (HF starts tables at 0)
        for parameter in model.parameters():
            parameter.copy_(torch.randn_like(parameter) * 0.2)
    return model


def _images():
    return np.random.default_rng(0).normal(size=(2, 16, 16, 3)).astype("float32")


def _hf(model, images, mask=None):
    with torch.no_grad():
        out = model(torch.tensor(images.transpose(0, 3, 1, 2)),
                    bool_masked_pos=None if mask is None else torch.tensor(mask))
    return out


def test_relative_table_rows_follow_each_position_pair():
    grid = (3, 4)
    table = np.random.default_rng(0).normal(size=((2 * 3 - 1) * (2 * 4 - 1) + 3, 2))
    ours, _ = relative_position_index(grid, 1, "2d")
    theirs = hf_relative_position_index(grid)
    converted = relative_table_from_hf(table, grid)
    np.testing.assert_array_equal(converted[ours], table[theirs])  # every (i, j): the same bias


def test_mean_pooling_model_gives_hf_pooler_output():
    hf = _hf_beit()
    backbone = from_transformers(hf)
    assert isinstance(backbone, BEiTBackbone) and backbone.grid_size == (4, 4)
    hf_params = sum(p.numel() for p in hf.parameters())
    # Ours adds Keras's key bias (D per layer, kept at zero) and the unused final norm (2D).
    assert backbone.count_params() == hf_params + 2 * 32 + 2 * 32
    images = _images()
    expected = _hf(hf, images).pooler_output.numpy()
    pooled = keras.ops.convert_to_numpy(backbone(images, training=False))
    np.testing.assert_allclose(pooled, expected, atol=1e-4)


def test_pretraining_layout_masked_sequence_and_shared_table():
    hf = _hf_beit(use_mean_pooling=False, use_relative_position_bias=False, use_shared_relative_position_bias=True,
                  use_absolute_position_embeddings=True)
    backbone = from_transformers(hf)
    assert backbone.use_absolute_position_embedding and backbone.use_relative_position_bias
    images = _images()
    mask = np.zeros((2, 16), bool)
    mask[0, 3:9], mask[1, ::2] = True, True
    expected = _hf(hf, images, mask).last_hidden_state.numpy()  # (2, 17, 32) after the final LayerNorm
    sequence = keras.ops.convert_to_numpy(backbone.encode(images, mask, training=False))
    np.testing.assert_allclose(sequence, expected, atol=1e-4)


def test_hub_checkpoint_names_are_renamed_to_transformers_5():
    old = {"encoder.layer.3.attention.attention.query.weight": 1, "encoder.layer.3.attention.output.dense.bias": 2,
           "encoder.layer.3.intermediate.dense.weight": 3, "encoder.layer.3.output.dense.weight": 4,
           "encoder.layer.3.attention.attention.relative_position_bias.relative_position_bias_table": 5,
           "encoder.relative_position_bias.relative_position_bias_table": 6, "encoder.layer.3.lambda_1": 7,
           "pooler.layernorm.weight": 8}
    assert modern_names(old) == {
        "layers.3.attention.q_proj.weight": 1, "layers.3.attention.o_proj.bias": 2, "layers.3.mlp.fc1.weight": 3,
        "layers.3.mlp.fc2.weight": 4, "layers.3.relative_position_bias.relative_position_bias_table": 5,
        "shared_position_bias.relative_position_bias_table": 6, "layers.3.lambda_1": 7, "pooler.layernorm.weight": 8}


def test_unsupported_and_broken_checkpoints_are_named():
    hf = _hf_beit()
    with pytest.raises(ValueError, match="hidden_act 'relu' is not supported"):
        from_transformers(transformers.BeitModel(transformers.BeitConfig(**{**hf.config.to_dict(), "hidden_act": "relu"})))
    state = {k: v for k, v in hf.state_dict().items() if k != "layers.1.lambda_2"}
    broken = type("Broken", (), {"config": hf.config, "state_dict": lambda self: state})()
    with pytest.raises(ValueError, match="no weight 'layers.1.lambda_2'"):
        from_transformers(broken)
