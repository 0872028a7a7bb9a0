"""The MAE trainer: masking, the encoder on visible patches only, the masked loss, compile, save, fit."""

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.layers.patch_embedding import patchify, unpatchify
from keras_paperzoo.layers.sincos_position_embedding import sincos_position_table_2d
from keras_paperzoo.models.mae.mae import MAE, paper_optimizer
from keras_paperzoo.models.mae.mae_presets import MAE_PRESETS
from keras_paperzoo.models.vit.vit_backbone import ViTBackbone
from keras_paperzoo.training.selective_decay import SelectiveDecayAdamW
from tests.model_checks import InterruptAfterFirstEpoch, check_config_roundtrip, check_fit, check_saved_model

RNG = np.random.default_rng(0)
IMAGES = RNG.random((8, 32, 32, 3)).astype("float32")
N, KEEP = 16, 4  # 32x32 images, patch 8: a 4x4 grid; 75 % masked keeps 4


def np_(x):
    return np.asarray(ops.convert_to_numpy(x))


def tiny_encoder(**overrides):
    args = dict(patch_size=8, num_layers=2, hidden_dim=32, num_heads=2, mlp_dim=64,
                image_shape=(32, 32, 3), dropout_rate=0.0)
    args.update(overrides)
    return ViTBackbone(**args)


def tiny_mae(encoder=None, **overrides):
    args = dict(decoder_depth=1, decoder_dim=32, decoder_heads=2, seed=0)
    args.update(overrides)
    return MAE(encoder or tiny_encoder(), **args)


@pytest.fixture(scope="module")
def mae():
    return tiny_mae()


def fixed_noise(batch=8, seed=1):
    return np.random.default_rng(seed).random((batch, N)).astype("float32")


# --- the forward pass ------------------------------------------------------------------


def test_outputs_every_patch_and_masks_exactly_n_minus_k_per_sample(mae):
    out = mae(IMAGES)
    assert tuple(out["pred"].shape) == (8, N, 8 * 8 * 3)
    mask = np_(out["mask"])
    np.testing.assert_array_equal(mask.sum(axis=1), N - KEEP)
    assert mae.num_patches == N and mae.num_visible == KEEP


def test_encoder_sees_only_the_visible_patches(mae):
    noise = fixed_noise()
    out = mae(IMAGES, noise=noise)
    mask = np_(out["mask"])
    patches = np_(patchify(ops.convert_to_tensor(IMAGES), 8))
    # Change every masked patch's pixels: nothing the model computes may change.
    changed = np.where(mask[..., None] == 1, RNG.random(patches.shape), patches).astype("float32")
    changed_images = np_(unpatchify(ops.convert_to_tensor(changed), 8, 4, 3))
    np.testing.assert_array_equal(np_(mae(changed_images, noise=noise)["pred"]), np_(out["pred"]))
    # Change one visible patch of image 0: its predictions change.
    visible = int(np.flatnonzero(mask[0] == 0)[0])
    changed = patches.copy()
    changed[0, visible] += 0.5
    pred = np_(mae(np_(unpatchify(ops.convert_to_tensor(changed), 8, 4, 3)), noise=noise)["pred"])
    assert np.abs(pred[0] - np_(out["pred"])[0]).max() > 1e-4
    np.testing.assert_array_equal(pred[1:], np_(out["pred"])[1:])  # other images untouched


def test_with_nothing_masked_the_encoder_path_is_the_vit_forward(mae):
    # MAE adds positions before masking and runs the ViT's own layers; with the masking
    # off (RandomMasking at inference) that is exactly the backbone on whole images.
    enc = mae.encoder
    tokens = enc.position_layer(enc.class_token(enc.patch_embedding(IMAGES)))
    visible, mask, _ = mae.masking(tokens[:, 1:], training=False)
    np.testing.assert_array_equal(np_(mask), 0.0)
    x = ops.concatenate([tokens[:, :1], visible], axis=1)
    for block in enc.transformer_blocks:
        x = block(x)
    np.testing.assert_allclose(np_(enc.encoder_norm(x)[:, 0]), np_(enc(IMAGES)), atol=1e-5)


def test_masking_is_off_at_inference_for_the_extracted_encoder(mae):
    # The paper's downstream use: the encoder on whole, uncorrupted images, deterministic.
    a, b = np_(mae.encoder(IMAGES)), np_(mae.encoder(IMAGES))
    assert a.shape == (8, 32)
    np.testing.assert_array_equal(a, b)
    assert not any(isinstance(layer, type(mae.masking)) for layer in mae.encoder._flatten_layers())


