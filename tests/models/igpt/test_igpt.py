"""iGPT: palette, the AR and BERT objectives on GPTBackbone, presets, save/load and fit."""

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.models import IGPT
from keras_paperzoo.models.gpt import GPTBackbone, gpt_parameter_count
from keras_paperzoo.models.igpt import IGPT_PRESETS, PAPER_PARAMETERS, ColorPalette, igpt_parameter_count
from tests.layers.test_random_masking import _fmix32
from tests.model_checks import InterruptAfterFirstEpoch, check_config_roundtrip, check_fit, check_saved_model

PALETTE, LENGTH = 6, 12


def np_(x):
    return np.asarray(ops.convert_to_numpy(x))


TINY = dict(vocabulary_size=PALETTE + 1, num_layers=1, hidden_dim=16, num_heads=2, intermediate_dim=32,
            max_sequence_length=LENGTH, dropout=0.0)  # one shape for every test: JAX compiles each op once


def tiny(objective="autoregressive", seed=0):
    backbone = GPTBackbone(**TINY, causal=objective == "autoregressive")
    model = IGPT(backbone, objective=objective, seed=seed)
    kernel = model.logits_projection.kernel  # zero-initialised (released code): make logits depend on the input
    kernel.assign(np.random.default_rng(1).normal(size=kernel.shape).astype("float32"))
    return model


def pixel_ids(batch=3, seed=0):
    return np.random.default_rng(seed).integers(0, PALETTE, (batch, LENGTH)).astype("int32")


# --- palette -----------------------------------------------------------------------------------

def test_palette_round_trip_is_within_the_quantisation_error():
    rng = np.random.default_rng(0)
    base = rng.uniform(0, 255, (8, 3)).astype("float32")
    images = base[rng.integers(0, 8, (4, 6, 5))] + rng.uniform(-2, 2, (4, 6, 5, 3)).astype("float32")
    palette = ColorPalette.fit(images, num_colors=8, seed=0)
    ids = palette.encode(images)
    assert ids.shape == (4, 30) and ids.dtype == np.int32 and 0 <= ids.min() and ids.max() < 8
    restored = palette.decode(ids, (6, 5))
    assert restored.shape == images.shape
    assert np.abs(restored - images).max() <= 4.0  # two points of one cluster are within 2 x 2 per channel
    pixels = images.reshape(-1, 3)  # every id is the nearest colour (NumPy reference)
    nearest = np.argmin(((pixels[:, None, :] - palette.colors[None]) ** 2).sum(-1), axis=1)
    np.testing.assert_array_equal(ids.reshape(-1), nearest)
    np.testing.assert_array_equal(ids[0, :5], nearest[:5])  # raster order: row 0 first


def test_palette_larger_than_the_distinct_pixels_is_refused():
    images = np.zeros((2, 4, 4, 3), "float32")
    images[:, :2] = 255.0  # 2 distinct colours
    with pytest.raises(ValueError, match="num_colors"):
        ColorPalette.fit(images, num_colors=3)
    assert ColorPalette.fit(images, num_colors=2).num_colors == 2


# --- the objectives ----------------------------------------------------------------------------

def test_autoregressive_logits_at_t_do_not_depend_on_pixels_from_t_on():
    model = tiny()
    ids = pixel_ids()
    t = 5
    changed = ids.copy()
    changed[:, t:] = (changed[:, t:] + 1) % PALETTE
    before, after = np_(model(ids)["logits"]), np_(model(changed)["logits"])
    np.testing.assert_allclose(after[:, :t + 1], before[:, :t + 1], atol=1e-5)  # p(x_s | x_<s), s <= t
    assert np.abs(after[:, t + 1:] - before[:, t + 1:]).max() > 1e-3  # later positions see the change


def test_autoregressive_loss_is_the_mean_next_pixel_cross_entropy():
    model = tiny()
    ids = pixel_ids()
    out = model(ids)
    logits = np_(out["logits"]).astype("float64")
    log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected = -np.take_along_axis(log_p, ids[..., None], -1).mean()
    np.testing.assert_allclose(float(np_(model.compute_loss(ids, None, out))), expected, rtol=1e-5)


