"""The BYOL trainer (Grill et al. 2020) with tiny backbones."""

import math

import numpy as np
import pytest

import keras

from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds
from keras_paperzoo.models.byol import BYOL, BYOL_PRESETS
from keras_paperzoo.training.lars import LARS
from keras_paperzoo.training.momentum import MomentumEncoder
from tests.model_checks import check_config_roundtrip, check_saved_model
from tests.model_tests import check_resume_from_saved
from tests.models.simclr.test_simclr import _backbone, _np, _views


@pytest.fixture(autouse=True)
def _seeded():
    """The same initial weights whatever ran before (a tiny ReLU backbone can start dead)."""
    keras.utils.set_random_seed(0)


def _byol(backbone=None, **kwargs):
    args = dict(projection_dims=[8, 4], prediction_dims=[8, 4], tau_base=0.9, seed=0)
    args.update(kwargs)
    return BYOL(backbone or _backbone(), **args)


def _tau(k, total, base):
    return 1.0 - (1.0 - base) * (math.cos(math.pi * min(k, total) / total) + 1.0) / 2.0


def _regression(q, z):
    """BYOL eq. 2 in NumPy: 2 - 2 cos(q, z'), mean over the batch."""
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    z = z / np.linalg.norm(z, axis=1, keepdims=True)
    return float(np.mean(2.0 - 2.0 * np.sum(q * z, axis=1)))


def test_networks_and_heads():
    model = BYOL(_backbone())  # the paper's heads: 4096-256 with BN on the hidden layer only
    for head in (model.projector, model.predictor):
        assert head.widths == (4096, 256) and head.batch_norm and not head.output_batch_norm
        assert [type(layer).__name__ for layer in head.blocks[0]] == ["Dense", "BatchNormalization", "Activation"]
        assert [type(layer).__name__ for layer in head.blocks[1]] == ["Dense"] and head.blocks[1][0].use_bias
    assert model.tau_base == pytest.approx(0.996) and model.momentum_schedule == "cosine"
    small = _byol(num_classes=3)
    # Parameters by hand: projector 4x8 (no bias) + BN(8) x4 + 8x4 + 4; predictor 4x8 + BN(8) x4 + 8x4 + 4.
    assert small.projector.count_params() == 32 + 32 + 36
    assert small.predictor.count_params() == 32 + 32 + 36
    # Online: backbone, projector, predictor, probe. Target: backbone and projector, a momentum copy.
    backbone = 3 * 3 * 3 * 4 + 4 + 2 * 4  # conv and BN's gamma, beta
    trainable = sum(int(np.prod(v.shape)) for v in small.trainable_variables)
    assert trainable == backbone + (32 + 16 + 36) + (32 + 16 + 36) + (4 * 3 + 3)
    target = small.target_network
    assert isinstance(target, MomentumEncoder) and target.schedule == "cosine" and target.momentum == 0.9
    assert target.target.count_params() == small.online_network.count_params()
    assert not {id(v) for v in target.weights} & {id(v) for v in small.trainable_variables}
    for t, s in zip(target.target.weights, small.online_network.weights):  # equal at start, a copy
        np.testing.assert_array_equal(_np(t), _np(s))
        assert t is not s and not t.trainable
    assert small.online_network.output_shape == (None, 4) and small.encoder.output_shape == (None, 4)
    x = _views(4)[0]
    np.testing.assert_allclose(_np(small(x)), _np(small.online_network(x, training=False)), atol=1e-6)
    # Presets.
    assert BYOL_PRESETS["byol_resnet50"]["arguments"] == {
        "projection_dims": [4096, 256], "prediction_dims": [4096, 256], "tau_base": 0.996}
    assert BYOL_PRESETS["byol_tiny"]["arguments"]["projection_dims"] == [32, 16]
    model = BYOL.from_preset("byol_resnet20_cifar", backbone=_backbone())
    assert model.projector.widths == (256, 64) and model.tau_base == 0.99


def test_loss_is_the_symmetric_formula():
    # lr 0 and a target equal to the online network: z' of a view is the online projection of it.
    # (A wide predictor: with 8 hidden ReLUs a sample can have q = 0, cosine undefined.)
    keras.utils.set_random_seed(1)
    model = _byol(augmentation=None, projection_dims=[32, 4], prediction_dims=[32, 4])
    view_a, view_b = _views(8, seed=1)
    outputs = model.forward_pass((view_a, view_b), training=True)
    q_a, q_b = (_np(q) for q in outputs["q"])
    z_a = _np(model.online_network(view_a, training=True))
    z_b = _np(model.online_network(view_b, training=True))
    loss = float(_np(model.compute_loss(x=(view_a, view_b))))  # one training step's loss (fit: the EMA test)
    expected = _regression(q_a, z_b) + _regression(q_b, z_a)  # L + L~: each prediction against the other view
    assert loss == pytest.approx(expected, abs=1e-4)
    assert abs(expected - (_regression(q_a, z_a) + _regression(q_b, z_b))) > 1e-2  # the pairing matters
    unit = z_a / np.linalg.norm(z_a, axis=1, keepdims=True)
    output_std = float(_np(model.output_std_tracker.result()))
    assert output_std == pytest.approx(float(np.mean(np.std(unit, axis=0))), abs=1e-4)


