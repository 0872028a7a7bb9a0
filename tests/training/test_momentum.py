"""MomentumEncoder: MoCo's key encoder and BYOL's target network (EMA copy, tau schedule in the step)."""

import math

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.training.momentum import MomentumEncoder, cosine_momentum


def _np(x):
    return np.asarray(ops.convert_to_numpy(x)).copy()


def _online(name="online"):
    return keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, name="dense"),
                             keras.layers.BatchNormalization(name="bn"), keras.layers.Dense(2, name="out")],
                            name=name)


def _tau(k, total, base):
    """BYOL's tau_k = 1 - (1 - tau_base)(cos(pi k / K) + 1) / 2 (k clamped to K)."""
    return 1.0 - (1.0 - base) * (math.cos(math.pi * min(k, total) / total) + 1.0) / 2.0


def _perturb(variables, seed):
    rng = np.random.default_rng(seed)
    for v in variables:
        v.assign(_np(v) + rng.normal(0, 0.3, v.shape).astype("float32"))


def test_equal_at_start_a_copy_and_not_trainable():
    online = _online()
    encoder = MomentumEncoder(online, momentum=0.9)
    target = encoder.target
    assert len(target.weights) == len(online.weights) == 8
    for t, s in zip(target.weights, online.weights):
        np.testing.assert_array_equal(_np(t), _np(s))
        assert t is not s and not t.trainable
    assert encoder.trainable_weights == [] and target.trainable_weights == []
    # A copy, not a shared buffer: changing the online network leaves the target where it was.
    start = [_np(t) for t in target.weights]
    _perturb(online.weights, seed=0)
    for t, s0 in zip(target.weights, start):
        np.testing.assert_array_equal(_np(t), s0)
    # The online network keeps its trainable parameters.
    assert len(online.trainable_weights) == 6


def test_ema_formula_on_parameters_only():
    online = _online()
    encoder = MomentumEncoder(online, momentum=0.9)
    _perturb(online.weights, seed=1)  # parameters and moving statistics of the online network move
    online_bn = [_np(online.get_layer("bn").moving_mean), _np(online.get_layer("bn").moving_variance)]
    target_bn = encoder.target.get_layer("bn")
    target_bn.moving_mean.assign(np.full((4,), 0.25, "float32"))  # the target's own statistics
    before = {w.path: _np(w) for w in encoder.target.weights}
    sources = {t.path: _np(s) for t, s in zip(encoder.target.weights, online.weights)}
    encoder.update()
    for t in encoder.target.weights:
        if "moving" in t.path:  # batch-norm statistics: untouched by the update
            np.testing.assert_array_equal(_np(t), before[t.path])
        else:  # theta_k <- m theta_k + (1 - m) theta_q
            np.testing.assert_allclose(_np(t), 0.9 * before[t.path] + 0.1 * sources[t.path], rtol=1e-6, atol=1e-7)
    assert not np.allclose(_np(target_bn.moving_mean), online_bn[0])
    assert int(_np(encoder.step)) == 1
    # The copy's statistics follow its own forward passes in training mode; the online ones stay.
    encoder(np.random.default_rng(2).normal(size=(8, 3)).astype("float32"), training=True)
    assert not np.allclose(_np(target_bn.moving_mean), 0.25)
    np.testing.assert_array_equal(_np(online.get_layer("bn").moving_mean), online_bn[0])
    # m = 0 copies, m = 1 freezes.
    frozen = MomentumEncoder(online, momentum=1.0)
    _perturb(online.trainable_weights, seed=3)
    frozen.update()
    assert not np.allclose(_np(frozen.target.get_layer("out").kernel), _np(online.get_layer("out").kernel))
    copying = MomentumEncoder(_online("other"), momentum=0.0)
    _perturb(copying._pairs[0][1:], seed=4)
    copying.update()
    np.testing.assert_allclose(_np(copying._pairs[0][0]), _np(copying._pairs[0][1]), atol=1e-7)


def test_output_carries_no_gradient_and_ema_needs_no_optimizer():
    online = _online()
    encoder = MomentumEncoder(online, momentum=0.5)
    inputs = keras.Input((3,))
    model = keras.Model(inputs, [online(inputs), encoder(inputs)])
    target_ids = {id(v) for v in encoder.target.weights}
    assert not target_ids & {id(v) for v in model.trainable_variables}
    assert len(model.trainable_variables) == len(online.trainable_weights)


