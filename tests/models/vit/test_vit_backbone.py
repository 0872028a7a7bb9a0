"""ViTBackbone: presets and parameter counts (built symbolically), tiny configs on the current backend."""

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.layers.position_embedding import resize_embeddings_1d, resize_position_embeddings
from keras_paperzoo.models.vit import VIT_PRESETS, ViTBackbone, mean_attention_distance
from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model
from tests.model_tests import shapes_only

TINY = dict(patch_size=8, num_layers=2, hidden_dim=32, num_heads=2, mlp_dim=64, image_shape=(32, 32, 3))


def np_(x):
    return np.asarray(ops.convert_to_numpy(x))


def images(n=4, size=32, seed=0):
    return np.random.default_rng(seed).uniform(size=(n, size, size, 3)).astype("float32")


def symbolic(name, **overrides):
    with shapes_only():  # no memory for ViT-H's 632M weights
        backbone = ViTBackbone.from_preset(name, **overrides)
        return backbone.count_params(), tuple(backbone.sequence_output.shape), tuple(backbone.output.shape)


# --- presets, counted symbolically -------------------------------------------------------


def _vit_count(d, mlp, layers, patch, tokens, head=0):
    """The hand count: patch projection, class token, positions, blocks, final norm (+ a head)."""
    block = (4 * d * d + 4 * d) + (2 * d * mlp + mlp + d) + 4 * d
    return patch * patch * 3 * d + d + d + tokens * d + layers * block + 2 * d + head


def test_vit_b16_backbone_has_timm_parameter_count():
    # timm vit_base_patch16_224: 86,567,656 including its 768 x 1000 + 1000 = 769,000 head.
    assert 86_567_656 - 769_000 == 85_798_656
    assert _vit_count(768, 3072, 12, 16, 197) == 85_798_656
    count, sequence, pooled = symbolic("vit_b16")
    assert count == 85_798_656
    assert sequence == (None, 197, 768) and pooled == (None, 768)


@pytest.mark.parametrize(
    "name, paper_millions, d, mlp, layers, patch, tokens",
    [
        ("vit_b16", 86, 768, 3072, 12, 16, 197),
        ("vit_l16", 307, 1024, 4096, 24, 16, 197),
        ("vit_h14", 632, 1280, 5120, 32, 14, 257),
    ],
)
def test_table1_parameter_counts_with_a_1000_class_head(name, paper_millions, d, mlp, layers, patch, tokens):
    count, sequence, _ = symbolic(name)
    assert count == _vit_count(d, mlp, layers, patch, tokens)  # 85,798,656 / 303,301,632 / 630,764,800
    assert sequence == (None, tokens, d)
    with_head = count + d * 1000 + 1000  # 86,567,656 / 304,326,632 / 632,045,800
    assert abs(with_head / (paper_millions * 1e6) - 1) < 0.01


def test_other_presets_sequence_lengths_and_counts():
    assert symbolic("vit_b32")[1] == (None, 50, 768)  # (224 / 32)^2 + 1
    assert symbolic("vit_b32")[0] == _vit_count(768, 3072, 12, 32, 50) == 87_455_232
    assert symbolic("vit_ti16")[0] == _vit_count(192, 768, 12, 16, 197) == 5_524_416  # timm 5,717,416 - 193,000
    assert symbolic("vit_s16")[0] == _vit_count(384, 1536, 12, 16, 197) == 21_665_664  # timm 22,050,664 - 385,000
    assert symbolic("vit_l32")[1] == (None, 50, 1024)
    assert sorted(ViTBackbone.preset_names()) == sorted(
        ["vit_ti16", "vit_s16", "vit_b16", "vit_b32", "vit_l16", "vit_l32", "vit_h14"]
    )
    for name, preset in VIT_PRESETS.items():
        assert preset["config"]["image_shape"] == (224, 224, 3), name


def test_b16_variants_exact_counts():
    base = 85_798_656
    # GAP: no class token (768) and no class row in the position table (768).
    count, sequence, _ = symbolic("vit_b16", pooling="gap")
    assert sequence == (None, 196, 768) and count == base - 768 - 768 == 85_797_120
    # 2-D: X (14 x 384) and Y (14 x 384) tables replace the (197 x 768) table.
    assert symbolic("vit_b16", position_embedding="2d")[0] == base - 197 * 768 + 2 * 14 * 384 == 85_658_112
    assert symbolic("vit_b16", position_embedding="none")[0] == base - 197 * 768 == 85_647_360
    # Relative: per layer, (27 x 27 offsets + 3 class entries) x 768, no absolute table.
    relative = base - 197 * 768 + 12 * (27 * 27 + 3) * 768
    assert symbolic("vit_b16", position_embedding="relative")[0] == relative == 92_393_472


