"""What the one-step parity tests share: a backbone the reference restates in two lines, the same start on every
backend, our trainer's variables as named arrays, the noise its memory bank draws next, a layer's input read in a call.
"""

import numpy as np

import keras


def dense_relu_backbone(channels=3):
    """(B, 2, 2, channels) images -> Flatten -> Dense(6, ReLU): h = relu(x W + b), x the flattened image."""
    images = keras.Input((2, 2, channels))
    return keras.Model(images, keras.layers.Dense(6, activation="relu")(keras.layers.Flatten()(images)))


def set_scaled_normal_start(model, rng):
    """Every trainable variable drawn from `rng` as N(0, 1) / sqrt(its first dimension): the same start on every
    backend and run."""
    for variable in model.trainable_variables:
        variable.assign((rng.normal(size=variable.shape) / np.sqrt(variable.shape[0])).astype("float32"))


def kernels_and_biases(**networks):
    """NumPy copies of each one-layer network's (kernel, bias), named `{name}_kernel` and `{name}_bias`."""
    arrays = {}
    for name, network in networks.items():
        kernel, bias = network.trainable_variables
        arrays[f"{name}_kernel"] = keras.ops.convert_to_numpy(kernel).copy()
        arrays[f"{name}_bias"] = keras.ops.convert_to_numpy(bias).copy()
    return arrays


def next_noise(memory_bank, batch, num_negatives):
    """The (B, m) rows the next training step draws from `memory_bank`: its generator's state saved and restored."""
    generator = memory_bank.seed_generator
    state = keras.ops.convert_to_numpy(generator.state).copy()
    noise = keras.ops.convert_to_numpy(memory_bank.sample(batch, num_negatives))
    generator.state.assign(state)
    return noise


def call_reading_input(layer, run):
    """`run()` with `layer`'s call wrapped to keep its input: (what `run()` returned, the input as NumPy)."""
    seen = {}
    original = layer.call

    def capture(inputs, *args, **kwargs):
        seen["inputs"] = keras.ops.convert_to_numpy(inputs)
        return original(inputs, *args, **kwargs)

    layer.call = capture
    try:
        outputs = run()
    finally:
        del layer.call
    return outputs, seen["inputs"]


def assert_close(actual, desired, rtol=1e-5, floor=1e-6, err_msg=""):
    """`actual` equals `desired` to `rtol` relative to the array's scale: elementwise
    |actual - desired| <= max(rtol * max|desired|, floor) + rtol * |desired|.

    float32 sums of different orders (TensorFlow's threaded reductions against NumPy's) differ by about 1e-7 of
    the magnitudes summed, so an element that cancels to near zero (a gradient of 5e-4 among entries of 0.9)
    carries the error of the large ones: a tolerance relative to each element alone fails there on one backend and
    not another. Relative to the array's largest entry is what float32 can promise; `floor` covers an array that
    is zero in exact arithmetic (a bias before batch norm gets no gradient: float32 leaves 1e-7 of noise). A wrong
    step (a factor of 2, a missing term) is off by far more.
    """
    desired = np.asarray(desired)
    scale = float(np.abs(desired).max()) if desired.size else 0.0
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=max(rtol * scale, floor), err_msg=err_msg)
