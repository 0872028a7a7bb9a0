"""The CMC trainer (Tian et al. 2019) with tiny encoders: scores, banks, Zs, the loss at init, the encoder, files."""

import math

import numpy as np
import pytest
from skimage.color import rgb2lab

import keras
from keras import ops

from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds
from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
from keras_paperzoo.data.indexed import with_index
from keras_paperzoo.models import CMC
from keras_paperzoo.models.cmc import CMC_PRESETS, CMCAugmentation
from keras_paperzoo.training.optimizers import ScheduledMomentumSGD
from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model
from tests.model_tests import check_resume_from_saved


def _np(x):
    return np.asarray(ops.convert_to_numpy(x)).copy()


def _unit(x):
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


@pytest.fixture(autouse=True)
def _seeded():
    keras.utils.set_random_seed(0)


def _backbone(size=8, channels=1, name="tiny"):
    return keras.Sequential([keras.Input((size, size, channels)), keras.layers.Conv2D(4, 3, strides=2, name="conv"),
                             keras.layers.BatchNormalization(name="bn"), keras.layers.ReLU()], name=name)


def _cmc(backbone=None, **kwargs):
    args = dict(num_data=32, num_negatives=8, feature_dim=16, temperature=0.5, augmentation=None, seed=0)
    args.update(kwargs)
    return CMC(backbone or _backbone(), **args)


def _images(n, size=8, seed=0):
    return np.random.default_rng(seed).random((n, size, size, 3)).astype("float32")


def _lab_views(images):
    """The authors' views, with scikit-image's rgb2lab and their Normalize(mean, std) constants."""
    lab = rgb2lab(images.astype("float64"))
    mean = np.array([50.0, 6.025, -6.6895])
    std = np.array([50.0, 92.208, 101.1675])
    lab = ((lab - mean) / std).astype("float32")
    return lab[..., :1], lab[..., 1:]


def test_each_view_is_scored_against_the_other_views_bank():
    model = _cmc()
    rng = np.random.default_rng(1)
    l_rows, ab_rows = _unit(rng.normal(size=(32, 16))), _unit(rng.normal(size=(32, 16)))
    model.l_bank.bank.assign(l_rows.astype("float32"))
    model.ab_bank.bank.assign(ab_rows.astype("float32"))
    z_l, z_ab = _unit(rng.normal(size=(4, 16))).astype("float32"), _unit(rng.normal(size=(4, 16))).astype("float32")
    index, negatives = np.array([3, 0, 7, 31], "int32"), rng.integers(0, 32, size=(4, 8)).astype("int32")
    logits = model.scores(z_l, z_ab, index, negatives)
    rows = np.concatenate([index[:, None], negatives], axis=1)  # (B, 1 + m), positive first
    # The authors' NCEAverage: out_l = memory_ab . l, out_ab = memory_l . ab, one draw of rows for both.
    np.testing.assert_allclose(_np(logits["l"]), np.einsum("bc,bkc->bk", z_l, ab_rows[rows]) / 0.5, atol=1e-5)
    np.testing.assert_allclose(_np(logits["ab"]), np.einsum("bc,bkc->bk", z_ab, l_rows[rows]) / 0.5, atol=1e-5)


def test_a_step_estimates_each_z_on_its_own_direction_and_moves_both_banks():
    model = _cmc()
    images = _images(8)
    index = np.array([5, 1, 30, 2, 9, 11, 0, 17], "int32")
    x = {"images": images, "index": index}
    # Every row of a bank alike (u in the ab bank, w in the L bank): the scores do not depend on the drawn
    # negatives, so Z_l = n mean(exp(z_l . u / tau)) over the batch and Z_ab = n mean(exp(z_ab . w / tau)).
    u, w = _unit(np.arange(1.0, 17.0)), _unit(np.cos(np.arange(16.0)))
    model.ab_bank.bank.assign(np.tile(u, (32, 1)).astype("float32"))
    model.l_bank.bank.assign(np.tile(w, (32, 1)).astype("float32"))
    before = {name: _np(bank.bank) for name, bank in (("l", model.l_bank), ("ab", model.ab_bank))}
    y_pred = model.forward_pass(x, training=True)
    z = {"l": _np(y_pred["z_l"]), "ab": _np(y_pred["z_ab"])}
    loss = model.compute_loss(x=x, y_pred=y_pred, training=True)
    assert np.isfinite(float(_np(loss)))
    assert float(_np(model.l_normalizer.z)) == pytest.approx(32 * np.mean(np.exp(z["l"] @ u / 0.5)), rel=1e-5)
    assert float(_np(model.ab_normalizer.z)) == pytest.approx(32 * np.mean(np.exp(z["ab"] @ w / 0.5)), rel=1e-5)
    # v_i <- normalize(0.5 v_i + 0.5 z_i) for the batch's rows of each bank, with that view's features.
    for name, bank in (("l", model.l_bank), ("ab", model.ab_bank)):
        after = _np(bank.bank)
        np.testing.assert_allclose(after[index], _unit(0.5 * before[name][index] + 0.5 * z[name]), atol=1e-6)
        untouched = np.setdiff1d(np.arange(32), index)
        np.testing.assert_array_equal(after[untouched], before[name][untouched])
    # Z is kept: a second batch divides by the first batch's Z.
    zs = _np(model.l_normalizer.z), _np(model.ab_normalizer.z)
    model.compute_loss(x={"images": _images(8, seed=5), "index": index}, training=True)
    assert (_np(model.l_normalizer.z), _np(model.ab_normalizer.z)) == zs


