"""The InstDisc trainer (Wu et al. 2018) with tiny backbones: NCE against NumPy, the bank, Z, the proximal term."""

import math

import numpy as np
import pytest

import keras

from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds
from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
from keras_paperzoo.data.indexed import with_index
from keras_paperzoo.models.instdisc import INSTDISC_PRESETS, InstDisc
from keras_paperzoo.training.optimizers import ScheduledMomentumSGD
from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model
from tests.model_tests import check_resume_from_saved
from tests.model_tests import random_images as _images
from tests.model_tests import seeded  # noqa: F401 (autouse: the same initial weights in every test)
from tests.model_tests import tiny_backbone
from tests.model_tests import to_numpy as _np


def _backbone():
    """No batch norm: an image's f is the same whichever batch it is in."""
    return tiny_backbone(filters=8, batch_norm=False)  # (B, 3, 3, 8): h is 8-d


def _instdisc(num_data=32, **kwargs):
    args = dict(num_negatives=16, feature_dim=8, augmentation=None, seed=0)
    args.update(kwargs)
    return InstDisc(_backbone(), num_data, **args)


def _unit(x):
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _nce_numpy(scores, z, num_data):
    """Eq. 5-6 in float64: -log h(positive) - sum_j log(1 - h(noise_j)), h = P / (P + m / n), P = exp(s) / Z."""
    p = np.exp(scores.astype("float64")) / z
    noise = (p.shape[1] - 1) / num_data
    return float(np.mean(-np.log(p[:, 0] / (p[:, 0] + noise)) - np.sum(np.log(noise / (p[:, 1:] + noise)), 1)))


def _noise_rows(model, batch):
    """The (B, m) rows the next step will draw: the bank's noise generator, replayed from its state."""
    replay = keras.random.SeedGenerator(0)
    replay.state.assign(model.memory_bank.seed_generator.state)
    return _np(keras.random.randint((batch, model.num_negatives), 0, model.num_data, seed=replay, dtype="int32"))


def test_the_step_is_nce_of_the_images_own_rows_against_numpy():
    # A shuffled batch: images 5, 0, 9, 3 with their indices. The positive of each must be the
    # row of its own index, read before the step writes it; the noise rows the bank's uniform draws.
    model = _instdisc(num_data=12, num_negatives=6, temperature=0.1)
    images = _images(12)
    order = np.array([5, 0, 9, 3])
    x = {"images": images[order], "index": order.astype("int32")}
    bank = _np(model.bank)
    noise = _noise_rows(model, len(order))
    f = _np(model.embedding(images[order]))  # (4, 8): no augmentation, no batch norm
    loss = _np(model.compute_loss(x=x, training=True))
    scores = np.concatenate([np.sum(f * bank[order], -1)[:, None], np.einsum("bd,bmd->bm", f, bank[noise])], 1) / 0.1
    z = 12 * np.mean(np.exp(scores))  # eq. 7 from this first batch
    assert _np(model.z) == pytest.approx(z, rel=1e-5)
    assert loss == pytest.approx(_nce_numpy(scores, z, 12), rel=1e-5)
    # The same scores from another row order would give another loss: the rows are the images' own.
    wrong = np.concatenate([np.sum(f * bank[order[::-1]], -1)[:, None], scores[:, 1:] * 0.1], 1) / 0.1
    assert abs(_nce_numpy(wrong, z, 12) - loss) > 1e-2
    # The step then wrote the batch's rows (momentum 0.5) and no other.
    after = _np(model.bank)
    np.testing.assert_allclose(after[order], _unit(0.5 * bank[order] + 0.5 * f), rtol=1e-5, atol=1e-6)
    others = np.setdiff1d(np.arange(12), order)
    np.testing.assert_array_equal(after[others], bank[others])
    assert _np(model.contrastive_accuracy_tracker.result()) == pytest.approx(np.mean(scores.argmax(1) == 0))
    # loss="softmax": the cross-entropy over the same 1 + m scores, positive first; no Z.
    softmax = _instdisc(num_data=12, num_negatives=6, temperature=0.1, loss="softmax")
    bank = _np(softmax.bank)
    noise = _noise_rows(softmax, len(order))
    f = _np(softmax.embedding(images[order]))
    loss = _np(softmax.compute_loss(x=x, training=True))
    scores = np.concatenate([np.sum(f * bank[order], -1)[:, None], np.einsum("bd,bmd->bm", f, bank[noise])], 1) / 0.1
    expected = np.mean(np.log(np.sum(np.exp(scores), 1)) - scores[:, 0])
    assert loss == pytest.approx(expected, rel=1e-5) and softmax.z is None


