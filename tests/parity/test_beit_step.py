"""BEiT's training step against a plain-PyTorch re-statement of the authors' MIM objective (issue 36 item 4).

Bao et al. 2022, Sec. 2.2, eq. (1): maximise sum_{i in M} log p_MIM(z_i | x^M), with
p_MIM(z' | x^M) = softmax_{z'}(W_c h_i^L + b_c). The authors' pre-training loop
(microsoft/unilm `beit/engine_for_pretraining.py`, facts read there) takes the model's
outputs at the masked positions only (`outputs = model(samples, bool_masked_pos)`, the
head applied to `x[bool_masked_pos]`), the tokenizer's ids at the same positions
(`labels = input_ids[bool_masked_pos]`), and `nn.CrossEntropyLoss()`: the mean over the
masked positions of the whole batch.

The Transformer is not re-stated: the reference is given the visual tokens (a fixed,
weightless stand-in tokenizer whose ids it recomputes in NumPy), the mask our trainer drew
(its seed rewound so that `train_on_batch` draws it again), the backbone's last hidden
states (read with a hook on the MIM head) and the head's weights; it applies the head in
torch, gathers the masked positions as the authors do, and takes one SGD step on the head.
Our trainer's step must give the same loss and the same updated head.
"""

import numpy as np
import pytest

import keras
from keras import ops

torch = pytest.importorskip("torch")

from keras_paperzoo.models.beit import BEiT, BEiTBackbone  # noqa: E402
from tests.parity.parity_checks import assert_close, call_reading_input  # noqa: E402

LEARNING_RATE = 0.5
VOCABULARY = 11
PATCH = 2
CODEBOOK = np.random.default_rng(7).standard_normal((PATCH * PATCH, VOCABULARY)).astype("float32")


class FixedTokenizer(keras.layers.Layer):
    """A weightless stand-in for the dVAE: token of a patch = argmax of its pixels x a fixed matrix."""

    vocabulary_size = VOCABULARY

    def tokenize(self, images):
        b, h, w, _ = ops.shape(images)
        x = ops.reshape(images, (b, h // PATCH, PATCH, w // PATCH, PATCH))
        x = ops.reshape(ops.transpose(x, (0, 1, 3, 2, 4)), (b, h // PATCH, w // PATCH, PATCH * PATCH))
        return ops.argmax(ops.matmul(x, ops.convert_to_tensor(CODEBOOK)), axis=-1)  # (B, h, w)


def numpy_tokens(images):
    """The same ids in NumPy, raster order: (B, N)."""
    b, h, w, _ = images.shape
    x = images.reshape(b, h // PATCH, PATCH, w // PATCH, PATCH).transpose(0, 1, 3, 2, 4)
    return (x.reshape(b, -1, PATCH * PATCH) @ CODEBOOK).argmax(-1)


def reference_beit_step(hidden, tokens, bool_masked_pos, kernel, bias, learning_rate):
    """The authors' MIM loss and one SGD step on the MIM head (W_c, b_c). Returns (loss, new W_c, new b_c)."""
    head = torch.nn.Linear(kernel.shape[0], kernel.shape[1])
    with torch.no_grad():
        head.weight.copy_(torch.tensor(kernel.T))
        head.bias.copy_(torch.tensor(bias))
    masked = torch.tensor(bool_masked_pos)
    outputs = head(torch.tensor(hidden)[masked])  # (|M| over the batch, |V|)
    labels = torch.tensor(tokens, dtype=torch.long)[masked]
    loss = torch.nn.CrossEntropyLoss()(input=outputs, target=labels)
    optimizer = torch.optim.SGD(head.parameters(), lr=learning_rate)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return float(loss.detach()), head.weight.detach().numpy().T, head.bias.detach().numpy()


def _hidden_states(beit, images):
    """Run our BEiT once: (mask, the MIM head's input) as NumPy."""
    outputs, hidden = call_reading_input(beit.head, lambda: beit(images, training=True))
    return ops.convert_to_numpy(outputs["mask"]), hidden


# The backbone's pooled norm serves fine-tuning only: pre-training gives it no gradient (Keras says so).
@pytest.mark.filterwarnings("ignore:Gradients do not exist for variables:UserWarning")
def test_beit_step_matches_the_authors_cross_entropy_on_masked_visual_tokens():
    keras.utils.set_random_seed(0)
    backbone = BEiTBackbone(patch_size=PATCH, num_layers=1, hidden_dim=8, num_heads=2, mlp_dim=16,
                            image_shape=(16, 16, 1), drop_path_rate=0.0)
    beit = BEiT(backbone, FixedTokenizer(), seed=3)  # 75/196 of 64 patches: 25
    beit.compile(optimizer=keras.optimizers.SGD(LEARNING_RATE))
    images = np.random.default_rng(0).random((3, 16, 16, 1)).astype("float32")
    tokens = numpy_tokens(images)
    np.testing.assert_array_equal(ops.convert_to_numpy(beit.visual_tokens(images)), tokens)

    seed_state = ops.convert_to_numpy(beit.masking.seed_generator.state)
    mask, hidden = _hidden_states(beit, images)
    beit.masking.seed_generator.state.assign(seed_state)  # the step draws the same mask
    assert mask.shape == (3, 64) and (mask.sum(axis=1) >= 16).all(), mask.sum(axis=1)

    kernel, bias = ops.convert_to_numpy(beit.head.kernel), ops.convert_to_numpy(beit.head.bias)
    ref_loss, ref_kernel, ref_bias = reference_beit_step(hidden, tokens, mask > 0.5, kernel, bias, LEARNING_RATE)

    logs = beit.train_on_batch(images, return_dict=True)
    assert logs["loss"] == pytest.approx(ref_loss, rel=1e-5)
    assert_close(ops.convert_to_numpy(beit.head.kernel), ref_kernel)
    assert_close(ops.convert_to_numpy(beit.head.bias), ref_bias)
    assert np.abs(ref_kernel - kernel).max() > 1e-3  # the step moved the head
