"""The SimCLR trainer (Chen et al. 2020a, 2020b) with tiny backbones."""

import math

import numpy as np
import pytest

import keras

from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds
from keras_paperzoo.models.simclr import SIMCLR_PRESETS, SimCLR
from keras_paperzoo.training.lars import LARS
from tests.model_tests import check_resume_from_saved, fit_probe_only, run_ssl_trainer_test
from tests.model_tests import seeded  # noqa: F401 (autouse: the same initial weights in every test)
from tests.model_tests import tiny_backbone as _backbone  # (B, 3, 3, 4) maps: h is 4-d
from tests.model_tests import to_numpy as _np
from tests.model_tests import two_views as _views


def _simclr(backbone=None, **kwargs):
    args = dict(version=1, temperature=0.5, projection_dims=[8, 8], seed=0)
    args.update(kwargs)
    return SimCLR(backbone or _backbone(), **args)


def _nt_xent(z_a, z_b, tau):
    """SimCLR eq. 1 in NumPy: 2N anchors, positive the other view, 2N - 2 negatives."""
    z = np.concatenate([z_a, z_b]).astype("float64")
    z /= np.linalg.norm(z, axis=1, keepdims=True)
    n = len(z_a)
    logits = z @ z.T / tau
    np.fill_diagonal(logits, -np.inf)
    log_z = np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1)) + logits.max(1)
    return float(np.mean(log_z - logits[np.arange(2 * n), (np.arange(2 * n) + n) % (2 * n)]))


def test_heads_per_version_and_fine_tuning_from_the_first_layer():
    v1, v2 = SimCLR(_backbone()), SimCLR(_backbone(), version=2)
    # v1: z = W2 relu(BN(W1 h)) then BN (2 Dense); v2: 3 Dense; hidden widths = h's (4), z 128-d.
    assert v1.head.widths == (4, 128) and v2.head.widths == (4, 4, 128)
    for model in (v1, v2):
        assert model.head.batch_norm and model.head.output_batch_norm
        assert model.temperature == pytest.approx(0.1)  # the paper's ImageNet default
        dense = [layer for block in model.head.blocks for layer in block if isinstance(layer, keras.layers.Dense)]
        assert len(dense) == {1: 2, 2: 3}[model.version]
        assert model.projector.output_shape == (None, 128) and model.encoder.output_shape == (None, 4)
    # Head parameters by hand (v1): 4x4 + BN(4) gamma, beta, mean, var + 4x128 + BN(128) without beta.
    assert v1.head.count_params() == 16 + 4 * 4 + 4 * 128 + 3 * 128
    assert v2.head.count_params() == 2 * (16 + 4 * 4) + 4 * 128 + 3 * 128
    # The backbone: 3x3x3x4 + 4 conv, BN(4); the model adds nothing else trainable.
    assert len(v1.trainable_variables) == 4 + len(v1.head.trainable_weights)
    # SimCLR v2 fine-tunes from the head's first layer; v1 from h.
    x = _views(4)[0]
    assert v1.fine_tuning_encoder().output_shape == (None, 4)
    tune = v2.fine_tuning_encoder()
    assert tune.output_shape == (None, 4)
    h = v2.represent(x)
    np.testing.assert_allclose(_np(tune(x)), _np(v2.head(h, depth=1)), atol=1e-6)
    np.testing.assert_allclose(_np(v2.fine_tuning_encoder(0)(x)), _np(h), atol=1e-6)
    assert v2.fine_tuning_encoder(2).output_shape == (None, 4)
    with pytest.raises(ValueError, match=r"head_layers must be an int in \[0, 2\]; got 3"):
        v2.fine_tuning_encoder(3)
    # Inference returns unit projections (a 64-wide hidden layer: with h's 4 ReLUs all can be off).
    wide = SimCLR(_backbone(), projection_dims=[64, 16])
    np.testing.assert_allclose(np.linalg.norm(_np(wide(x)), axis=1), 1.0, rtol=1e-5)


def test_presets():
    assert SIMCLR_PRESETS["simclr_v1_resnet50"]["arguments"] == {"version": 1, "temperature": 0.1}
    assert SIMCLR_PRESETS["simclr_v2_resnet50"]["arguments"] == {"version": 2, "temperature": 0.1}
    cifar = SIMCLR_PRESETS["simclr_cifar_resnet18"]["arguments"]  # Appendix B.9
    assert cifar["temperature"] == 0.5 and cifar["augmentation"] == {"color_strength": 0.5, "blur": False}
    tiny = SIMCLR_PRESETS["simclr_tiny"]  # (building its ResNet is left to the ResNet tests)
    assert tiny["arguments"]["projection_dims"] == [16, 32] and tiny["backbone"]["preset"] == "resnet20_cifar"
    # A preset's arguments on another backbone.
    model = SimCLR.from_preset("simclr_v2_resnet50", backbone=_backbone())
    assert model.version == 2 and model.head.widths == (4, 4, 128)