@pytest.mark.parametrize("loss", ["nce", "softmax"])
def test_loss_at_initialisation_is_the_analytic_value(loss):
    # tau = 1 and 128-d features against random unit rows: scores spread ~ 1 / sqrt(128), so all 1 + m
    # candidates are alike. NCE (each direction): every P = 1 / n after Z, h = 1 / (1 + m), J = log(1 + m)
    # + m log((1 + m) / m); softmax: log(1 + m). The two directions add.
    m, n = 16, 64
    model = _cmc(num_data=n, num_negatives=m, feature_dim=128, temperature=1.0, loss=loss)
    model.compile(optimizer=keras.optimizers.SGD(0.0))
    history = model.fit(with_index(_images(n, seed=2)), batch_size=16, epochs=1, verbose=0).history
    one_way = math.log(1 + m) + (m * math.log((1 + m) / m) if loss == "nce" else 0.0)
    assert history["loss"][0] == pytest.approx(2 * one_way, rel=0.01)
    assert history["l_loss"][0] == pytest.approx(one_way, rel=0.01)
    assert history["ab_loss"][0] == pytest.approx(one_way, rel=0.01)
    assert history["contrastive_accuracy"][0] <= 0.4  # chance is 1 / 17


def test_encoder_is_both_views_features_concatenated():
    model = _cmc()
    images = _images(4)
    luminance, chroma = _lab_views(images)
    expected = np.concatenate([_np(ops.mean(model.backbone(luminance), axis=(1, 2))),
                               _np(ops.mean(model.ab_backbone(chroma), axis=(1, 2)))], axis=1)  # (B, 4 + 4)
    np.testing.assert_allclose(_np(model.encoder(images)), expected, atol=1e-4)
    np.testing.assert_allclose(_np(model.represent(images)), expected, atol=1e-4)
    # With the training set's statistics in the augmentation, the encoder takes normalised RGB: the same features.
    mean, std = [0.4, 0.5, 0.6], [0.2, 0.25, 0.3]
    normalising = _cmc(backbone=model.backbone, ab_backbone=model.ab_backbone,
                       augmentation={"mean": mean, "std": std})
    assert isinstance(normalising.augmentation, CMCAugmentation)
    np.testing.assert_allclose(_np(normalising.encoder((images - mean) / std)), expected, atol=1e-4)
    # Inference returns the two unit embeddings side by side.
    z = _np(model(images))
    assert z.shape == (4, 32)
    np.testing.assert_allclose(np.linalg.norm(z[:, :16], axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(z[:, 16:], axis=1), 1.0, rtol=1e-5)


def test_fit_config_and_saved_model_keep_banks_and_zs(tmp_path):
    model = _cmc(loss="nce", num_classes=3, augmentation={"crop_scale": (0.5, 1.0)})  # views drawn in the step
    model.compile(batch_size=8, steps_per_epoch=4, epochs=2)
    images, labels = _images(32, seed=3), np.arange(32) % 3
    history = check_fit(model, with_index(images), labels, batch_size=8, epochs=1)
    assert set(history.history) == {"loss", "l_loss", "ab_loss", "contrastive_accuracy", "probe_accuracy"}
    zs = float(_np(model.l_normalizer.z)), float(_np(model.ab_normalizer.z))
    assert min(zs) > 0 and zs[0] != zs[1]
    banks = _np(model.l_bank.bank)
    check_fit(model, with_index(images), labels, batch_size=8, epochs=1)
    assert (float(_np(model.l_normalizer.z)), float(_np(model.ab_normalizer.z))) == zs  # fixed after batch 1
    assert not np.allclose(_np(model.l_bank.bank), banks)
    clone = check_config_roundtrip(model)
    assert (clone.num_data, clone.num_negatives, clone.feature_dim, clone.objective) == (32, 8, 16, "nce")
    assert clone.ab_backbone.input_shape == (None, 8, 8, 2) and clone.num_classes == 3
    loaded = check_saved_model(model, images[:4], tmp_path)  # outputs, every weight (banks, Zs), optimizer
    assert (float(_np(loaded.l_normalizer.z)), float(_np(loaded.ab_normalizer.z))) == zs
    np.testing.assert_allclose(_np(loaded.encoder(images[:4])), _np(model.encoder(images[:4])), atol=1e-6)
    softmax = _cmc(loss="softmax")
    softmax.compile(optimizer=keras.optimizers.SGD(0.1))
    check_fit(softmax, with_index(images), batch_size=8, epochs=1)
    assert not hasattr(softmax, "l_normalizer") and check_config_roundtrip(softmax).objective == "softmax"


def test_exact_resume_from_a_saved_model(tmp_path):
    """2 epochs straight = 1 epoch, save, load, 1 more: weights, banks, Zs, optimizer state."""
    images = _images(16, seed=4)

    def fresh():
        keras.utils.set_random_seed(0)
        model = _cmc(num_data=16, augmentation={"crop_scale": (0.5, 1.0)})
        model.compile(batch_size=8, steps_per_epoch=2, epochs=2)
        return model

    def fit(model, epochs, initial_epoch=0):
        model.fit(with_index(images), batch_size=8, epochs=epochs, initial_epoch=initial_epoch, shuffle=False,
                  verbose=0, callbacks=[EpochSeeds(7)])

    def check_saved(model, resumed, straight):
        assert isinstance(resumed.optimizer, ScheduledMomentumSGD)

    # Then every weight (encoders, heads, both banks, both Zs, seeds) and optimizer variable as straight.
    check_resume_from_saved(fresh, fit, tmp_path, check_saved=check_saved)


def test_presets_and_the_papers_optimizer():
    half = CMC_PRESETS["cmc_resnet50_half"]  # the authors' resnet50v1: stages halved, 64-filter stem kept
    assert half["backbone"]["preset"] == "resnet50"
    assert half["backbone"]["overrides"]["stage_filters"] == [32, 64, 128, 256]
    assert half["backbone"]["overrides"]["stem_filters"] == 64
    assert half["arguments"] == {"num_negatives": 4096, "temperature": 0.07, "feature_dim": 128, "loss": "nce",
                                 "augmentation": {"crop_scale": (0.08, 1.0)}}
    tiny = CMC.from_preset("cmc_tiny", image_shape=(16, 16, 3), num_data=64)
    assert (tiny.backbone.input_shape, tiny.ab_backbone.input_shape) == ((None, 16, 16, 1), (None, 16, 16, 2))
    assert tiny.encoder.output_shape == (None, 16) and tiny.num_negatives == 32
    small = CMC.from_preset("cmc_resnet20_cifar", num_data=5000)  # the backbone preset's own 32 x 32
    assert (small.backbone.input_shape, small.ab_backbone.input_shape) == ((None, 32, 32, 1), (None, 32, 32, 2))
    model = _cmc(num_data=1000)
    model.compile(batch_size=100)  # 10 updates per epoch x 240 epochs
    optimizer = model.optimizer
    assert isinstance(optimizer, ScheduledMomentumSGD)
    assert optimizer.momentum == pytest.approx(0.9) and optimizer.l2 == pytest.approx(1e-4)
    schedule = optimizer._learning_rate
    assert schedule.initial_learning_rate == pytest.approx(0.03)
    assert list(schedule.boundaries) == [1200, 1600, 2000]  # after epochs 120, 160, 200 of 240
    model.compile(batch_size=8, steps_per_epoch=10, epochs=24)
    assert list(model.optimizer._learning_rate.boundaries) == [120, 160, 200]


def test_bad_input_names_the_value_and_rule():
    with pytest.raises(ValueError, match="num_negatives=64 rows per image from memory banks of num_data=32 rows"):
        _cmc(num_negatives=64)
    with pytest.raises(ValueError, match="loss must be 'nce' or 'softmax'; got 'triplet'"):
        _cmc(loss="triplet")
    with pytest.raises(ValueError, match=r"bank_momentum must be a number in \[0, 1\); got 1"):
        _cmc(bank_momentum=1)
    with pytest.raises(ValueError, match="temperature must be a number > 0; got 0"):
        _cmc(temperature=0)
    with pytest.raises(ValueError, match=r"encodes the L view, so it takes 1-channel images .*\(None, 8, 8, 3\)"):
        _cmc(backbone=_backbone(channels=3))
    model = _cmc()
    gray = np.zeros((4, 8, 8, 1), "float32")
    with pytest.raises(ValueError, match=r"needs images of shape \(B, H, W, 3\); got shape \(4, 8, 8, 1\)"):
        model.compute_loss(x={"images": gray, "index": np.arange(4, dtype="int32")})
    with pytest.raises(ValueError, match=r"got shape \(4, 8, 8, 1\)"):
        model(gray)
    model.compile(optimizer=keras.optimizers.SGD(0.1))
    images = _images(40)
    with pytest.raises(ValueError, match=r"has 32 rows .* must be in \[0, 32\); got index 39"):
        model.fit(with_index(images), batch_size=8, verbose=0)
    with pytest.raises(ValueError, match=r"must be in \[0, 32\); got index 39"):
        model.fit(EpochShuffledBatches(images, batch_size=8, with_index=True), verbose=0)
    with pytest.raises(ValueError, match=r"x must be \{'images': images, 'index': indices\}"):
        model.fit(images[:32], batch_size=8, verbose=0)
