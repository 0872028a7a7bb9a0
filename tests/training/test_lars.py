"""LARS (You et al. 2017, as SimCLR's lars_optimizer.py) against a NumPy version of the update."""

import copy

import numpy as np
import pytest

import keras

from keras_paperzoo.training import LARS

SHAPES = {"kernel": (3, 4), "bias": (4,), "batch_normalization/gamma": (4,), "layer_norm_scale": (2, 3)}


def _variables(zero_kernel=False):
    """A kernel, a bias, a batch-norm gamma (rank 1) and a rank-2 variable named for a layer norm."""
    rng = np.random.default_rng(0)
    values = {path: rng.normal(size=shape).astype("float32") for path, shape in SHAPES.items()}
    if zero_kernel:
        values["kernel"][:] = 0.0
    variables = [keras.Variable(values["kernel"], name="kernel"), keras.Variable(values["bias"], name="bias")]
    with keras.name_scope("batch_normalization"):
        variables.append(keras.Variable(values["batch_normalization/gamma"], name="gamma"))
    variables.append(keras.Variable(values["layer_norm_scale"], name="layer_norm_scale"))
    return variables, [values[path] for path in SHAPES]


def _gradients(steps, zero_bias_gradient=False):
    rng = np.random.default_rng(1)
    grads = [[rng.normal(size=shape).astype("float32") for shape in SHAPES.values()] for _ in range(steps)]
    if zero_bias_gradient:
        for step in grads:
            step[1][:] = 0.0
    return grads


def _run(optimizer, steps=3, zero_kernel=False, zero_bias_gradient=False):
    variables, _ = _variables(zero_kernel)
    optimizer.build(variables)
    for grads in _gradients(steps, zero_bias_gradient):
        optimizer.apply([keras.ops.convert_to_tensor(g) for g in grads], variables)
    return [keras.ops.convert_to_numpy(v) for v in variables]


def _reference(lr_of_step, decays, adapts, momentum=0.9, weight_decay=0.1, eta=0.5, nesterov=False, steps=3,
               zero_kernel=False, zero_bias_gradient=False):
    """SimCLR's LARS in float64, one variable at a time."""
    weights = [w.astype("float64") for w in _variables(zero_kernel)[1]]
    velocities = [np.zeros_like(w) for w in weights]
    for step, grads in enumerate(_gradients(steps, zero_bias_gradient)):
        lr = lr_of_step(step)
        for i, g in enumerate(grads):
            g = g.astype("float64")
            if decays[i]:
                g = g + weight_decay * weights[i]
            trust_ratio = 1.0
            w_norm, g_norm = np.linalg.norm(weights[i]), np.linalg.norm(g)
            if adapts[i] and w_norm > 0 and g_norm > 0:
                trust_ratio = eta * w_norm / g_norm
            velocities[i] = momentum * velocities[i] + lr * trust_ratio * g
            if nesterov:
                weights[i] = weights[i] - (momentum * velocities[i] + lr * trust_ratio * g)
            else:
                weights[i] = weights[i] - velocities[i]
    return weights


def _assert_close(got, expected):
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


ONLY_KERNEL = [True, False, False, False]
EVERY = [True] * 4


@pytest.mark.parametrize(
    "options, decays, adapts",
    [
        ({}, ONLY_KERNEL, ONLY_KERNEL),
        ({"exclude_bias_and_norm_from_decay": False}, EVERY, ONLY_KERNEL),
        ({"exclude_bias_and_norm_from_adaptation": False}, ONLY_KERNEL, EVERY),
        ({"exclude_bias_and_norm_from_decay": False, "exclude_bias_and_norm_from_adaptation": False}, EVERY, EVERY),
        ({"exclude_from_decay_names": ["KERNEL"]}, [False] * 4, ONLY_KERNEL),
        ({"exclude_from_adaptation_names": "kern"}, ONLY_KERNEL, [False] * 4),
    ],
)
@pytest.mark.parametrize("nesterov", [False, True])
def test_three_steps_match_the_formula(options, decays, adapts, nesterov):
    optimizer = LARS(0.1, momentum=0.9, weight_decay=0.1, eta=0.5, nesterov=nesterov, **options)
    got = _run(optimizer)
    _assert_close(got, _reference(lambda step: 0.1, decays, adapts, nesterov=nesterov))
    variables, _ = _variables()
    assert [optimizer.decays(v) for v in variables] == decays
    assert [optimizer.adapts(v) for v in variables] == adapts