@pytest.mark.parametrize("base", [0.996, 0.5, 0.0])
def test_cosine_schedule_values(base):
    total = 40
    for k in (0, 1, 5, 10, 20, 30, 39, 40, 80):
        expected = _tau(k, total, base)
        assert float(_np(cosine_momentum(k, total, base))) == pytest.approx(expected, abs=1e-6)
    assert float(_np(cosine_momentum(0, total, base))) == pytest.approx(base, abs=1e-6)
    assert float(_np(cosine_momentum(total, total, base))) == pytest.approx(1.0, abs=1e-6)
    assert float(_np(cosine_momentum(total // 2, total, base))) == pytest.approx((1 + base) / 2, abs=1e-6)
    # The encoder's own step and K.
    encoder = MomentumEncoder(_online(), momentum=base, schedule="cosine")
    assert float(_np(encoder.current_momentum())) == pytest.approx(base)  # K unset: constant at tau_base
    encoder.set_total_steps(total)
    for k in (0, 7, 20, 40, 41):
        encoder.step.assign(k)
        assert float(_np(encoder.current_momentum())) == pytest.approx(_tau(k, total, base), abs=1e-6)
    constant = MomentumEncoder(_online(), momentum=base)
    constant.set_total_steps(total)
    constant.step.assign(20)
    assert float(_np(constant.current_momentum())) == pytest.approx(base)


class _EMATrainer(keras.Model):
    """A trainer whose compute_loss calls `target.update()`, as MoCo's and BYOL's do."""

    def __init__(self, total_steps=5, base=0.5, **kwargs):
        kwargs.setdefault("name", "ema_trainer")
        super().__init__(**kwargs)
        self.total_steps, self.base = total_steps, base
        inputs = keras.Input((3,))
        self.online = keras.Model(inputs, keras.layers.Dense(2, name="dense")(inputs), name="online")
        self.target = MomentumEncoder(self.online, base, schedule="cosine", name="target")
        self.target.set_total_steps(total_steps)

    def call(self, x, training=False):
        return self.online(x)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        if training:
            self.target.update()
        return ops.mean(y_pred ** 2) + 0.0 * ops.mean(self.target(x, training=training))

    def get_config(self):
        return {**super().get_config(), "total_steps": self.total_steps, "base": self.base}


keras.saving.register_keras_serializable(package="test_momentum")(_EMATrainer)


def test_schedule_is_read_inside_compiled_fit():
    # lr 0: the online network stays at theta, so after n updates with tau_0 .. tau_{n-1}
    #   xi_n - theta = prod_k tau_k (xi_0 - theta);
    # a tau read once when fit traces its step would give tau_0 ** n instead.
    trainer = _EMATrainer(total_steps=5, base=0.5)
    _perturb(trainer.target.target.weights, seed=5)
    theta = [_np(s) for _, s in trainer.target._pairs]
    xi0 = [_np(t) for t, _ in trainer.target._pairs]
    trainer.compile(optimizer=keras.optimizers.SGD(0.0))  # default jit_compile: tf.function / jax.jit
    x = np.random.default_rng(6).normal(size=(6, 3)).astype("float32")
    trainer.fit(x, batch_size=2, epochs=2, shuffle=False, verbose=0)  # 2 x 3 = 6 steps, past K = 5
    assert int(_np(trainer.target.step)) == 6
    product = np.prod([_tau(k, 5, 0.5) for k in range(6)])
    assert abs(product - 0.5 ** 6) > 0.05  # the frozen alternative is far off
    for (t, _), a, b in zip(trainer.target._pairs, xi0, theta):
        np.testing.assert_allclose(_np(t), b + product * (a - b), rtol=1e-5, atol=1e-6)


def test_step_and_total_steps_saved_and_restored(tmp_path):
    trainer = _EMATrainer(total_steps=7, base=0.9)
    trainer.compile(optimizer=keras.optimizers.SGD(0.1))
    x = np.random.default_rng(7).normal(size=(6, 3)).astype("float32")
    trainer.fit(x, batch_size=2, epochs=1, shuffle=False, verbose=0)
    trainer.target.set_total_steps(11)  # K as compile() of a longer run would set it
    path = tmp_path / "ema.keras"
    trainer.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    assert int(_np(loaded.target.step)) == 3 and int(_np(loaded.target.total_steps)) == 11
    for a, b in zip(loaded.target.target.weights, trainer.target.target.weights):
        np.testing.assert_array_equal(_np(a), _np(b))
    assert not np.allclose(_np(loaded.target.target.weights[0]), _np(loaded.online.weights[0]))
    assert float(_np(loaded.target.current_momentum())) == pytest.approx(_tau(3, 11, 0.9), abs=1e-6)


def test_bad_arguments_name_the_value():
    with pytest.raises(ValueError, match=r"must be a number in \[0, 1\]; got 1.5"):
        MomentumEncoder(_online(), momentum=1.5)
    with pytest.raises(ValueError, match=r"got -0.1"):
        MomentumEncoder(_online(), momentum=-0.1)
    with pytest.raises(ValueError, match=r"got True"):
        MomentumEncoder(_online(), momentum=True)
    with pytest.raises(ValueError, match=r"schedule must be one of \('constant', 'cosine'\); got 'linear'"):
        MomentumEncoder(_online(), schedule="linear")
    encoder = MomentumEncoder(_online(), schedule="cosine")
    with pytest.raises(ValueError, match="total_steps must be an int >= 1; got 0"):
        encoder.set_total_steps(0)
    with pytest.raises(ValueError, match="total_steps must be an int >= 1; got 2.5"):
        encoder.set_total_steps(2.5)
