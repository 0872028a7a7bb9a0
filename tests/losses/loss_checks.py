"""What the contrastive losses' tests share (NT-Xent, InvaSpread's criterion): their inputs, gradients, bad inputs.

    views(n, d, kind, seed)                        # (N, D) projections of two views
    gradient(function, x)                          # through the active backend's autodiff
    finite_difference_gradient(function, x)        # of a NumPy reference, in float64
    check_bad_temperature_refused(loss, temperature)
    check_bad_shapes_refused(loss, what, names)
"""

import numpy as np
import pytest

import keras

# Not a number > 0 (a bool is not a number here).
BAD_TEMPERATURES = [0, -0.1, "0.1", None, True]


def views(n, d=8, kind="random", seed=0):
    """(N, D) float32 projections of two views: independent, similar (cosine ~ 0.96) or nearly identical."""
    rng = np.random.default_rng(seed)
    z_a = rng.normal(size=(n, d)).astype("float32")
    noise = {"random": None, "similar": 0.3, "nearly_identical": 0.01}[kind]
    if noise is None:
        return z_a, rng.normal(size=(n, d)).astype("float32")
    return z_a, (z_a + noise * rng.normal(size=(n, d))).astype("float32")


def gradient(function, x):
    """d function(x) / dx through the active backend's autodiff (a test helper, not library code)."""
    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        return np.asarray(jax.jit(jax.grad(function))(jax.numpy.asarray(x)))
    if backend == "tensorflow":
        import tensorflow as tf

        variable = tf.Variable(x)
        with tf.GradientTape() as tape:
            value = function(variable)
        return tape.gradient(value, variable).numpy()
    import torch

    tensor = torch.tensor(x, requires_grad=True)
    function(tensor).backward()
    return tensor.grad.numpy()


def finite_difference_gradient(function, x, step=1e-5):
    """d function(x) / dx by central differences in float64 (`function`: a NumPy reference, array -> float)."""
    expected = np.zeros_like(x, dtype="float64")
    for index in np.ndindex(x.shape):
        up, down = x.astype("float64"), x.astype("float64")
        up[index] += step
        down[index] -= step
        expected[index] = (function(up) - function(down)) / (2 * step)
    return expected


def check_bad_temperature_refused(loss, temperature):
    """`loss(a, b, temperature=temperature)` raises ValueError naming the rule and the value."""
    a, b = views(3)
    with pytest.raises(ValueError, match=f"temperature must be a number > 0; got {temperature!r}"):
        loss(a, b, temperature=temperature)


def check_bad_shapes_refused(loss, what, names):
    """`loss(a, b)` refuses a batch of one, two shapes and inputs of rank 3, each by value.

    `what` is the name the messages give the loss, `names` those of its two inputs.
    """
    a, b = views(3)
    with pytest.raises(ValueError, match=r"N >= 2 .*got N = 1"):
        loss(a[:1], b[:1])
    with pytest.raises(ValueError, match=rf"{what} needs {names[0]} and {names[1]} of one shape; got \(3, 8\) and "
                                         r"\(3, 4\)"):
        loss(a, b[:, :4])
    with pytest.raises(ValueError, match=rf"got {names[0]} of rank 3, shape \(3, 8, 1\)"):
        loss(a[..., None], b[..., None])
