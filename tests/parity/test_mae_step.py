"""MAE's training step against a plain-PyTorch re-statement of the authors' objective (issue 36 item 4).

He et al. 2022, Sec. 3 "Reconstruction target": the loss is the mean squared error between
the decoder's prediction and the image's pixels, on the masked patches only, each target
patch normalised by its own mean and standard deviation (`norm_pix_loss`, the default of
the released models). The reference follows the authors' `forward_loss` (facts read from
facebookresearch/mae `models_mae.py`): channels-first images cut into (h, p, w, q) and
laid out as (h w, p q c); the patch's variance is torch's default (unbiased, divided by
K - 1); `(var + 1e-6) ** .5`; squared error averaged over the patch's values, then summed
over masked patches and divided by their number.

The encoder and decoder Transformers are not re-stated: the reference takes the
decoder's last hidden states (read from our model with a hook on its prediction layer)
and the prediction layer's weights, predicts the pixels in torch, and takes one SGD step
on that layer. Our trainer's `train_on_batch` (same images, the same mask: the masking
seed is rewound to the state that drew the mask the reference was given) must give the
same loss and the same updated prediction layer.
"""

import numpy as np
import pytest

import keras

torch = pytest.importorskip("torch")

from keras_paperzoo.models.mae import MAE  # noqa: E402
from keras_paperzoo.models.vit import ViTBackbone  # noqa: E402
from tests.parity.parity_checks import assert_close, call_reading_input  # noqa: E402

LEARNING_RATE = 0.5


def reference_mae_step(images_nchw, mask, hidden, kernel, bias, patch, learning_rate):
    """The authors' masked, normalised-pixel MSE and one SGD step on the pixel predictor.

    images_nchw (B, C, H, W); mask (B, N), 1 = removed; hidden (B, N, d) the decoder's
    normalised hidden states at the patch positions; kernel (d, p*p*C) and bias the linear
    predictor. Returns (loss, new kernel, new bias, prediction).
    """
    w = torch.tensor(kernel, requires_grad=True)
    b = torch.tensor(bias, requires_grad=True)
    pred = torch.tensor(hidden) @ w + b  # (B, N, p*p*C)
    imgs = torch.tensor(images_nchw)
    n, c, height, width = imgs.shape
    h, wd = height // patch, width // patch
    target = imgs.reshape(n, c, h, patch, wd, patch)
    target = torch.einsum("nchpwq->nhwpqc", target).reshape(n, h * wd, patch * patch * c)
    mean = target.mean(dim=-1, keepdim=True)
    var = target.var(dim=-1, keepdim=True)  # unbiased, torch's default
    target = (target - mean) / (var + 1.0e-6) ** 0.5
    loss = ((pred - target) ** 2).mean(dim=-1)  # (B, N), mean loss per patch
    m = torch.tensor(mask)
    loss = (loss * m).sum() / m.sum()  # mean loss on removed patches
    loss.backward()
    with torch.no_grad():
        new_w = w - learning_rate * w.grad
        new_b = b - learning_rate * b.grad
    return float(loss.detach()), new_w.numpy(), new_b.numpy(), pred.detach().numpy()


def _hidden_states(mae, images):
    """Run our MAE once, returning (pred, mask, the prediction layer's input) as NumPy."""
    outputs, hidden = call_reading_input(mae.decoder.predictor, lambda: mae(images, training=True))
    p = mae.encoder.num_prefix_tokens
    return keras.ops.convert_to_numpy(outputs["pred"]), keras.ops.convert_to_numpy(outputs["mask"]), hidden[:, p:, :]


def test_mae_step_matches_the_authors_normalised_pixel_loss_on_masked_patches():
    keras.utils.set_random_seed(0)
    encoder = ViTBackbone(patch_size=2, num_layers=1, hidden_dim=8, num_heads=2, mlp_dim=16,
                          image_shape=(8, 8, 3), dropout_rate=0.0)
    mae = MAE(encoder, mask_ratio=0.75, decoder_depth=1, decoder_dim=8, decoder_heads=2, seed=3)
    mae.compile(optimizer=keras.optimizers.SGD(LEARNING_RATE))
    images = np.random.default_rng(0).random((2, 8, 8, 3)).astype("float32")

    seed_state = keras.ops.convert_to_numpy(mae.masking.seed_generator.state)
    pred, mask, hidden = _hidden_states(mae, images)
    mae.masking.seed_generator.state.assign(seed_state)  # the step draws the same mask
    assert mask.shape == (2, 16) and (mask.sum(axis=1) == 12).all()

    kernel = keras.ops.convert_to_numpy(mae.decoder.predictor.kernel)
    bias = keras.ops.convert_to_numpy(mae.decoder.predictor.bias)
    ref_loss, ref_kernel, ref_bias, ref_pred = reference_mae_step(
        images.transpose(0, 3, 1, 2), mask, hidden, kernel, bias, 2, LEARNING_RATE)
    assert_close(pred, ref_pred)

    logs = mae.train_on_batch(images, return_dict=True)
    assert logs["loss"] == pytest.approx(ref_loss, rel=1e-5)
    assert_close(keras.ops.convert_to_numpy(mae.decoder.predictor.kernel), ref_kernel)
    assert_close(keras.ops.convert_to_numpy(mae.decoder.predictor.bias), ref_bias)
    assert np.abs(ref_kernel - kernel).max() > 1e-3  # the step moved the predictor