def test_exclusions_change_the_result():
    # The rule is not vacuous: excluding nothing moves the bias and gamma differently.
    default = _run(LARS(0.1, weight_decay=0.1, eta=0.5))
    nothing_excluded = _run(LARS(0.1, weight_decay=0.1, eta=0.5, exclude_bias_and_norm_from_decay=False,
                                 exclude_bias_and_norm_from_adaptation=False))
    for i in (1, 2, 3):
        assert np.abs(default[i] - nothing_excluded[i]).max() > 1e-3


def test_a_schedule_sets_the_rate_of_each_step():
    schedule = keras.optimizers.schedules.ExponentialDecay(0.2, decay_steps=1, decay_rate=0.5)
    got = _run(LARS(schedule, momentum=0.8, weight_decay=0.05, eta=0.3, nesterov=True))
    expected = _reference(lambda step: 0.2 * 0.5**step, ONLY_KERNEL, ONLY_KERNEL, momentum=0.8, weight_decay=0.05,
                          eta=0.3, nesterov=True)
    _assert_close(got, expected)


def test_paper_defaults_match_the_formula():
    optimizer = LARS(0.3)
    assert (optimizer.momentum, optimizer.lars_weight_decay, optimizer.eta, optimizer.nesterov) == (0.9, 1e-6, 1e-3, False)
    _assert_close(_run(optimizer), _reference(lambda step: 0.3, ONLY_KERNEL, ONLY_KERNEL, weight_decay=1e-6, eta=1e-3))


def test_base_class_decay_is_off_and_not_applied_twice():
    optimizer = LARS(0.1, weight_decay=0.1, eta=0.5)
    assert optimizer.weight_decay is None  # Keras's decoupled decay
    assert optimizer.get_config()["weight_decay"] == 0.1
    # One step with a zero gradient on plain SGD (momentum 0, no adaptation): w <- w - lr wd w exactly once.
    plain = LARS(0.1, momentum=0.0, weight_decay=0.1, exclude_from_adaptation_names=["kernel"])
    kernel = keras.Variable(np.ones((2, 2), "float32"), name="kernel")
    plain.apply([keras.ops.zeros((2, 2))], [kernel])
    np.testing.assert_allclose(keras.ops.convert_to_numpy(kernel), np.full((2, 2), 1 - 0.1 * 0.1), rtol=1e-6)


def test_zero_weights_and_zero_gradients_use_trust_ratio_1():
    options = dict(weight_decay=0.1, eta=0.5, exclude_bias_and_norm_from_adaptation=False)
    got = _run(LARS(0.1, **options), steps=1, zero_kernel=True, zero_bias_gradient=True)
    grads = _gradients(1)[0]
    start = _variables()[1]
    # ||w|| = 0: the kernel takes a plain SGD step -lr (g + wd * 0).
    np.testing.assert_allclose(got[0], -0.1 * grads[0], rtol=1e-6)
    # The bias (not decayed by default) has g = 0, so ||g|| = 0 and nothing moves.
    np.testing.assert_array_equal(got[1], start[1])
    assert all(np.all(np.isfinite(w)) for w in got)
    expected = _reference(lambda step: 0.1, ONLY_KERNEL, EVERY, steps=3, zero_kernel=True, zero_bias_gradient=True)
    _assert_close(_run(LARS(0.1, **options), zero_kernel=True, zero_bias_gradient=True), expected)


@pytest.mark.parametrize(
    "argument, value, message",
    [
        ("momentum", 1.5, r"momentum must be a number in \[0, 1\); got 1.5"),
        ("weight_decay", -1e-6, r"weight_decay must be a number >= 0; got -1e-06"),
        ("eta", 0, r"eta must be a number > 0; got 0"),
        ("eta", "0.001", r"eta must be a number > 0; got '0.001'"),
        ("exclude_from_decay_names", ["bias", 3], r"exclude_from_decay_names must be a list of non-empty name substrings; got \['bias', 3\]"),
        ("exclude_from_adaptation_names", [""], r"exclude_from_adaptation_names must be .*; got \[''\]"),
    ],
)
def test_bad_arguments_are_refused_by_value(argument, value, message):
    with pytest.raises(ValueError, match=message):
        LARS(0.1, **{argument: value})


