"""A whole SimCLR step against a plain-PyTorch re-statement of the authors' step (issue 36 item 4).

Chen et al. 2020, Algorithm 1 and eq. 1, with the facts of the authors' TensorFlow code
(google-research/simclr, Apache-2.0): the two views are concatenated along the batch before
the network, so batch norm sees all 2N; the v1 head is Dense (no bias) -> BN -> ReLU ->
Dense (no bias) -> BN without beta (`linear_layer` with `use_bn`), BN epsilon 1e-5
(`resnet.py`: BATCH_NORM_EPSILON); `add_contrastive_loss` L2-normalises, masks the
self-similarity with -1e9, and returns `loss_a + loss_b`, each a
`softmax_cross_entropy` averaged over the N anchors of one view.

Two documented differences, asserted as such:
- Loss scale. The paper's eq. 1 averages l(i, j) over all 2N anchors ("L = 1/2N sum"),
  which is our `nt_xent`; the authors' `loss_a + loss_b` is twice that. Ours must equal
  half the authors' loss, and our SGD step at lr equals theirs at lr / 2 (under the
  default LARS the trust ratio removes most of the factor).
- BN epsilon. Our head keeps Keras's 1e-3 (`ProjectionHead`); the test sets the authors'
  1e-5 on our head's batch norms before the step (and checks the default is still Keras's,
  so that a change of default updates this docstring).

Identical weights (a Flatten + Dense backbone and the v1 head, copied into torch), the
same two views (augmentation off), plain SGD; the loss and every updated trainable weight
must agree.
"""

import numpy as np
import pytest

import keras
from keras import ops

torch = pytest.importorskip("torch")
from torch.nn import functional as F  # noqa: E402

from keras_paperzoo.models.simclr import SimCLR  # noqa: E402
from tests.parity.parity_checks import assert_close  # noqa: E402

LEARNING_RATE, TAU, N = 0.5, 0.5, 4
BATCH_NORM_EPSILON = 1e-5  # the authors' resnet.py
LARGE_NUM = 1e9


def batch_norm(x, gamma, beta=None):
    """Training-mode batch norm over the batch (biased variance), as tf.layers.batch_normalization."""
    mean, var = x.mean(dim=0), x.var(dim=0, unbiased=False)
    y = (x - mean) / torch.sqrt(var + BATCH_NORM_EPSILON) * gamma
    return y if beta is None else y + beta


def add_contrastive_loss(hidden, temperature):
    """The authors' loss: loss_a + loss_b, each a mean over one view's N anchors."""
    hidden = F.normalize(hidden, dim=-1)
    hidden1, hidden2 = torch.split(hidden, hidden.shape[0] // 2, dim=0)
    batch_size = hidden1.shape[0]
    labels = torch.arange(batch_size)  # one-hot at column i of [logits_ab | logits_aa]
    masks = torch.eye(batch_size)
    logits_aa = hidden1 @ hidden1.t() / temperature - masks * LARGE_NUM
    logits_bb = hidden2 @ hidden2.t() / temperature - masks * LARGE_NUM
    logits_ab = hidden1 @ hidden2.t() / temperature
    logits_ba = hidden2 @ hidden1.t() / temperature
    loss_a = F.cross_entropy(torch.cat([logits_ab, logits_aa], 1), labels)
    loss_b = F.cross_entropy(torch.cat([logits_ba, logits_bb], 1), labels)
    return loss_a + loss_b


def reference_simclr_gradients(x_a, x_b, params):
    """The authors' loss and its gradients for [backbone W, b, head W0, gamma0, beta0, head W1, gamma1]."""
    params = [torch.tensor(p, requires_grad=True) for p in params]
    w, b, w0, g0, b0, w1, g1 = params
    x = torch.cat([torch.tensor(x_a), torch.tensor(x_b)], dim=0)  # the views along the batch
    h = x.reshape(x.shape[0], -1) @ w + b  # f: Flatten + Dense
    z = batch_norm(torch.relu(batch_norm(h @ w0, g0, b0)) @ w1, g1)  # g
    loss = add_contrastive_loss(z, TAU)
    loss.backward()
    return float(loss.detach()), [p.grad.numpy() for p in params]


def test_simclr_step_matches_the_authors_step_at_half_their_loss():
    keras.utils.set_random_seed(0)
    backbone = keras.Sequential([keras.Input((4, 4, 1)), keras.layers.Flatten(), keras.layers.Dense(6)])
    simclr = SimCLR(backbone, version=1, temperature=TAU, projection_dims=[5, 3], augmentation=None, seed=0)
    norms = [layer for block in simclr.head.blocks for layer in block
             if isinstance(layer, keras.layers.BatchNormalization)]
    assert [norm.epsilon for norm in norms] == [1e-3, 1e-3]  # Keras's default (see the module docstring)
    for norm in norms:
        norm.epsilon = BATCH_NORM_EPSILON
    simclr.compile(optimizer=keras.optimizers.SGD(LEARNING_RATE))
    dense, (d0, bn0, _), (d1, bn1) = backbone.layers[-1], *simclr.head.blocks
    variables = [dense.kernel, dense.bias, d0.kernel, bn0.gamma, bn0.beta, d1.kernel, bn1.gamma]
    assert len(simclr.trainable_variables) == len(variables)
    rng = np.random.default_rng(1)
    for v in (bn0.gamma, bn0.beta, bn1.gamma):  # not the initial 1 / 0, so that their gradients show
        v.assign(rng.uniform(0.5, 1.5, size=v.shape).astype("float32"))
    before = [ops.convert_to_numpy(v) for v in variables]
    x_a, x_b = (rng.random((N, 4, 4, 1)).astype("float32") for _ in range(2))

    authors_loss, grads = reference_simclr_gradients(x_a, x_b, before)
    logs = simclr.train_on_batch((x_a, x_b), return_dict=True)
    assert logs["loss"] == pytest.approx(authors_loss / 2, rel=1e-5)  # eq. 1's mean over 2N anchors
    for v, w, g in zip(variables, before, grads):
        assert_close(ops.convert_to_numpy(v), w - LEARNING_RATE * g / 2)
    assert max(np.abs(g).max() for g in grads) > 1e-3