def test_the_trainer_draws_masks_from_its_seed_the_same_on_every_backend():
    # RandomMasking's stored seed-0 masks (tests/layers/test_random_masking.py), through MAE.
    from tests.layers.test_random_masking import EXPECTED_SEED0

    model = tiny_mae(seed=0)
    # Keys hash b * N + n, so the first two rows of a batch of 8 are the stored batch of 2.
    np.testing.assert_array_equal(np_(model(IMAGES)["mask"])[:2], EXPECTED_SEED0[0])


# --- the objective ---------------------------------------------------------------------


def test_norm_pix_targets_are_per_patch_normalised_pixels(mae):
    patches = np_(patchify(ops.convert_to_tensor(IMAGES), 8))
    expected = (patches - patches.mean(-1, keepdims=True)) / np.sqrt(patches.var(-1, ddof=1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(np_(mae.targets(IMAGES)), expected, rtol=1e-4, atol=1e-4)
    raw = tiny_mae(norm_pix_loss=False)
    np.testing.assert_allclose(np_(raw.targets(IMAGES)), patches, atol=1e-7)


def test_loss_is_the_masked_mse_and_visible_predictions_contribute_nothing(mae):
    out = mae(IMAGES, noise=fixed_noise())
    pred, mask = np_(out["pred"]), np_(out["mask"])
    target = np_(mae.targets(IMAGES))
    per_patch = ((pred - target) ** 2).mean(-1)
    expected = (per_patch * mask).sum() / mask.sum()
    loss = float(np_(mae.compute_loss(IMAGES, None, out)))
    assert loss == pytest.approx(expected, rel=1e-5)
    # At initialisation: normalised targets have unit variance, so the loss is about
    # 1 + var(pred) (Xavier decoder_pred from a LayerNorm'd width 32: var ~ 2*32/(32+192)).
    assert 1.0 < loss < 1.7
    perturbed = {"pred": np.where(mask[..., None] == 0, pred + 10.0, pred), "mask": mask}
    assert float(np_(mae.compute_loss(IMAGES, None, perturbed))) == pytest.approx(loss, rel=1e-6)
    one_masked = pred.copy()
    b, n = np.argwhere(mask == 1)[0]
    one_masked[b, n] += 1.0
    assert float(np_(mae.compute_loss(IMAGES, None, {"pred": one_masked, "mask": mask}))) > loss + 1e-3


def test_reconstruction_pictures(mae):
    noise = fixed_noise()
    pictures = mae.reconstruct(IMAGES, noise=noise, fill_value=0.25)
    mask = pictures["mask"]
    pred = np_(mae(IMAGES, noise=noise)["pred"])
    np.testing.assert_array_equal(mask, np_(mae(IMAGES, noise=noise)["mask"]))
    pixel_mask = np.repeat(np.repeat(mask.reshape(8, 4, 4), 8, axis=1), 8, axis=2)[..., None]  # (8, 32, 32, 1)
    masked_pixels = np.broadcast_to(pixel_mask == 1, IMAGES.shape)
    np.testing.assert_array_equal(pictures["images"], IMAGES)
    np.testing.assert_array_equal(pictures["masked"][~masked_pixels], IMAGES[~masked_pixels])
    np.testing.assert_array_equal(pictures["masked"][masked_pixels], 0.25)
    np.testing.assert_allclose(pictures["pasted"][~masked_pixels], IMAGES[~masked_pixels], atol=1e-6)
    np.testing.assert_allclose(pictures["pasted"][masked_pixels], pictures["reconstruction"][masked_pixels], atol=1e-6)
    # norm_pix: the prediction is un-normalised with each target patch's statistics.
    patches = np_(patchify(ops.convert_to_tensor(IMAGES), 8))
    expected = pred * np.sqrt(patches.var(-1, ddof=1, keepdims=True) + 1e-6) + patches.mean(-1, keepdims=True)
    np.testing.assert_allclose(pictures["reconstruction"], np_(unpatchify(ops.convert_to_tensor(expected), 8, 4, 3)),
                               atol=1e-5)


# --- position embeddings -----------------------------------------------------------------


def test_encoder_positions_become_fixed_2d_sincos(mae):
    layer = mae.encoder.position_layer
    np.testing.assert_allclose(np_(layer.embeddings), sincos_position_table_2d((4, 4), 32, 1), atol=1e-7)
    assert not layer.trainable and id(layer.embeddings) not in {id(v) for v in mae.trainable_variables}
    learned = tiny_mae(fixed_position_embeddings=False)
    assert learned.encoder.position_layer.trainable
    assert id(learned.encoder.position_layer.embeddings) in {id(v) for v in learned.trainable_variables}


# --- compile, fit, save --------------------------------------------------------------------


def test_compile_defaults_are_the_papers():
    opt = paper_optimizer()  # batch 4096, ImageNet, 800 epochs, 40 warmup
    assert isinstance(opt, SelectiveDecayAdamW)
    assert (opt.beta_1, opt.beta_2, opt.weight_decay) == (0.9, 0.95, 0.05)
    schedule = opt._learning_rate
    assert schedule.peak_learning_rate == pytest.approx(1.5e-4 * 4096 / 256)  # 2.4e-3
    assert schedule.warmup_steps == 40 * 312 and schedule.total_steps == 800 * 312
    short = paper_optimizer(batch_size=64, steps_per_epoch=10, epochs=20)._learning_rate
    assert short.peak_learning_rate == pytest.approx(3.75e-5)
    assert (short.warmup_steps, short.total_steps) == (10, 200)  # 1/20 of the run
    model = tiny_mae()
    model.compile()
    assert isinstance(model.optimizer, SelectiveDecayAdamW)
    kernel = model.decoder.predictor.kernel
    bias = model.decoder.predictor.bias
    gamma = model.decoder.norm.gamma
    query_bias = model.encoder.transformer_blocks[0].attention._query_dense.bias  # (heads, head_dim)
    assert model.optimizer.decays(kernel)
    assert not any(model.optimizer.decays(v) for v in (bias, gamma, query_bias))


def test_compile_refuses_a_loss():
    with pytest.raises(ValueError, match="MAE.compile takes no loss"):
        tiny_mae().compile(loss="mse")


def test_config_roundtrip(mae):
    clone = check_config_roundtrip(mae)
    assert (clone.mask_ratio, clone.decoder_depth, clone.decoder_dim, clone.norm_pix_loss) == (0.75, 1, 32, True)


def test_fit_then_save_and_load_give_identical_outputs_and_optimizer_state(tmp_path):
    model = tiny_mae()
    model.compile(batch_size=4, steps_per_epoch=2, epochs=1)
    table = np_(model.encoder.position_layer.embeddings)
    before = np_(model.decoder.predictor.kernel)
    history = check_fit(model, IMAGES, batch_size=4, epochs=1)
    assert 0.8 < history.history["loss"][0] < 2.0
    assert int(model.optimizer.iterations) == 2
    # One mask draw per step, the seed state carried through fit (JAX's stateless loop too).
    np.testing.assert_array_equal(np_(model.masking.seed_generator.state).astype("int64"), [0, 2])
    assert np.abs(np_(model.decoder.predictor.kernel) - before).max() > 0  # it learned
    np.testing.assert_array_equal(np_(model.encoder.position_layer.embeddings), table)  # fixed positions
    noise = fixed_noise()
    loaded = check_saved_model(model, IMAGES, tmp_path,
                               outputs_of=lambda m, x: m(x, training=False, noise=noise)["pred"])
    assert isinstance(loaded.optimizer, SelectiveDecayAdamW)
    assert not loaded.encoder.position_layer.trainable


# --- presets ---------------------------------------------------------------------------------


def test_paper_presets_use_the_papers_decoder_and_no_encoder_dropout():
    for name in ("mae_vit_b16", "mae_vit_l16", "mae_vit_h14"):
        preset = MAE_PRESETS[name]
        assert preset["arguments"] == {"decoder_depth": 8, "decoder_dim": 512, "decoder_heads": 16}
        assert preset["backbone"]["overrides"]["dropout_rate"] == 0.0
    assert MAE_PRESETS["mae_vit_b16"]["backbone"]["preset"] == "vit_b16"


def _decoder_parameters(enc_dim, d, depth, patch_values):
    block = 4 * (d * d + d) + 2 * 2 * d + (d * 4 * d + 4 * d) + (4 * d * d + d)  # attention, 2 norms, MLP
    return (enc_dim * d + d) + d + depth * block + 2 * d + (d * patch_values + patch_values)


def test_tiny_preset():
    preset = MAE_PRESETS["mae_tiny"]
    assert preset["arguments"] == {"decoder_depth": 2, "decoder_dim": 128, "decoder_heads": 4}
    encoder = preset["backbone"]["overrides"]
    assert (encoder["image_shape"], encoder["patch_size"]) == ((32, 32, 3), 4)


def test_from_preset_routes_overrides_to_the_encoder_and_the_trainer_and_the_decoder_has_the_expected_size():
    # The tiny test sizes (cheap to build), reached through the preset machinery.
    model = MAE.from_preset("mae_tiny", patch_size=8, num_layers=2, hidden_dim=32, num_heads=2, mlp_dim=64,
                            decoder_depth=1, decoder_dim=32, decoder_heads=2, mask_ratio=0.8, seed=0)
    assert model.encoder.image_shape == (32, 32, 3) and model.encoder.dropout_rate == 0.0  # from the preset
    assert model.mask_ratio == 0.8 and model.encoder.hidden_dim == 32
    assert model.num_patches == 16 and model.num_visible == 3  # round(16 x 0.2) = round(3.2)
    assert model.decoder.count_params() == _decoder_parameters(32, 32, 1, 8 * 8 * 3)
    # The paper's decoder on ViT-B/16 by the same count: 26,008,320 parameters.
    assert _decoder_parameters(768, 512, 8, 768) == 26_008_320


# --- errors ----------------------------------------------------------------------------------


def test_unknown_preset_and_override_are_refused():
    with pytest.raises(ValueError, match="Unknown MAE preset 'mae_vit_z'"):
        MAE.from_preset("mae_vit_z")
    with pytest.raises(ValueError, match=r"Unknown override\(s\) \['depth'\]"):
        MAE.from_preset("mae_tiny", depth=3)


def test_bad_encoders_are_refused(mae, monkeypatch):
    with pytest.raises(ValueError, match="MAE needs a ViTBackbone encoder"):
        MAE(keras.Sequential([keras.Input((32, 32, 3)), keras.layers.Flatten()]))
    # The checks read the encoder's configuration; set it on the (cheap) tiny encoder.
    encoder = mae.encoder
    for attribute, value, message in [
        ("hybrid", "conv", "hybrid"),
        ("position_embedding", "relative", "position_embedding='relative'"),
        ("position_embedding", "relative_1d", "position_embedding='relative_1d'"),
        ("hidden_dim", 30, "hidden_dim divisible by 4; the encoder's is 30"),
    ]:
        with monkeypatch.context() as patch:
            patch.setattr(encoder, attribute, value)
            with pytest.raises(ValueError, match=message):
                tiny_mae(encoder)


@pytest.mark.parametrize("overrides, message", [
    (dict(mask_ratio=1.0), r"mask_ratio must be a number in \(0, 1\)"),
    (dict(mask_ratio=0.99), r"keeps 0 visible"),
    (dict(decoder_dim=30, decoder_heads=3), "decoder_dim 30 should be divisible by 4"),
    (dict(decoder_dim=32, decoder_heads=3), "decoder_dim 32 should be divisible by decoder_heads 3"),
    (dict(decoder_depth=0), "decoder_depth must be a positive int; got 0"),
])
def test_bad_arguments_are_refused(overrides, message):
    with pytest.raises(ValueError, match=message):
        tiny_mae(**overrides)


def test_sample_weights_are_refused(mae):
    with pytest.raises(ValueError, match="sample_weight is not supported"):
        mae.compute_loss(IMAGES, None, mae(IMAGES), sample_weight=np.ones(8))


def test_resumed_run_draws_the_masks_of_the_uninterrupted_run(tmp_path):
    """Interrupted after epoch 0, resumed with BackupAndRestore: the uninterrupted run's weights.

    The masks come from the masking layer's SeedGenerator, which no checkpoint holds;
    EpochSeeds (used by the `mae` recipe) sets it from (seed, epoch)."""
    from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds

    def run(name, interrupt=False):
        keras.utils.set_random_seed(0)  # the same initial weights in every run
        model = tiny_mae()
        model.compile(optimizer=keras.optimizers.SGD(0.5))
        callbacks = [keras.callbacks.BackupAndRestore(str(tmp_path / name)), EpochSeeds(3)]
        callbacks += [InterruptAfterFirstEpoch()] if interrupt else []
        model.fit(IMAGES, batch_size=4, epochs=2, shuffle=False, verbose=0, callbacks=callbacks)
        return [np_(w) for w in model.trainable_weights]

    straight = run("straight")
    with pytest.raises(RuntimeError, match="interrupted"):
        run("broken", interrupt=True)
    for a, b in zip(straight, run("broken")):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # (Without EpochSeeds the resumed epoch re-draws epoch 0's masks and this fails: max difference 4.1e-3 on TF, measured.)