# --- tiny configs on the current backend --------------------------------------------------


@pytest.fixture(scope="module")
def tiny():
    return ViTBackbone(**TINY)


def test_tiny_outputs_and_sequence(tiny):
    x = images()
    pooled = np_(tiny(x))
    assert pooled.shape == (4, 32)
    assert tuple(tiny.sequence_output.shape) == (None, 17, 32) and tiny.sequence_length == 17
    sequence = np_(tiny.sequence_model()(x))
    assert sequence.shape == (4, 17, 32)
    np.testing.assert_allclose(pooled, sequence[:, 0], atol=1e-6)  # y = LN(z_L)^0
    assert tiny.get_config()["dropout_rate"] == 0.1 and tiny.get_config()["layer_norm_epsilon"] == 1e-6


def test_attention_scores_rows_sum_to_one(tiny):
    scores = tiny.attention_scores(images())
    assert len(scores) == 2
    for s in scores:
        assert tuple(s.shape) == (4, 2, 17, 17)
        np.testing.assert_allclose(np_(ops.sum(s, axis=-1)), 1.0, atol=1e-5)
    distance = tiny.mean_attention_distance(images())
    assert distance.shape == (2, 2) and np.all(distance > 0)


def test_mean_attention_distance_on_known_attention():
    grid, token = (2, 2), (8, 8)
    eye = np.eye(5)[None, None]  # every token attends to itself
    assert np.allclose(mean_attention_distance([eye], grid, token), 0.0)
    to_first = np.zeros((1, 1, 5, 5))
    to_first[..., :, 1] = 1.0  # every patch attends to patch (0, 0)
    expected = np.mean([0.0, 8.0, 8.0, 8.0 * np.sqrt(2)])
    np.testing.assert_allclose(mean_attention_distance(to_first, grid, token), [[expected]])


def test_config_roundtrip_saved_model_and_fit(tiny, tmp_path):
    check_config_roundtrip(tiny)
    tiny.attention_scores(images())  # a second graph over the same layers must not disturb saving
    check_saved_model(tiny, images(), tmp_path)
    head = keras.layers.Dense(3, kernel_initializer="zeros", name="head")  # Sec. 3.2: zero-initialised head
    model = keras.Model(tiny.input, head(tiny.output))
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3, global_clipnorm=1.0),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    x, y = images(16), np.arange(16) % 3
    check_fit(model, x, y, epochs=1, batch_size=8)
    check_saved_model(model, x[:4], tmp_path)


def test_from_preset_overrides():
    backbone = ViTBackbone.from_preset(
        "vit_ti16", image_shape=(32, 32, 3), patch_size=8, num_layers=2, hidden_dim=32, num_heads=2, mlp_dim=64
    )
    assert backbone.grid_size == (4, 4) and backbone.num_layers == 2
    assert tuple(backbone.sequence_output.shape) == (None, 17, 32)
    assert backbone.count_params() == _vit_count(32, 64, 2, 8, 17)
    with pytest.raises(ValueError, match="Unknown ViTBackbone preset 'vit_b8'"):
        ViTBackbone.from_preset("vit_b8")


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(image_shape=(30, 32, 3)), "Input height 30 should be divisible by patch size 8"),
        (dict(image_shape=(32, 36, 3)), "Input width 36 should be divisible by patch size 8"),
        (dict(hidden_dim=30, num_heads=4), "hidden_dim 30 should be divisible by num_heads 4"),
        (dict(pooling="max"), "Unknown pooling 'max'"),
        (dict(position_embedding="sincos"), "Unknown position_embedding 'sincos'"),
        (dict(position_embedding="2d", hidden_dim=33, num_heads=3), "hidden_dim 33 should be even"),
        (dict(dropout_rate=1.0), "dropout_rate 1.0 should be in"),
        (dict(num_layers=0), "num_layers must be a positive int"),
        (dict(image_shape=(32, 32.0, 3)), r"^ViTBackbone image_shape must be \(height, width, channels\) of positive ints; "
                                          r"got \(32, 32.0, 3\)\.$"),
        (dict(image_shape=(None, 32, 3)), r"^ViTBackbone needs a known height and width \(its patch grid is fixed\); "
                                          r"got image_shape=\(None, 32, 3\)\.$"),
        (dict(hybrid="resnet"), "Unknown hybrid stem 'resnet'"),
        (dict(hybrid="conv", image_shape=(36, 36, 3), patch_size=2), "Hybrid feature-map .* height 9 should be"),
    ],
)
def test_clear_errors(overrides, message):
    with pytest.raises(ValueError, match=message):
        ViTBackbone(**{**TINY, **overrides})