def test_config_round_trip_keeps_every_argument():
    schedule = keras.optimizers.schedules.CosineDecay(0.3, decay_steps=100, warmup_target=0.6, warmup_steps=10)
    optimizer = LARS(schedule, momentum=0.8, weight_decay=1.5e-6, eta=0.002, nesterov=True,
                     exclude_bias_and_norm_from_decay=False, exclude_from_adaptation_names=["head_supervised"],
                     global_clipnorm=1.0)
    config = optimizer.get_config()
    restored = LARS.from_config(copy.deepcopy(config))  # from_config replaces the schedule's dict in place
    assert restored.get_config() == config
    assert config["exclude_from_adaptation_names"] == ["head_supervised"]
    assert (restored.nesterov, restored.eta, restored.lars_weight_decay) == (True, 0.002, 1.5e-6)
    assert restored.weight_decay is None


def _tiny_model():
    keras.utils.set_random_seed(0)
    return keras.Sequential(
        [keras.Input((4,)), keras.layers.Dense(3), keras.layers.BatchNormalization(), keras.layers.Dense(2)]
    )


def test_a_saved_model_restores_the_optimizer_and_continues_identically(tmp_path):
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(16, 4)).astype("float32"), rng.normal(size=(16, 2)).astype("float32")
    model = _tiny_model()
    schedule = keras.optimizers.schedules.ExponentialDecay(0.5, decay_steps=2, decay_rate=0.9)
    model.compile(optimizer=LARS(schedule, weight_decay=1e-3, eta=0.01, nesterov=True,
                                 exclude_from_decay_names=["dense_1"]), loss="mse")
    model.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
    path = tmp_path / "lars.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert isinstance(loaded.optimizer, LARS)
    assert loaded.optimizer.get_config() == model.optimizer.get_config()
    # In order (a loaded model's paths lack the outer "sequential/" scope, so the names differ).
    saved = [keras.ops.convert_to_numpy(v) for v in model.optimizer.variables]
    restored = [keras.ops.convert_to_numpy(v) for v in loaded.optimizer.variables]
    assert len(saved) == len(restored) == 1 + len(model.trainable_variables)  # the iteration and one momentum each
    for want, got in zip(saved, restored):
        np.testing.assert_array_equal(got, want)
    assert int(saved[0]) == 2 and np.abs(saved[1]).max() > 0
    # The exclusions are decided again on the loaded variables: the next step is the same.
    model.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
    loaded.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
    for a, b in zip(model.weights, loaded.weights):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(b), keras.ops.convert_to_numpy(a), rtol=1e-5, atol=1e-6)


def test_fit_steps_match_the_formula_on_a_linear_model():
    """Two full-batch steps inside `fit` (tf.function, JAX's stateless jit, PyTorch) against NumPy."""
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(8, 3)), rng.normal(size=(8, 2))
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, bias_initializer="ones")])
    kernel, bias = (keras.ops.convert_to_numpy(w).astype("float64") for w in model.weights)
    model.compile(optimizer=LARS(0.2, weight_decay=0.01, eta=0.5), loss="mse")
    history = model.fit(x.astype("float32"), y.astype("float32"), batch_size=8, epochs=2, shuffle=False, verbose=0)
    velocities = [np.zeros_like(kernel), np.zeros_like(bias)]
    for _ in range(2):
        residual = x @ kernel + bias - y  # (8, 2); mse = mean(residual^2)
        g_kernel = 2 * x.T @ residual / residual.size + 0.01 * kernel
        g_bias = 2 * residual.sum(0) / residual.size  # bias: no decay, no adaptation
        trust = 0.5 * np.linalg.norm(kernel) / np.linalg.norm(g_kernel)
        velocities = [0.9 * velocities[0] + 0.2 * trust * g_kernel, 0.9 * velocities[1] + 0.2 * g_bias]
        kernel, bias = kernel - velocities[0], bias - velocities[1]
    np.testing.assert_allclose(keras.ops.convert_to_numpy(model.weights[0]), kernel, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(model.weights[1]), bias, rtol=1e-4, atol=1e-6)
    assert np.all(np.isfinite(history.history["loss"]))


def test_a_short_fit_lowers_the_loss():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(64, 4)).astype("float32")
    y = (x @ rng.normal(size=(4, 2))).astype("float32")
    model = _tiny_model()
    model.compile(optimizer=LARS(1.0, eta=0.01), loss="mse")
    loss = model.fit(x, y, batch_size=16, epochs=8, verbose=0).history["loss"]
    assert np.all(np.isfinite(loss)) and loss[-1] < 0.7 * loss[0]