def test_bert_loss_counts_only_the_masked_positions():
    model = tiny("bert")
    ids = pixel_ids()
    mask = np.zeros((3, LENGTH), "float32")
    mask[0, [1, 4]] = mask[1, [0]] = mask[2, [2, 3, 11]] = 1.0
    out = model(ids, bert_mask=mask)
    logits = np_(out["logits"]).astype("float64")
    log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    nll = -np.take_along_axis(log_p, ids[..., None], -1)[..., 0]
    expected = np.mean([(nll[b] * mask[b]).sum() / mask[b].sum() for b in range(3)])
    loss = float(np_(model.compute_loss(ids, None, out)))
    np.testing.assert_allclose(loss, expected, rtol=1e-5)
    noisy = np_(out["logits"]) + (1.0 - mask)[..., None] * 50.0 * np.random.default_rng(2).normal(size=logits.shape)
    noisy_loss = model.compute_loss(ids, None, {"logits": ops.convert_to_tensor(noisy.astype("float32")),
                                                "mask": out["mask"]})
    np.testing.assert_allclose(float(np_(noisy_loss)), loss, rtol=1e-5)  # unmasked logits do not count


def test_bert_input_hides_masked_pixels_and_attends_both_ways():
    model = tiny("bert")
    ids = pixel_ids()
    mask = np.zeros((3, LENGTH), "float32")
    mask[:, 3] = 1.0
    changed = ids.copy()
    changed[:, 3] = (changed[:, 3] + 1) % PALETTE  # a masked pixel: invisible
    np.testing.assert_allclose(np_(model(changed, bert_mask=mask)["logits"]),
                               np_(model(ids, bert_mask=mask)["logits"]), atol=1e-5)
    changed = ids.copy()
    changed[:, -1] = (changed[:, -1] + 1) % PALETTE  # the last, visible pixel reaches position 0
    first = np_(model(changed, bert_mask=mask)["logits"])[:, 0] - np_(model(ids, bert_mask=mask)["logits"])[:, 0]
    assert np.abs(first).max() > 1e-3


def test_bert_mask_is_bernoulli_0_15_and_the_same_on_every_backend():
    model = tiny("bert", seed=7)
    masks = [np_(model.sample_bert_mask(64, 256)) for _ in range(2)]
    for draw, mask in enumerate(masks):
        with np.errstate(over="ignore"):
            stream = _fmix32(_fmix32(np.uint32(7)) ^ _fmix32(np.uint32(draw) + np.uint32(0x9E3779B9)))
            bits = _fmix32(np.arange(64 * 256, dtype=np.uint32).reshape(64, 256) + stream)
        expected = ((bits >> np.uint32(8)).astype("float32") * np.float32(2.0 ** -24)) < np.float32(0.15)
        np.testing.assert_array_equal(mask, expected.astype("float32"))
        assert abs(mask.mean() - 0.15) < 0.01  # 16,384 draws: std 0.0028
    assert (masks[0] != masks[1]).any()


# --- presets, config, save, fit ---------------------------------------------------------------

def test_preset_parameter_counts_match_the_paper():
    for name, paper in PAPER_PARAMETERS.items():
        config = IGPT_PRESETS[name]["backbone"]["overrides"]
        assert abs(igpt_parameter_count(**config) / paper - 1) < 0.01, name  # biases: +0.1 % to +0.9 %
    assert igpt_parameter_count(**IGPT_PRESETS["igpt_l"]["backbone"]["overrides"]) == 1_363_063_296
    layers = {name: (p["backbone"]["overrides"]["num_layers"], p["backbone"]["overrides"]["hidden_dim"])
              for name, p in IGPT_PRESETS.items()}
    assert layers["igpt_s"] == (24, 512) and layers["igpt_m"] == (36, 1024)
    assert layers["igpt_l"] == (48, 1536) and layers["igpt_xl"] == (60, 3072)


def test_preset_builds_with_the_counted_parameters_and_bert_is_not_causal():
    model = IGPT.from_preset("igpt_mnist_tiny", **TINY)
    assert model.count_params() == igpt_parameter_count(**TINY)
    assert model.count_params() == gpt_parameter_count(**TINY) + 16 * PALETTE  # + the untied projection
    assert model.backbone.causal and model.palette_size == PALETTE and model.objective == "autoregressive"
    assert IGPT_PRESETS["igpt_mnist_tiny"]["backbone"]["overrides"]["vocabulary_size"] == 17  # 16 colours + 1
    bert = IGPT.from_preset("igpt_mnist_tiny", objective="bert", **TINY)
    assert bert.objective == "bert" and not bert.backbone.causal


def test_bad_arguments_are_refused():
    backbone = GPTBackbone(**TINY)
    with pytest.raises(ValueError, match="causal"):
        IGPT(backbone, objective="bert")
    with pytest.raises(ValueError, match="objective"):
        IGPT(backbone, objective="mlm")
    with pytest.raises(ValueError, match="mask_probability"):
        IGPT(backbone, mask_probability=1.5)