def test_loss_at_initialisation_is_the_analytic_value():
    # Equal scores (tau -> infinity) make every P = 1 / n, so h = 1 / (1 + m) for the positive and each noise
    # sample: J = log(1 + m) + m log(1 + 1 / m) (about log(m) + 1). At the paper's tau = 0.07 the scores of
    # unrelated unit vectors in d dims spread as N(0, 1 / (d tau^2)); the positive's term then gains log E[e^s]
    # = 1 / (2 d tau^2) (0.80 for d = 128) over log m, the noise terms still sum to about 1.
    n, m, batch = 1024, 256, 32
    images = _images(batch, seed=1)
    x = with_index(images)
    for temperature, expected, tolerance in ((100.0, math.log(1 + m) + m * math.log(1 + 1 / m), 1e-3),
                                             (0.07, math.log(m) + 1 + 1 / (2 * 128 * 0.07**2), 0.5)):
        model = InstDisc(_backbone(), n, num_negatives=m, temperature=temperature, augmentation=None, seed=1)
        model.compile(optimizer=keras.optimizers.SGD(0.0))
        history = model.fit(x, batch_size=batch, epochs=1, verbose=0).history
        assert history["loss"][0] == pytest.approx(expected, abs=tolerance), temperature
        assert history["proximal_loss"][0] == 0.0 and history["nce_loss"] == history["loss"]
    # (5.55 + 1.00 = 6.55 and 5.55 + 1.80 = 7.34 here; a Z without the factor n, or m P_n = 1 / n, is far off.)


def test_fit_pairs_every_image_with_its_row_after_keras_shuffles():
    # lr 0: f is fixed. One epoch of 4 shuffled batches visits each row once: row j must become
    # normalize(0.5 v_j + 0.5 f(x_j)), f of image j, whatever batch it landed in.
    model = _instdisc(num_data=16, num_negatives=8)
    model.compile(optimizer=keras.optimizers.SGD(0.0))
    images = _images(16, seed=2)
    bank = _np(model.bank)
    f = _np(model.embedding(images))
    model.fit(with_index(images), batch_size=4, epochs=1, shuffle=True, verbose=0)
    np.testing.assert_allclose(_np(model.bank), _unit(0.5 * bank + 0.5 * f), rtol=1e-5, atol=1e-6)
    # bank_momentum 0 (the paper's f_i -> v_i): the rows are the features themselves, and the paper's
    # kNN of the training images against the bank finds each image's own row (k = 1).
    replace = _instdisc(num_data=16, num_negatives=8, bank_momentum=0.0)
    replace.compile(optimizer=keras.optimizers.SGD(0.0))
    replace.fit(with_index(images), batch_size=4, epochs=1, shuffle=True, verbose=0)
    np.testing.assert_allclose(_np(replace.bank), _unit(_np(replace.embedding(images))), rtol=1e-5, atol=1e-6)
    labels = np.arange(16)  # every image its own class
    assert replace.memory_bank_knn(labels, images, labels, k=1) == 1.0


def test_z_is_fixed_after_the_first_step_and_restored_from_a_saved_model(tmp_path):
    # A bank whose rows are all one unit vector u: every score of image b is f_b . u / tau, whichever rows
    # are drawn, so Z = n x mean_b exp(f_b . u / tau) over the first batch (eq. 7).
    model = _instdisc(num_data=20, num_negatives=5)
    u = _unit(np.arange(1, 9, dtype="float32"))
    model.bank.assign(np.tile(u, (20, 1)))
    model.compile(optimizer=keras.optimizers.SGD(0.1))
    first, second = _images(20, seed=3), _images(20, seed=4)
    assert _np(model.z) == 0.0  # not estimated yet
    f = _np(model.embedding(first[:10]))
    model.fit({"images": first[:10], "index": np.arange(10, dtype="int32")}, batch_size=10, epochs=1, verbose=0)
    z = 20 * np.mean(np.exp(f @ u / 0.07))
    assert _np(model.z) == pytest.approx(z, rel=1e-5)
    model.fit(with_index(second), batch_size=10, epochs=1, verbose=0)  # other images, moved weights and rows
    assert _np(model.z) == pytest.approx(z, rel=1e-5)
    model.save(tmp_path / "instdisc.keras")
    loaded = keras.saving.load_model(tmp_path / "instdisc.keras", safe_mode=True)
    assert _np(loaded.z) == _np(model.z)
    loaded.fit(with_index(first), batch_size=10, epochs=1, verbose=0)
    assert _np(loaded.z) == pytest.approx(z, rel=1e-5)  # not estimated again


