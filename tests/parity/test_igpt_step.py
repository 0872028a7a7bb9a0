"""iGPT's training step against a plain-PyTorch re-statement of the released code's objectives (issue 36 item 4).

Chen et al. 2020, Sec. 2.1: L_AR = E[-log p(x)] over raster order, L_BERT = E_M sum_{i in M}
-log p(x_i | x_[n]\\M). Facts from the released code (openai/image-gpt `src/model.py`,
MIT): the AR input is the content embeddings shifted right behind a learned `sos` vector
(`concat([sos, h[:, :-1]])`), the logits are `h @ wtet^T` with an untied, bias-free
projection, the loss `sparse_softmax_cross_entropy_with_logits(gen_logits, X)`; AR takes
`reduce_mean` over batch and positions, BERT sums each image's losses over its masked
positions, divides by their number (`reduce_sum(l * IM, 1) / reduce_sum(IM, 1)`), then
takes the batch mean.

The Transformer is not re-stated: the reference gets the backbone's final states (read
with a hook on our logits projection), the projection's weights, the palette ids and, for
BERT, the mask our trainer drew (its seed rewound so that `train_on_batch` draws it
again); it takes one SGD step on the projection. What our trainer feeds the backbone is
checked against the released code's input too: SOS then x_1 .. x_{n-1} (AR); for BERT the
masked ids become the extra id k, our documented deviation from the released code's
zeroed content embedding (the IGPT docstring), so only the ids are compared there.
"""

import numpy as np
import pytest

import keras
from keras import ops

torch = pytest.importorskip("torch")

from keras_paperzoo.models import GPTBackbone, IGPT  # noqa: E402
from tests.parity.parity_checks import assert_close  # noqa: E402

LEARNING_RATE = 0.5
PALETTE = 8
LENGTH = 12


def reference_igpt_step(hidden, pixel_ids, wtet, learning_rate, masked=None):
    """The released code's gen_loss and one SGD step on `wtet` (k, d). Returns (loss, new wtet)."""
    w = torch.tensor(wtet, requires_grad=True)
    batch, sequence, width = hidden.shape
    h_flat = torch.tensor(hidden).reshape(batch * sequence, width)
    gen_logits = (h_flat @ w.t()).reshape(batch, sequence, -1)
    labels = torch.tensor(pixel_ids, dtype=torch.long)
    gen_losses = torch.nn.functional.cross_entropy(gen_logits.permute(0, 2, 1), labels, reduction="none")  # (B, n)
    if masked is None:  # AR
        loss = gen_losses.mean()
    else:  # BERT: IM = 1 on the masked positions
        im = torch.tensor(masked)
        loss = ((gen_losses * im).sum(dim=1) / im.sum(dim=1)).mean()
    loss.backward()
    with torch.no_grad():
        new_w = w - learning_rate * w.grad
    return float(loss.detach()), new_w.numpy()


def _run(igpt, pixel_ids):
    """Our forward pass once: (backbone token ids, loss mask, the projection's input) as NumPy."""
    seen = {}
    projection, backbone = igpt.logits_projection, igpt.backbone
    projection_call, backbone_call = projection.call, backbone.call

    def capture_states(inputs, *args, **kwargs):
        seen["hidden"] = ops.convert_to_numpy(inputs)
        return projection_call(inputs, *args, **kwargs)

    def capture_ids(inputs, *args, **kwargs):
        seen["ids"] = ops.convert_to_numpy(inputs)
        return backbone_call(inputs, *args, **kwargs)

    projection.call, backbone.call = capture_states, capture_ids
    try:
        outputs = igpt(pixel_ids, training=True)
    finally:
        del projection.call, backbone.call
    return seen["ids"], ops.convert_to_numpy(outputs["mask"]), seen["hidden"]


@pytest.mark.parametrize("objective", ["autoregressive", "bert"])
def test_igpt_step_matches_the_released_codes_loss(objective):
    keras.utils.set_random_seed(0)
    backbone = GPTBackbone(vocabulary_size=PALETTE + 1, num_layers=1, hidden_dim=8, num_heads=2, intermediate_dim=16,
                           max_sequence_length=LENGTH, dropout=0.0, causal=objective == "autoregressive")
    igpt = IGPT(backbone, objective=objective, mask_probability=0.3, seed=5)
    kernel = igpt.logits_projection.kernel  # zero-initialised, as the released code's wtet: start elsewhere
    kernel.assign(np.random.default_rng(1).normal(size=kernel.shape).astype("float32"))
    igpt.compile(optimizer=keras.optimizers.SGD(LEARNING_RATE))
    pixel_ids = np.random.default_rng(0).integers(0, PALETTE, size=(3, LENGTH)).astype("int32")

    seed_state = ops.convert_to_numpy(igpt.seed_generator.state)
    ids, mask, hidden = _run(igpt, pixel_ids)
    igpt.seed_generator.state.assign(seed_state)  # the step draws the same BERT mask
    if objective == "autoregressive":
        np.testing.assert_array_equal(ids[:, 0], PALETTE)  # sos
        np.testing.assert_array_equal(ids[:, 1:], pixel_ids[:, :-1])
        masked = None
    else:
        masked = mask
        assert (masked.sum(axis=1) >= 1).all() and (masked.sum(axis=1) < LENGTH).all(), masked
        np.testing.assert_array_equal(ids, np.where(masked > 0, PALETTE, pixel_ids))

    wtet = ops.convert_to_numpy(kernel).T  # (k, d)
    ref_loss, ref_wtet = reference_igpt_step(hidden, pixel_ids, wtet, LEARNING_RATE, masked)

    logs = igpt.train_on_batch(pixel_ids, return_dict=True)
    assert logs["loss"] == pytest.approx(ref_loss, rel=1e-5)
    assert_close(ops.convert_to_numpy(kernel).T, ref_wtet)
    assert np.abs(ref_wtet - wtet).max() > 1e-3  # the step moved the projection