def test_loss_at_initialisation_is_log_2n_minus_1_and_nt_xent_of_the_projections():
    # lr 0, unrelated random images as the two views and a random linear backbone with many outputs
    # (h 256-d, head 256-256): z of different images are nearly orthogonal, so the 2N - 1 logits of
    # each anchor are exchangeable, loss ~ log(2N - 1) (above it by Jensen's gap, about
    # 1 / (2 * dims * tau^2) = 0.03). Counting the masked self-similarity (logit 1 / tau = 4) would
    # add about +0.6; N negatives only (one direction) about -0.7.
    keras.utils.set_random_seed(0)
    n, size = 32, 16
    backbone = keras.Sequential([keras.Input((size, size, 3)), keras.layers.Flatten(),
                                 keras.layers.Dense(256, name="dense")], name="linear")
    model = SimCLR(backbone, temperature=0.25, projection_dims=[256, 256], augmentation=None, seed=0)
    model.compile(optimizer=keras.optimizers.SGD(0.0))
    view_a, view_b = _views(n, size=size, seed=10)
    z = _np(model.forward_pass((view_a, view_b), training=True)["z"])  # (2N, C): batch norm over all 2N views
    history = model.fit((view_a, view_b), batch_size=n, epochs=1, verbose=0).history
    # The logged loss is eq. 1 over the 2N projections (both orders, 2N - 2 negatives each).
    assert history["loss"][0] == pytest.approx(_nt_xent(z[:n], z[n:], 0.25), abs=1e-4)
    # Over initialisations (5 seeds, JAX) the gap was 0.01 to 0.16.
    assert math.log(2 * n - 1) - 0.1 <= history["loss"][0] <= math.log(2 * n - 1) + 0.25
    assert history["contrastive_accuracy"][0] <= 0.1  # chance is 1 / 63
    # The same images as both views: each anchor finds its positive (logit 4 against ~0).
    same = model.fit((view_a, view_a), batch_size=n, epochs=1, verbose=0).history
    assert same["contrastive_accuracy"][0] == 1.0 and same["loss"][0] < 1.0


def test_online_probe_trains_and_does_not_change_the_representation():
    # tau = 1e30 makes NT-Xent's gradient (about 1 / tau) vanish in float32: whatever moves the
    # backbone or the head now is the probe's cross-entropy, which the stop-gradient on h must stop.
    model = _simclr(augmentation=None, num_classes=3, temperature=1e30)
    model.compile(optimizer=keras.optimizers.SGD(0.5))
    history = fit_probe_only(model, tuple(_views(16, seed=2)), np.arange(16) % 3)  # the probe learns, h stays
    assert history["loss"][0] > math.log(2 * 8 - 1) + 0.5  # its cross-entropy (about log 3) is in the loss


def test_fit_on_raw_images_config_and_saved_model(tmp_path):
    images = _views(16, seed=3)[0]
    model, history, loaded = run_ssl_trainer_test(  # fit, config round trip, outputs, weights, optimizer state
        SimCLR, dict(backbone=_backbone(), version=2, temperature=0.5, projection_dims=[8, 8], seed=0, num_classes=3),
        images, tmp_path, y=np.arange(16) % 3,  # the default augmentation: views drawn inside the step
        compile_kwargs=dict(batch_size=8, steps_per_epoch=2, epochs=1),  # LARS, warmup, cosine
        expected_metrics={"loss", "contrastive_accuracy", "probe_accuracy"},
        # Every kernel learns (a bias before batch norm gets no gradient).
        state=lambda m: [w for w in m.backbone.weights + m.head.weights + m.probe.weights if "kernel" in w.path],
    )
    clone = SimCLR.from_config(model.get_config())
    assert clone.version == 2 and clone.head.widths == (8, 8) and clone.num_classes == 3
    assert clone.temperature == 0.5 and clone.seed == 0
    assert isinstance(loaded.optimizer, LARS)
    np.testing.assert_allclose(_np(loaded.fine_tuning_encoder()(images[:4])),
                               _np(model.fine_tuning_encoder()(images[:4])), atol=1e-6)
    with pytest.raises(ValueError, match="image-shaped y"):  # views given as (x, y)
        model.fit(images, images, batch_size=8, verbose=0)


