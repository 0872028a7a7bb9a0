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


@pytest.mark.parametrize("momentum, nesterov", [(0.9, False), (0.9, True), (0.0, False), ("ramp", False),
                                                ("ramp", True)])
def test_sgd_update_of_many_variables_matches_the_formula(momentum, nesterov):
    # On PyTorch this is the multi-tensor update (`multi_tensor_momentum_step`); the formula is per variable:
    # g + l2 w (not for the excluded bias), v <- m v - lr g, w <- w + v (Nesterov: w + m v - lr g).
    rng = np.random.default_rng(0)
    shapes = {"kernel": (3, 4), "bias": (4,), "scale": (2, 2, 3)}
    values = {name: rng.normal(size=shape).astype("float32") for name, shape in shapes.items()}
    grads = [{name: rng.normal(size=shape).astype("float32") for name, shape in shapes.items()} for _ in range(3)]
    variables = [keras.Variable(values[name], name=name) for name in shapes]
    ramp = LinearRamp(0.5, 0.7, ramp_steps=2)
    opt = ScheduledMomentumSGD(0.1, momentum=ramp if momentum == "ramp" else momentum, l2=0.05, nesterov=nesterov)
    opt.exclude_from_weight_decay(var_names=["bias"])
    opt.build(variables)
    expected = {name: value.astype("float64") for name, value in values.items()}
    velocity = {name: np.zeros(shape) for name, shape in shapes.items()}
    for step, grad in enumerate(grads):
        m = (0.5 + 0.2 * min(step / 2, 1.0)) if momentum == "ramp" else momentum
        for name in shapes:
            g = grad[name] + (0.0 if name == "bias" else 0.05 * expected[name])
            velocity[name] = m * velocity[name] - 0.1 * g
            expected[name] = expected[name] + (m * velocity[name] - 0.1 * g if nesterov else velocity[name])
        opt.apply([keras.ops.convert_to_tensor(grad[name]) for name in shapes], variables)
    for variable, name in zip(variables, shapes):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(variable), expected[name], rtol=1e-5, atol=1e-6)
    assert int(opt.iterations.numpy()) == 3


def test_sgd_subclass_with_its_own_rule_keeps_it():
    class SignSGD(ScheduledMomentumSGD):  # a per-variable rule: the multi-tensor path must step aside
        def update_step(self, gradient, variable, learning_rate):
            self.assign_sub(variable, learning_rate * keras.ops.sign(gradient))

    w = keras.Variable(np.array([1.0, -1.0], "float32"))
    opt = SignSGD(0.1, momentum=0.9)
    opt.build([w])
    opt.apply([keras.ops.convert_to_tensor(np.array([3.0, -0.5], "float32"))], [w])
    np.testing.assert_allclose(keras.ops.convert_to_numpy(w), [0.9, -0.9], rtol=1e-6)


def test_momentum_schedule_inside_compiled_fit_matches_the_formula():
    # fit's step is compiled on TF (tf.function) and JAX (jit): the schedule must be read there as a tensor.
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, use_bias=False)])
    w0 = np.array([[1.0], [-2.0]], "float32")
    model.layers[0].set_weights([w0])
    model.compile(optimizer=ScheduledMomentumSGD(0.1, momentum=LinearRamp(0.5, 0.7, ramp_steps=2), l2=0.01),
                  loss="mse")
    x, y = np.array([[1.0, 2.0]], "float32"), np.array([[0.5]], "float32")
    model.fit(x, y, epochs=3, batch_size=1, shuffle=False, verbose=0)
    w, velocity = w0.astype("float64"), np.zeros((2, 1))
    for step in range(3):
        momentum = 0.5 + 0.2 * min(step / 2, 1.0)
        gradient = 2 * x.T @ (x @ w - y) + 0.01 * w  # mean squared error of one sample, plus l2 w
        velocity = momentum * velocity - 0.1 * gradient
        w = w + velocity
    np.testing.assert_allclose(model.layers[0].get_weights()[0], w, rtol=1e-5)
