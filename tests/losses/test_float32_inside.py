"""Every objective computes in float32 whatever its inputs' dtype (issue 19, part 2).

Under `mixed_bfloat16` / `mixed_float16` the networks hand the losses half-precision
features and logits. A softmax, logsumexp or mean taken in half precision loses about
three decimal digits (float16 keeps 11 bits of mantissa, bfloat16 8), and float16
overflows above 65,504 (exp(11.1)). Each loss below is given half-precision inputs and
must return float32 equal, to float32 rounding, to the loss of the same values in float32:
an implementation that kept the half-precision dtype would miss by ~1e-3 relative.
"""

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo import losses

HALF = ("float16", "bfloat16")


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    unit = lambda *shape: (lambda a: a / np.linalg.norm(a, axis=-1, keepdims=True))(rng.standard_normal(shape))
    return {
        "z_a": unit(16, 32), "z_b": unit(16, 32), "negatives": unit(64, 32),
        "logits": rng.standard_normal((4, 6, 50)) * 3, "labels": rng.integers(1, 50, size=(4, 6)),
        "d_real": rng.standard_normal((16, 1)) * 3, "d_fake": rng.standard_normal((16, 1)) * 3,
        "probabilities": rng.uniform(1e-4, 0.2, size=(16, 9)),
        "patches": rng.standard_normal((4, 16, 12)), "targets": rng.standard_normal((4, 16, 12)),
        "mask": (rng.random((4, 16)) < 0.75).astype("float32"),
    }


LOSSES = {
    "nt_xent (SimCLR)": lambda c, v: losses.nt_xent(c(v["z_a"]), c(v["z_b"]), temperature=0.1),
    "info_nce (MoCo, CPC)": lambda c, v: losses.info_nce(c(v["z_a"]), c(v["z_b"]), c(v["negatives"]), 0.07),
    "invaspread_loss": lambda c, v: losses.invaspread_loss(c(v["z_a"]), c(v["z_b"]), temperature=0.1),
    "nce_loss (InstDisc, CMC)": lambda c, v: losses.nce_loss(c(v["probabilities"]), num_data=1000),
    "byol_loss": lambda c, v: losses.byol_loss(c(v["z_a"]), c(v["z_b"])),
    "discriminator_loss (GAN)": lambda c, v: losses.discriminator_loss(c(v["d_real"]), c(v["d_fake"])),
    "non_saturating_generator_loss": lambda c, v: losses.non_saturating_generator_loss(c(v["d_fake"])),
    "label_smoothed_cross_entropy (Transformer)": lambda c, v: losses.label_smoothed_cross_entropy(
        v["labels"], c(v["logits"])),
    "masked_patch_mse (MAE)": lambda c, v: losses.masked_patch_mse(c(v["patches"]), c(v["targets"]), v["mask"]),
    "normalized_patch_targets (MAE)": lambda c, v: ops.mean(losses.normalized_patch_targets(c(v["patches"])) ** 2),
}


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_the_loss_of_half_precision_inputs_is_the_float32_loss(name, dtype):
    values = _inputs()
    # The half-precision values, and the very same numbers in float32.
    half = {k: keras.ops.convert_to_numpy(ops.cast(v, dtype)) if np.issubdtype(np.asarray(v).dtype, np.floating)
            else v for k, v in values.items()}
    as_half = lambda a: ops.cast(ops.convert_to_tensor(np.asarray(a, "float32")), dtype)
    as_float32 = lambda a: ops.convert_to_tensor(np.asarray(a, "float32"))
    got = LOSSES[name](as_half, half)
    assert keras.backend.standardize_dtype(got.dtype) == "float32", f"{name} returned {got.dtype}"
    expected = LOSSES[name](as_float32, half)
    np.testing.assert_allclose(float(ops.convert_to_numpy(got)), float(ops.convert_to_numpy(expected)), rtol=2e-6)