def _check_ema_steps(model, steps, total_steps):
    """`steps` one-step fits of a tau_base 0.5 model with K = `total_steps`: after step k every target parameter is
    xi <- tau_k xi + (1 - tau_k) theta, with theta before this step's gradient update, and theta learned."""
    pairs = model.target_network._pairs  # (target parameter, online parameter)
    views = _views(8, seed=3)
    for step in range(steps):
        xi = [_np(t) for t, _ in pairs]
        theta = [_np(s) for _, s in pairs]
        model.fit(tuple(views), batch_size=8, epochs=1, verbose=0)  # one step
        tau = _tau(step, total_steps, 0.5)
        for (t, _), xi0, theta0 in zip(pairs, xi, theta):
            np.testing.assert_allclose(_np(t), tau * xi0 + (1 - tau) * theta0, rtol=1e-5, atol=1e-6)
        assert any(not np.allclose(_np(s), theta0) for (_, s), theta0 in zip(pairs, theta))  # theta learned


def test_target_gets_no_gradient_and_moves_by_the_ema():
    model = _byol(augmentation=None, tau_base=0.5)
    pairs = model.target_network._pairs  # (target parameter, online parameter)
    rng = np.random.default_rng(2)
    for t, _ in pairs:  # make xi differ from theta
        t.assign(_np(t) + rng.normal(0, 0.1, t.shape).astype("float32"))
    # A large step with weight decay: anything the optimizer saw would move off the formula.
    # K = 2 updates: tau_0 = 0.5, tau_1 = 0.75.
    model.compile(optimizer=keras.optimizers.SGD(1.0, weight_decay=0.1), steps_per_epoch=2, epochs=1)
    _check_ema_steps(model, steps=2, total_steps=2)
    assert int(_np(model.target_network.step)) == 2