@pytest.mark.parametrize("objective", ["autoregressive", "bert"])
def test_config_roundtrip_save_load_and_fit(objective, tmp_path):
    model = tiny(objective)
    clone = check_config_roundtrip(model)
    assert clone.objective == objective and clone.backbone.causal == (objective == "autoregressive")
    ids = pixel_ids(8)
    model.compile(total_steps=10, warmup_steps=1)
    check_fit(model, ids, batch_size=4, epochs=1)
    mask = (np.arange(LENGTH) % 4 == 0).astype("float32")[None].repeat(8, 0)
    check_saved_model(model, ids, tmp_path, atol=1e-5,
                      outputs_of=lambda m, x: m(x, training=False, bert_mask=mask)["logits"])


# --- completion and linear-probe features -----------------------------------------------------

def test_completion_keeps_the_top_half_and_follows_the_model():
    model = tiny()
    top = pixel_ids(2)[:, :LENGTH // 2]
    completed = model.complete(top, sampler="greedy")
    assert completed.shape == (2, LENGTH) and completed.dtype == np.int32
    np.testing.assert_array_equal(completed[:, :LENGTH // 2], top)
    # Greedy: each sampled pixel is the argmax of the full (uncached) forward pass at its position.
    logits = np_(model(completed)["logits"])
    np.testing.assert_array_equal(completed[:, LENGTH // 2:], logits[:, LENGTH // 2:].argmax(-1))
    with pytest.raises(ValueError, match="autoregressive"):
        tiny("bert").complete(top)


def test_linear_probe_features_are_pooled_normalised_states_of_layer_l():
    model = tiny()
    ids = pixel_ids()
    backbone = model.backbone
    inputs = np.concatenate([np.full((3, 1), PALETTE, "int32"), ids[:, :-1]], axis=1)  # SOS-shifted
    np.testing.assert_allclose(np_(model.features(ids)), np_(backbone(inputs)).mean(1), atol=1e-5)  # n^L
    h = backbone.embeddings_dropout(backbone.token_embedding(inputs) + backbone.position_embedding(
        backbone.token_embedding(inputs)))  # h^0
    for layer, block in enumerate(backbone.transformer_layers):
        ln = block._self_attention_layer_norm  # n^l = layer_norm(h^l), the block's own input norm
        np.testing.assert_allclose(np_(model.features(ids, layer=layer)), np_(ln(h)).mean(1), atol=1e-5)
        h = block(h)
    assert np_(model.features(ids, layer=0)).shape == (3, 16)
    with pytest.raises(ValueError, match="layer"):
        model.features(ids, layer=2)


@pytest.mark.parametrize("objective", ["autoregressive", "bert"])
def test_layer_features_equal_features_at_every_layer_from_one_pass_per_batch(objective):
    model = tiny(objective)
    ids = pixel_ids(batch=5)
    every = model.layer_features(ids, batch_size=2)  # batches of 2, 2, 1
    assert len(every) == 2 and all(f.shape == (5, 16) for f in every)
    for layer in range(2):
        np.testing.assert_allclose(every[layer], np_(model.features(ids, layer=layer)), atol=1e-5)
    assert not np.allclose(every[0], every[1], atol=1e-3)  # the layers differ
    with pytest.raises(ValueError, match=r"\(N, n\) palette ids"):
        model.layer_features(ids[0])


@pytest.mark.parametrize("objective", ["autoregressive", "bert"])
def test_resumed_run_ends_with_the_uninterrupted_runs_weights(objective, tmp_path):
    """Interrupted after epoch 0, resumed with BackupAndRestore (and EpochSeeds, which re-draws the BERT
    masks of the resumed epoch): the same weights as one run without the interruption."""
    from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds

    def run(name, interrupt=False):
        keras.utils.set_random_seed(0)  # the same initial weights in every run
        model = tiny(objective)
        model.compile(optimizer=keras.optimizers.SGD(0.5))
        callbacks = [keras.callbacks.BackupAndRestore(str(tmp_path / name)), EpochSeeds(3)]
        callbacks += [InterruptAfterFirstEpoch()] if interrupt else []
        model.fit(pixel_ids(8), batch_size=4, epochs=2, shuffle=False, verbose=0, callbacks=callbacks)
        return [np_(w) for w in model.trainable_weights]

    straight = run("straight")
    with pytest.raises(RuntimeError, match="interrupted"):
        run("broken", interrupt=True)
    resumed = run("broken")
    for a, b in zip(straight, resumed):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # (Without EpochSeeds the resumed BERT run re-draws epoch 0's masks: 109 of 112 values differ, up to 1.2e-2 on JAX.)