@pytest.mark.parametrize(
    "position_embedding, pooling",
    [("2d", "token"), ("relative", "token"), ("relative", "gap"), ("relative_1d", "token"), ("none", "gap")],
)
def test_ablation_variants_run(position_embedding, pooling):
    backbone = ViTBackbone(**TINY, position_embedding=position_embedding, pooling=pooling)
    tokens = 16 + (pooling == "token")
    assert tuple(backbone.sequence_output.shape) == (None, tokens, 32)
    assert np_(backbone(images(2))).shape == (2, 32)
    assert (backbone.class_token is None) == (pooling == "gap")
    if position_embedding == "relative":
        scores = backbone.attention_scores(images(2))
        np.testing.assert_allclose(np_(ops.sum(scores[-1], axis=-1)), 1.0, atol=1e-5)


def test_gap_pools_patch_tokens_after_the_final_norm():
    backbone = ViTBackbone(**TINY, pooling="gap")
    x = images(2)
    np.testing.assert_allclose(
        np_(backbone(x)), np_(backbone.sequence_model()(x)).mean(axis=1), atol=1e-5
    )


def test_hybrid_conv_stem_and_custom_stem(tmp_path):
    conv = ViTBackbone(**{**TINY, "patch_size": 1}, hybrid="conv")  # 32 -> 8x8 feature map, 1x1 patches
    assert conv.grid_size == (8, 8) and conv.sequence_length == 65 and conv.token_pixels == (4.0, 4.0)
    assert np_(conv(images(2))).shape == (2, 32)
    stem = keras.Sequential(
        [keras.Input((None, None, 3)), keras.layers.Conv2D(6, 3, strides=4, padding="same", name="stem_conv")],
        name="my_stem",
    )
    custom = ViTBackbone(**{**TINY, "patch_size": 2}, hybrid=stem)  # 8x8 map, 2x2 patches -> 4x4 grid
    assert custom.grid_size == (4, 4)
    clone = check_config_roundtrip(custom)
    assert clone.get_layer("my_stem").count_params() == stem.count_params()
    check_saved_model(custom, images(2), tmp_path)


# --- another resolution (Sec. 3.2) ------------------------------------------------------------


def test_with_image_shape_resizes_only_the_position_table(tiny):
    bigger = tiny.with_image_shape((48, 48, 3))
    assert bigger.grid_size == (6, 6) and bigger.image_shape == (48, 48, 3)
    assert np_(bigger(images(2, size=48))).shape == (2, 32)
    old_table = tiny.position_layer.embeddings
    for old, new in zip(tiny.weights, bigger.weights):
        if old is old_table:
            assert tuple(new.shape) == (37, 32)
            np.testing.assert_allclose(np_(new), resize_position_embeddings(old, 4, 6, 1), atol=1e-6)
            np.testing.assert_array_equal(np_(new)[0], np_(old)[0])  # the class row is kept
        else:
            np.testing.assert_array_equal(np_(new), np_(old))  # every other weight identical


def test_with_image_shape_at_the_same_size_is_the_identity(tiny):
    same = tiny.with_image_shape(tiny.image_shape)
    for old, new in zip(tiny.weights, same.weights):
        np.testing.assert_array_equal(np_(new), np_(old))
    x = images(2)
    np.testing.assert_allclose(np_(same(x)), np_(tiny(x)), atol=1e-6)


def test_with_image_shape_for_2d_and_relative_positions(tmp_path):
    two_d = ViTBackbone(**TINY, position_embedding="2d")
    bigger = two_d.with_image_shape((48, 32, 3))  # 6 x 4 grid: rows resized, columns kept
    layer, new_layer = two_d.position_layer, bigger.position_layer
    np.testing.assert_allclose(np_(new_layer.row_embeddings), resize_embeddings_1d(layer.row_embeddings, 6), atol=1e-6)
    np.testing.assert_array_equal(np_(new_layer.column_embeddings), np_(layer.column_embeddings))
    relative = ViTBackbone(**TINY, position_embedding="relative")
    bigger = relative.with_image_shape((48, 48, 3))
    old_table = relative.transformer_blocks[0].attention.relative_embeddings
    new_table = bigger.transformer_blocks[0].attention.relative_embeddings
    assert tuple(old_table.shape) == (3 + 7 * 7, 2, 16) and tuple(new_table.shape) == (3 + 11 * 11, 2, 16)
    np.testing.assert_array_equal(np_(new_table)[:3], np_(old_table)[:3])
    assert np_(bigger(images(2, size=48))).shape == (2, 32)
    for name, model in (("two_d", two_d), ("relative", relative)):
        (tmp_path / name).mkdir()
        check_saved_model(model, images(2), tmp_path / name)
    with pytest.raises(ValueError, match="relative_1d"):
        ViTBackbone(**TINY, position_embedding="relative_1d").with_image_shape((48, 48, 3))