def test_compile_defaults_are_the_papers():
    model = _simclr()
    model.compile()  # 100 ImageNet epochs at batch 256
    optimizer = model.optimizer
    assert isinstance(optimizer, LARS)
    assert optimizer.momentum == pytest.approx(0.9) and optimizer.lars_weight_decay == pytest.approx(1e-6)
    assert optimizer.eta == pytest.approx(0.001)
    assert optimizer.exclude_bias_and_norm_from_decay and optimizer.exclude_bias_and_norm_from_adaptation
    schedule = optimizer._learning_rate
    assert type(schedule).__name__ == "WarmupCosineDecay" and schedule.alpha == 0.0
    steps = 1_281_167 // 256
    assert schedule.peak_learning_rate == pytest.approx(0.3)  # 0.3 x 256 / 256
    assert schedule.warmup_steps == 10 * steps and schedule.total_steps == 100 * steps
    model.compile(batch_size=512, steps_per_epoch=100, epochs=200)
    schedule = model.optimizer._learning_rate
    assert schedule.peak_learning_rate == pytest.approx(0.6)  # 0.3 x 512 / 256
    assert schedule.warmup_steps == 1000 and schedule.total_steps == 20000
    model.compile(batch_size=64, steps_per_epoch=10, epochs=100, learning_rate_scaling="sqrt")
    assert model.optimizer._learning_rate.peak_learning_rate == pytest.approx(0.075 * 8)  # 0.075 x sqrt(64)
    model.compile(batch_size=64, steps_per_epoch=10, epochs=5)  # a short run warms up over its first tenth
    assert model.optimizer._learning_rate.warmup_steps == 5
    with pytest.raises(ValueError, match="loss .* fixed"):
        model.compile(loss="mse")
    with pytest.raises(ValueError, match="unknown argument"):
        model.compile(batch_sizes=8)


def test_exact_resume_from_a_saved_model(tmp_path):
    """2 epochs straight = 1 epoch, save, load, 1 more epoch: weights and optimizer state."""
    images = _views(16, seed=4)[0]
    labels = np.arange(16) % 3

    def fresh():
        keras.utils.set_random_seed(0)
        # Views drawn in the step from a SeedGenerator (noise: a cheap stand-in for SimCLR's views).
        model = _simclr(num_classes=3, augmentation=keras.layers.GaussianNoise(0.2, seed=3))
        model.compile(batch_size=8, steps_per_epoch=2, epochs=2)  # LARS over warmup and cosine
        return model

    def fit(model, epochs, initial_epoch=0):
        model.fit(images, labels, batch_size=8, epochs=epochs, initial_epoch=initial_epoch, shuffle=False,
                  verbose=0, callbacks=[EpochSeeds(7)])

    def check_saved(model, resumed, straight):
        assert not np.allclose(_np(model.backbone.weights[0]), straight[0][0])  # (epoch 2 moves the weights)
        assert isinstance(resumed.optimizer, LARS)  # compile_from_config: what was saved
        assert resumed.optimizer._learning_rate.total_steps == 4
        assert int(_np(resumed.optimizer.iterations)) == 2

    # Then every weight (backbone, head, probe, BN statistics, seeds) and optimizer variable as straight.
    check_resume_from_saved(fresh, fit, tmp_path, check_saved=check_saved)


def test_bad_input_names_the_value_and_rule():
    for temperature in (0, -0.5, 0.0):
        with pytest.raises(ValueError, match=f"temperature must be a number > 0; got {temperature!r}"):
            _simclr(temperature=temperature)
    with pytest.raises(ValueError, match="version must be 1 or 2; got 3"):
        _simclr(version=3)
    with pytest.raises(ValueError, match="known image input shape"):
        SimCLR(keras.Sequential([keras.layers.Dense(3)]))
    model = _simclr(augmentation=None)
    view_a, view_b = _views(8)
    with pytest.raises(ValueError, match=r"views must hold the same images; got batch sizes \[8, 4\]"):
        model.compute_loss(x=(view_a, view_b[:4]))
    with pytest.raises(ValueError, match="takes 2 views; got 3"):
        model.compute_loss(x=(view_a, view_b, view_b))
    with pytest.raises(ValueError, match="needs two views"):
        model.compute_loss(x=view_a)
    with pytest.raises(ValueError, match="image-shaped y"):
        model.compute_loss(x=view_a, y=view_b)
    with pytest.raises(ValueError, match=r"needs two views: x=\(view_1, view_2\)"):
        model(view_a, training=True)  # what fit(view_a, view_b) meets first: the views given as (x, y)
    fresh = _simclr(augmentation=None)
    fresh.compile(optimizer=keras.optimizers.SGD(0.1))
    with pytest.raises(ValueError, match=r"SimCLR: batch size 1 is too small; its batches need at least 2 \(NT-Xent's negatives"):
        fresh.fit((view_a[:1], view_b[:1]), batch_size=1, verbose=0)
    probed = _simclr(augmentation=None, num_classes=3)
    with pytest.raises(ValueError, match=r"y must be integer class labels \(B,\)"):
        probed.compute_loss(x=(view_a, view_b), y=np.zeros((8, 3), "int32"))
    with pytest.raises(ValueError, match="num_classes .* must be an int >= 2 or None; got 1"):
        _simclr(num_classes=1)
