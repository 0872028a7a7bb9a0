"""SelectiveDecayAdamW's update, checked against the formula (PyTorch runs its own multi-tensor version)."""

import numpy as np
import pytest

import keras

from keras_paperzoo.training import SelectiveDecayAdamW


def _run(optimizer, steps=3):
    rng = np.random.default_rng(0)
    kernel = keras.Variable(rng.normal(size=(3, 4)).astype("float32"), name="kernel")
    bias = keras.Variable(rng.normal(size=(4,)).astype("float32"), name="bias")
    variables = [kernel, bias]
    optimizer.build(variables)
    for _ in range(steps):
        grads = [keras.ops.convert_to_tensor(rng.normal(size=v.shape).astype("float32")) for v in variables]
        optimizer.apply(grads, variables)
    return [keras.ops.convert_to_numpy(v) for v in variables]


def _reference(lr_of_step, weight_decay, decays, steps=3, beta_1=0.9, beta_2=0.999, epsilon=1e-8):
    """NumPy: decoupled decay w <- w (1 - lr wd), then Keras's Adam (epsilon outside the square root)."""
    rng = np.random.default_rng(0)
    weights = [rng.normal(size=(3, 4)), rng.normal(size=(4,))]
    m = [np.zeros_like(w) for w in weights]
    v = [np.zeros_like(w) for w in weights]
    for t in range(1, steps + 1):
        lr = lr_of_step(t - 1)
        grads = [rng.normal(size=w.shape).astype("float32") for w in weights]
        for i, (w, g) in enumerate(zip(weights, grads)):
            if decays[i]:
                w -= w * weight_decay * lr
            m[i] += (1 - beta_1) * (g - m[i])
            v[i] += (1 - beta_2) * (g * g - v[i])
            w -= lr * np.sqrt(1 - beta_2**t) / (1 - beta_1**t) * m[i] / (np.sqrt(v[i]) + epsilon)
    return weights


def test_update_is_adamw_with_decay_on_the_kernel_only_under_a_schedule():
    schedule = keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5)
    ours = _run(SelectiveDecayAdamW(schedule, weight_decay=0.1, beta_2=0.99))
    expected = _reference(lambda step: 0.1 * 0.5**step, 0.1, decays=[True, False], beta_2=0.99)
    for got, want in zip(ours, expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("clipping", [{}, {"global_clipnorm": 0.5}, {"clipnorm": 0.5}])
def test_without_the_rule_it_is_keras_adamw(clipping):
    # The gradients' global norm is ~4: clipping at 0.5 changes every step.
    ours = _run(SelectiveDecayAdamW(0.01, weight_decay=0.2, no_decay=None, epsilon=1e-7, **clipping))
    keras_adamw = _run(keras.optimizers.AdamW(0.01, weight_decay=0.2, epsilon=1e-7, **clipping))
    for got, want in zip(ours, keras_adamw):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_global_norm_clipping_scales_every_gradient_by_one_factor():
    # With lr 1 and zero moments, Adam's first step moves each weight by about sign(g): test the
    # clipped gradients instead, through an optimizer whose update is w <- w - g.
    class PlainStep(SelectiveDecayAdamW):
        def update_step(self, gradient, variable, learning_rate):
            variable.assign_sub(gradient)

    rng = np.random.default_rng(0)
    start = [rng.normal(size=(3, 4)), rng.normal(size=(4,))]
    grads = [rng.normal(size=w.shape) for w in start]
    norm = np.sqrt(sum((g**2).sum() for g in grads))
    got = _run(PlainStep(1.0, weight_decay=0.0, global_clipnorm=0.5), steps=1)
    for g, w, d in zip(got, start, grads):
        np.testing.assert_allclose(g, w - d * 0.5 / norm, rtol=1e-5)


def test_a_subclass_with_its_own_update_step_is_honoured():
    class SignAdam(SelectiveDecayAdamW):  # a per-variable rule: the multi-tensor path must step aside
        def update_step(self, gradient, variable, learning_rate):
            variable.assign_sub(keras.ops.sign(gradient) * learning_rate)

    rng = np.random.default_rng(0)
    start = [rng.normal(size=(3, 4)), rng.normal(size=(4,))]
    grads = [rng.normal(size=w.shape) for w in start]
    got = _run(SignAdam(0.5, weight_decay=0.0), steps=1)
    for g, w, d in zip(got, start, grads):
        np.testing.assert_allclose(g, w - 0.5 * np.sign(d), rtol=1e-6)
