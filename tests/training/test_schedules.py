import math

import numpy as np
import pytest

import keras

from keras_paperzoo.training import (
    ExponentialDecayWithFloor,
    LinearRamp,
    ScheduledMomentumSGD,
    StepDecay,
    WarmupCosineDecay,
    WarmupLinearDecay,
)


def _value(schedule, step):
    return float(keras.ops.convert_to_numpy(schedule(step)))


def test_step_decay():
    s = StepDecay(0.1, boundaries=[32000, 48000], factor=0.1)
    assert _value(s, 0) == pytest.approx(0.1)
    assert _value(s, 31999) == pytest.approx(0.1)
    assert _value(s, 32000) == pytest.approx(0.01)
    assert _value(s, 48000) == pytest.approx(0.001)
    with pytest.raises(ValueError, match="increasing"):
        StepDecay(0.1, boundaries=[10, 5])


def test_warmup_cosine():
    s = WarmupCosineDecay(1.0, warmup_steps=10, total_steps=110)
    assert _value(s, 0) == pytest.approx(0.0)
    assert _value(s, 5) == pytest.approx(0.5)
    assert _value(s, 10) == pytest.approx(1.0)
    assert _value(s, 60) == pytest.approx(0.5, abs=1e-6)  # half-way through the cosine
    assert _value(s, 110) == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(ValueError, match="warmup_steps"):
        WarmupCosineDecay(1.0, warmup_steps=20, total_steps=10)
    floor = WarmupCosineDecay(1.0, warmup_steps=0, total_steps=100, alpha=0.1)
    assert _value(floor, 100) == pytest.approx(0.1, abs=1e-6)


def test_warmup_linear_decay():
    s = WarmupLinearDecay(2.0, warmup_steps=100, total_steps=1100)
    assert _value(s, 50) == pytest.approx(1.0)
    assert _value(s, 100) == pytest.approx(2.0)
    assert _value(s, 600) == pytest.approx(1.0, abs=1e-6)
    assert _value(s, 1100) == pytest.approx(0.0, abs=1e-6)
    assert _value(s, 5000) == pytest.approx(0.0, abs=1e-6)  # stays at 0 past the end
    with pytest.raises(ValueError, match="WarmupLinearDecay needs 0 <= warmup_steps"):
        WarmupLinearDecay(1.0, warmup_steps=-1, total_steps=10)


@pytest.mark.parametrize("schedule", [
    WarmupCosineDecay(0.5, warmup_steps=3, total_steps=30, alpha=0.2),
    WarmupLinearDecay(0.5, warmup_steps=3, total_steps=30),
])
def test_warmup_schedules_round_trip_through_keras_serialization(schedule):
    clone = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(schedule))
    assert type(clone) is type(schedule)
    assert clone.get_config() == schedule.get_config()
    assert [_value(clone, t) for t in (1, 3, 17, 30)] == pytest.approx([_value(schedule, t) for t in (1, 3, 17, 30)])


def test_gan_paper_lr_and_momentum():
    lr = ExponentialDecayWithFloor(0.1, decay_factor=1.000004, min_learning_rate=1e-6)
    assert _value(lr, 0) == pytest.approx(0.1)
    assert _value(lr, 100000) == pytest.approx(0.1 / 1.000004**100000, rel=1e-5)
    assert _value(lr, 10**8) == pytest.approx(1e-6)  # the floor
    m = LinearRamp(0.5, 0.7, ramp_steps=1000)
    assert [_value(m, s) for s in (0, 500, 1000, 5000)] == pytest.approx([0.5, 0.6, 0.7, 0.7])


def test_scheduled_momentum_sgd_update_and_config():
    opt = ScheduledMomentumSGD(0.1, momentum=LinearRamp(0.5, 0.7, ramp_steps=2))
    w = keras.Variable(np.array([1.0], "float32"))
    opt.build([w])
    velocity, value = 0.0, 1.0
    for step in range(3):
        momentum = 0.5 + 0.2 * min(step / 2, 1.0)
        velocity = momentum * velocity - 0.1 * 1.0  # gradient 1
        value += velocity
        opt.apply([keras.ops.ones((1,))], [w])
        assert float(w.numpy()[0]) == pytest.approx(value, abs=1e-6)
    clone = ScheduledMomentumSGD.from_config(opt.get_config())
    assert isinstance(clone.momentum_schedule, LinearRamp)
    assert clone.momentum_schedule.end == 0.7
    plain = ScheduledMomentumSGD(0.1, momentum=0.9)
    assert plain.momentum_schedule is None and math.isclose(plain.momentum, 0.9)


def test_coupled_l2_goes_through_momentum_like_pytorch_sgd():
    opt = ScheduledMomentumSGD(0.1, momentum=0.9, l2=0.5)
    w = keras.Variable(np.array([2.0], "float32"))
    opt.build([w])
    velocity, value = 0.0, 2.0
    for _ in range(3):
        grad = 1.0 + 0.5 * value  # loss gradient 1 plus l2 * w
        velocity = 0.9 * velocity - 0.1 * grad
        value += velocity
        opt.apply([keras.ops.ones((1,))], [w])
    assert float(w.numpy()[0]) == pytest.approx(value, abs=1e-5)
    assert ScheduledMomentumSGD.from_config(opt.get_config()).l2 == 0.5
    with pytest.raises(ValueError, match="l2"):
        ScheduledMomentumSGD(0.1, l2=-1.0)
