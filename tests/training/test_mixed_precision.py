"""Every trainer under Keras's mixed-precision policies (issue 19, part 2).

Per trainer (`tests/trainer_zoo.py`) and policy: one epoch of two steps from the same seed as
a float32 run gives finite logs and losses within a tolerance of the float32 ones, and every variable
(weights, queues, memory banks, EMA copies, optimizer slots) stays float32 or an integer type.
On the torch leg every trainer runs (a second a trainer); on TensorFlow and JAX, whose
compilation costs 10-40 s per trainer and policy, two: the GAN (its own step, two optimizers,
its own loss scaling) and SimCLR (augmentation layers, the contrastive softmax). All passed on
all three legs on 2026-11-26 (MoCo and a ResNet classifier too, 50-80 s each on JAX); the Transformer,
iGPT, BEiT and its visual tokenizer passed on TensorFlow on 2026-11-27.
"""

import numpy as np
import pytest

import keras

from tests.trainer_zoo import TRAINERS

EVERY_LEG = ("gan", "simclr")
POLICIES = ("mixed_bfloat16", "mixed_float16")
# bfloat16 keeps 8 bits of mantissa: ~0.4 % per rounding; the losses after two steps agree to 2 %.
RTOL = {"mixed_bfloat16": 0.02, "mixed_float16": 0.005}


def _fit(name, policy):
    previous = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy(policy)
    try:
        keras.utils.set_random_seed(0)
        model, x, y, batch_size = TRAINERS[name]()
        model.compile()
        history = model.fit(x, y, batch_size=batch_size, epochs=1, shuffle=False, verbose=0).history
    finally:
        keras.mixed_precision.set_global_policy(previous)
    return model, {key: float(values[-1]) for key, values in history.items()}


@pytest.mark.parametrize("name", sorted(TRAINERS))
def test_every_trainer_trains_under_both_policies_with_float32_state(name):
    if keras.backend.backend() != "torch" and name not in EVERY_LEG:
        pytest.skip(f"{name}: on the torch leg (every trainer); here only {EVERY_LEG}")
    _, reference = _fit(name, "float32")
    for policy in POLICIES:
        model, logs = _fit(name, policy)
        assert model.dtype_policy.name == policy
        for key, value in logs.items():
            assert np.isfinite(value), f"{name} under {policy}: {key} = {value}"
            if "loss" in key:  # (accuracies move by whole examples: 1 / 16 when one flips)
                np.testing.assert_allclose(value, reference[key], rtol=RTOL[policy], atol=1e-3,
                                           err_msg=f"{name} under {policy}: {key}")
        wrong = [f"{v.path}: {v.dtype}" for v in model.variables
                 if "float" in v.dtype and v.dtype != "float32"]
        assert not wrong, f"{name} under {policy}: variables not float32: {wrong[:5]}"


def test_the_gans_float16_loss_scale_is_divided_out_of_its_updates():
    """Under mixed_float16 each of the GAN's two optimizers scales its loss by 128 and divides
    the gradients by 128: the update equals the unscaled one (a missing division would make it
    128 times larger, a missing scale would flush small float16 gradients to zero)."""
    from keras_paperzoo.training.step import MIXED_FLOAT16_LOSS_SCALE

    updates = {}
    for auto_scale_loss in (True, False):
        keras.mixed_precision.set_global_policy("mixed_float16")
        try:
            keras.utils.set_random_seed(0)
            model, x, y, batch_size = TRAINERS["gan"]()
            model.compile(auto_scale_loss=auto_scale_loss)
            before = [keras.ops.convert_to_numpy(v) for v in model.discriminator.trainable_variables]
            model.fit(x, y, batch_size=batch_size, epochs=1, shuffle=False, verbose=0)
        finally:
            keras.mixed_precision.set_global_policy("float32")
        scale = model.optimizer["discriminator"].loss_scale_factor
        assert scale == (MIXED_FLOAT16_LOSS_SCALE if auto_scale_loss else None)
        updates[auto_scale_loss] = np.concatenate([
            (keras.ops.convert_to_numpy(v) - b).ravel() for v, b in zip(model.discriminator.trainable_variables, before)])
    assert np.abs(updates[False]).max() > 1e-4  # D learned something in two steps
    np.testing.assert_allclose(updates[True], updates[False], rtol=0.05, atol=1e-4)