def test_compile_with_a_user_optimizer_still_sets_the_runs_tau_schedule():
    """compile(optimizer=X, steps_per_epoch=, epochs=) sets K: tau_k follows the cosine over the run."""
    model = _byol(augmentation=None, tau_base=0.5)
    model.compile(optimizer=keras.optimizers.SGD(0.1), steps_per_epoch=2, epochs=2)  # K = 4
    assert isinstance(model.optimizer, keras.optimizers.SGD)
    assert int(_np(model.target_network.total_steps)) == 4
    _check_ema_steps(model, steps=3, total_steps=4)  # tau_0 = 0.5, tau_1 = 0.573, tau_2 = 0.75
    assert float(_np(model.target_network.current_momentum())) == pytest.approx(_tau(3, 4, 0.5))
    model.compile(optimizer=keras.optimizers.SGD(0.1))  # no run given: the paper's, 1000 ImageNet epochs
    assert int(_np(model.target_network.total_steps)) == 1000 * (1_281_167 // 256)


def test_predictor_free_ablation_builds():
    flat = keras.Sequential([keras.Input((8, 8, 3)), keras.layers.GlobalAveragePooling2D(),
                             keras.layers.Dense(6, name="dense")], name="flat")  # (B, D) features
    model = BYOL(flat, projection_dims=[8, 4], prediction_dims=None, tau_base=0.0, momentum_schedule="constant",
                 augmentation=None)  # Table 5: no predictor, the target a copy of the online network
    assert model.predictor is None and model.encoder.output_shape == (None, 6)
    assert model.online_network.output_shape == (None, 4) and model.target_network.momentum == 0.0
    clone = check_config_roundtrip(model)
    assert clone.prediction_dims is None and clone.momentum_schedule == "constant" and clone.tau_base == 0.0


def test_default_views_config_and_saved_model(tmp_path):
    model = _byol(num_classes=3)  # BYOL's asymmetric views at the backbone's 8 x 8
    clone = check_config_roundtrip(model)
    assert clone.projection_dims == [8, 4] and clone.tau_base == 0.9 and clone.num_classes == 3
    assert type(clone.augmentation) is type(model.augmentation)
    loaded = check_saved_model(model, _views(4)[0], tmp_path)  # inference through the views' resize/normalise
    assert loaded.augmentation.get_config() == model.augmentation.get_config()


def test_compile_defaults_are_the_papers():
    model = _byol()
    model.compile()  # 1000 ImageNet epochs at batch 256
    optimizer = model.optimizer
    assert isinstance(optimizer, LARS)
    assert optimizer.lars_weight_decay == pytest.approx(1.5e-6) and optimizer.momentum == pytest.approx(0.9)
    assert optimizer.exclude_bias_and_norm_from_decay and optimizer.exclude_bias_and_norm_from_adaptation
    steps = 1_281_167 // 256
    schedule = optimizer._learning_rate
    assert type(schedule).__name__ == "WarmupCosineDecay"
    assert schedule.peak_learning_rate == pytest.approx(0.2)  # 0.2 x 256 / 256
    assert schedule.warmup_steps == 10 * steps and schedule.total_steps == 1000 * steps
    assert int(_np(model.target_network.total_steps)) == 1000 * steps  # tau's K: the run's updates
    model.compile(batch_size=512, steps_per_epoch=100, epochs=300)
    schedule = model.optimizer._learning_rate
    assert schedule.peak_learning_rate == pytest.approx(0.4) and schedule.total_steps == 30000
    assert schedule.warmup_steps == 1000
    assert int(_np(model.target_network.total_steps)) == 30000
    with pytest.raises(ValueError, match="loss .* fixed"):
        model.compile(loss="mse")


def test_exact_resume_from_a_saved_model(tmp_path):
    """2 epochs straight = 1 epoch, save, load, 1 more epoch: weights, target, tau's step, optimizer."""
    images = _views(16, seed=5)[0]
    labels = np.arange(16) % 3

    def fresh():
        keras.utils.set_random_seed(0)
        # Views drawn in the step from a SeedGenerator (noise: a cheap stand-in for BYOL's views).
        model = _byol(augmentation=keras.layers.GaussianNoise(0.2, seed=3), num_classes=3)
        model.compile(batch_size=8, steps_per_epoch=2, epochs=2)  # LARS, tau over K = 4
        assert int(_np(model.target_network.total_steps)) == 4
        return model

    def fit(model, epochs, initial_epoch=0):
        history = model.fit(images, labels, batch_size=8, epochs=epochs, initial_epoch=initial_epoch, shuffle=False,
                            verbose=0, callbacks=[EpochSeeds(7)]).history
        assert set(history) == {"loss", "output_std", "probe_accuracy"}
        assert all(np.isfinite(v[0]) for v in history.values())

    def save_and_load(model):
        # The .keras file: same outputs, weights (the target, tau's step) and optimizer state, safe mode.
        return check_saved_model(model, images[:4], tmp_path)

    def check_saved(model, resumed, straight):
        assert not np.allclose(_np(resumed.target_network.target.weights[0]), _np(resumed.online_network.weights[0]))
        clone = check_config_roundtrip(model)
        assert clone.num_classes == 3 and clone.prediction_dims == [8, 4]
        assert isinstance(resumed.optimizer, LARS) and int(_np(resumed.optimizer.iterations)) == 2
        assert int(_np(resumed.target_network.step)) == 2 and int(_np(resumed.target_network.total_steps)) == 4

    # Then every weight (online, target, tau's step, BN statistics, seeds) and optimizer variable as straight.
    check_resume_from_saved(fresh, fit, tmp_path, check_saved=check_saved, save_and_load=save_and_load)


def test_bad_input_names_the_value_and_rule():
    for tau in (-0.1, 1.5, True):
        with pytest.raises(ValueError, match=rf"tau_base must be a number in \[0, 1\]; got {tau!r}"):
            _byol(tau_base=tau)
    with pytest.raises(ValueError, match=r"predictor must output the projection's width 4; got "
                                         r"prediction_dims=\[8, 3\]"):
        _byol(prediction_dims=[8, 3])
    with pytest.raises(ValueError, match=r"projection_dims must be a non-empty list of ints >= 1; got "
                                         r"projection_dims=\[\]"):
        _byol(projection_dims=[])
    with pytest.raises(ValueError, match=r"prediction_dims must be .* or None; got prediction_dims=\[8, 0\]"):
        _byol(prediction_dims=[8, 0])
    with pytest.raises(ValueError, match=r"momentum_schedule must be one of .*; got 'linear'"):
        _byol(momentum_schedule="linear")
    model = _byol(augmentation=None)
    view_a, view_b = _views(8)
    with pytest.raises(ValueError, match="needs two views"):
        model.compute_loss(x=view_a)
    with pytest.raises(ValueError, match=r"views must hold the same images; got batch sizes \[8, 4\]"):
        model.compute_loss(x=(view_a, view_b[:4]))
    with pytest.raises(ValueError, match="image-shaped y"):
        model.compute_loss(x=(view_a, view_b), y=view_b)