def test_proximal_term_is_lambda_mean_squared_distance_to_the_stored_row():
    model = _instdisc(num_data=8, num_negatives=4, proximal=3.0)
    images = _images(8, seed=5)
    bank = _np(model.bank)
    f = _np(model.embedding(images))
    loss = _np(model.compute_loss(x=with_index(images), training=True))
    proximal = 3.0 * np.mean(np.sum((f - bank) ** 2, axis=1))  # lambda ||v_i^(t) - v_i^(t-1)||^2, same i
    assert _np(model.proximal_loss_tracker.result()) == pytest.approx(proximal, rel=1e-5)
    assert loss == pytest.approx(_np(model.objective_loss_tracker.result()) + proximal, rel=1e-5)
    assert proximal > 1.0  # random rows: ||f - v||^2 is about 2


def test_exact_resume_of_bank_z_seeds_and_data_order(tmp_path):
    """2 epochs straight = 1 epoch, save, load, 1 more: bank, Z, noise generator, weights, optimizer."""
    images = _images(16, seed=6)
    batches = EpochShuffledBatches(images, batch_size=4, seed=3, with_index=True)

    def fit(model, epochs, initial_epoch=0):
        model.fit(batches, epochs=epochs, initial_epoch=initial_epoch, shuffle=False, verbose=0,
                  callbacks=[batches.epoch_callback(), EpochSeeds(7)])

    def fresh():
        model = _instdisc(num_data=16, num_negatives=8, proximal=1.0,
                          augmentation=keras.layers.GaussianNoise(0.1, seed=2))
        model.compile(batch_size=4, steps_per_epoch=4, epochs=2)
        return model

    def check_saved(model, resumed, straight):
        assert isinstance(resumed.optimizer, ScheduledMomentumSGD) and int(_np(resumed.optimizer.iterations)) == 4

    # Then every weight (backbone, head, bank, Z, generators) and optimizer variable as straight.
    model, _, start, straight = check_resume_from_saved(fresh, fit, tmp_path, check_saved=check_saved)
    bank = [w.path for w in model.weights].index(model.bank.path)
    assert not np.allclose(straight[0][bank], start[bank])  # (the bank moved)


def test_fit_on_raw_images_config_and_saved_model(tmp_path):
    model = _instdisc(num_data=16, num_negatives=8, augmentation="default", num_classes=3)  # drawn in the step
    model.compile(batch_size=8, steps_per_epoch=2, epochs=1)
    images = _images(16, seed=7)
    history = check_fit(model, with_index(images), np.arange(16) % 3, batch_size=8, epochs=1)
    assert set(history.history) == {"loss", "nce_loss", "proximal_loss", "contrastive_accuracy", "probe_accuracy"}
    assert type(model.augmentation).__name__ == "MoCoAugmentation" and model.augmentation.version == 1
    clone = check_config_roundtrip(model)
    assert (clone.num_data, clone.num_negatives, clone.feature_dim, clone.temperature) == (16, 8, 8, 0.07)
    assert (clone.bank_momentum, clone.proximal, clone.num_classes, clone.seed) == (0.5, 0.0, 3, 0)
    assert clone.objective == "nce" and check_config_roundtrip(_instdisc(loss="softmax")).objective == "softmax"
    loaded = check_saved_model(model, images[:4], tmp_path)  # outputs, weights (bank, Z), optimizer state
    np.testing.assert_allclose(np.linalg.norm(_np(loaded(images[:4])), axis=1), 1.0, rtol=1e-5)  # f: unit vectors
    assert loaded.encoder.output_shape == (None, 8)  # h


def test_compile_defaults_and_presets_are_the_papers():
    model = _instdisc()
    model.compile()  # 200 ImageNet epochs at batch 256
    optimizer = model.optimizer
    assert isinstance(optimizer, ScheduledMomentumSGD)
    assert optimizer.momentum == pytest.approx(0.9) and optimizer.l2 == pytest.approx(1e-4)
    schedule = optimizer._learning_rate
    steps = 1_281_167 // 256
    assert schedule.initial_learning_rate == pytest.approx(0.03) and schedule.factor == pytest.approx(0.1)
    assert schedule.boundaries == [120 * steps, 160 * steps]
    model.compile(batch_size=128, steps_per_epoch=10, epochs=20)
    schedule = model.optimizer._learning_rate
    assert schedule.initial_learning_rate == pytest.approx(0.015) and schedule.boundaries == [120, 160]
    paper = INSTDISC_PRESETS["instdisc_resnet50"]
    assert paper["backbone"]["preset"] == "resnet50"
    assert paper["arguments"] == {"num_data": 1_281_167, "num_negatives": 4096, "temperature": 0.07,
                                  "feature_dim": 128}
    assert INSTDISC_PRESETS["instdisc_cifar_resnet18"]["arguments"]["temperature"] == 0.1  # the authors' cifar.py
    tiny = INSTDISC_PRESETS["instdisc_tiny"]  # (built by the recipe's tests: a ResNet takes long to build on JAX)
    assert tiny["arguments"]["num_negatives"] < 64  # below the recipe tests' 64 images
    on_ours = InstDisc.from_preset("instdisc_resnet50", backbone=_backbone(), num_data=5000)  # a preset's arguments
    assert (on_ours.num_negatives, on_ours.temperature, on_ours.num_data) == (4096, 0.07, 5000)
    defaults = InstDisc(_backbone(), 4096)
    assert (defaults.num_negatives, defaults.temperature, defaults.feature_dim) == (4096, 0.07, 128)
    assert (defaults.bank_momentum, defaults.proximal, defaults.objective) == (0.5, 0.0, "nce")
    assert defaults.head.widths == (128,) and not defaults.head.batch_norm  # one linear layer
    with pytest.raises(ValueError, match="loss .* fixed"):
        model.compile(loss="mse")


def test_bad_input_names_the_value_and_the_rule():
    with pytest.raises(ValueError, match="memory bank of num_data=100 rows .* cannot give num_negatives=4096 noise "
                                         "samples: num_negatives must be at most num_data"):
        InstDisc(_backbone(), 100)
    with pytest.raises(ValueError, match="num_data must be an int >= 1; got num_data=0"):
        InstDisc(_backbone(), 0)
    with pytest.raises(ValueError, match="temperature must be a number > 0; got temperature=0"):
        _instdisc(temperature=0)
    with pytest.raises(ValueError, match=r"bank_momentum must be a number in \[0, 1\); got bank_momentum=1.0"):
        _instdisc(bank_momentum=1.0)
    with pytest.raises(ValueError, match="proximal .* must be a number >= 0; got proximal=-1"):
        _instdisc(proximal=-1)
    with pytest.raises(ValueError, match="loss must be 'nce' .* or 'softmax'; got loss='infonce'"):
        _instdisc(loss="infonce")
    model = _instdisc(num_data=16, num_negatives=8)
    model.compile(optimizer=keras.optimizers.SGD(0.1))
    images = _images(16)
    start = _np(model.bank)
    index = np.arange(16, dtype="int32")
    index[3] = 16  # one row past the bank
    with pytest.raises(ValueError, match=r"has 16 rows .* each index must be in \[0, 16\); got index 16"):
        model.fit({"images": images, "index": index}, batch_size=8, verbose=0)
    index[3] = -1
    with pytest.raises(ValueError, match="got index -1"):
        model.fit({"images": images, "index": index}, batch_size=8, verbose=0)
    with pytest.raises(ValueError, match=r"got index 19"):  # 20 images for a 16-row bank
        model.fit(EpochShuffledBatches(_images(20), batch_size=4, with_index=True), verbose=0)
    with pytest.raises(ValueError, match=r"x must be \{'images': images, 'index': indices\}.*got ndarray"):
        model.fit(images, batch_size=8, verbose=0)
    with pytest.raises(ValueError, match=r"EpochShuffledBatches\(\.\.\., with_index=True\)"):
        model.fit(EpochShuffledBatches(images, batch_size=4), verbose=0)
    assert int(_np(model.optimizer.iterations)) == 0
    np.testing.assert_array_equal(_np(model.bank), start)  # refused before training
    with pytest.raises(ValueError, match="train_labels must hold 16 labels .*; got 3"):
        model.memory_bank_knn(np.arange(3), images, np.arange(16))
