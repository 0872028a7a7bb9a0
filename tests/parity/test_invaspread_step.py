"""One InvaSpread step equals a plain-PyTorch re-statement of the authors' step (issue 36 item 4).

The reference follows Ye et al. 2019 (https://arxiv.org/abs/1904.03436, Sec. 3.1-3.2) and
the authors' code (mangye16/Unsupervised_Embedding_Learning: `demo_seen.py`'s
`inputs = torch.cat((inputs1, inputs2), 0)`, one forward of the 2N images, and
`BatchCriterion(negM=1, T)` of `BatchAverage.py`), written here from them, not from
keras_paperzoo:

- f = normalize(Linear(h)) of the 2N images, view 1's N first;
- pos_a = exp(x_a . reordered_x_a.data / T), the other view of the image, the weight side
  detached; all_prob = exp(x x^T.data / T) with the diagonal zeroed; all_div = row sums;
- lnPmt = log(pos / all_div); lnPon = sum_b log(1 - all_prob_ab / all_div_a) less the
  positive's term; loss = -(sum lnPmt + sum lnPon) / 2N;
- plain SGD on every parameter.

The reference runs in float64: the authors' form takes log(1 - P) of the positive, whose
P nears 1 as soon as the two views agree, and loses digits to the subtraction in float32
(ours is in float32 without that cancellation, `losses/invaspread.py`). Our float32 step is
compared with the exact one.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import keras  # noqa: E402

from keras_paperzoo.models import InvaSpread  # noqa: E402
from tests.parity.parity_checks import (  # noqa: E402
    assert_close, dense_relu_backbone, kernels_and_biases, set_scaled_normal_start)

TEMPERATURE, LR = 0.1, 0.5


def batch_criterion(x, temperature):
    """The authors' BatchCriterion with negM = 1 on the (2N, d) unit features, view 1's first."""
    batch = x.shape[0]  # 2N
    reordered = torch.cat((x[batch // 2:], x[:batch // 2]), 0)
    pos = torch.exp((x * reordered.detach()).sum(1) / temperature)  # (2N,)
    all_prob = torch.exp(x @ x.t().detach() / temperature) * (1 - torch.eye(batch))  # (2N, 2N), no self
    all_div = all_prob.sum(1)  # negM = 1
    ln_pmt = pos / all_div
    ln_pon = torch.log(1 - all_prob / all_div[:, None])
    ln_pon = ln_pon.sum(1) - torch.log(1 - ln_pmt)  # the positive's term removed
    ln_pmt = torch.log(ln_pmt)
    return -(ln_pmt.sum(0) + ln_pon.sum(0)) / batch


def reference_step(params, view_1, view_2, lr):
    p = {name: torch.tensor(value, dtype=torch.float64, requires_grad=True) for name, value in params.items()}
    x = torch.cat((torch.tensor(view_1), torch.tensor(view_2)), 0).flatten(1).double()  # (2N, H W C), one forward
    h = torch.relu(x @ p["backbone_kernel"] + p["backbone_bias"])
    f = torch.nn.functional.normalize(h @ p["head_kernel"] + p["head_bias"], dim=1)
    loss = batch_criterion(f, TEMPERATURE)
    loss.backward()
    with torch.no_grad():
        return loss.item(), {name: (t - lr * t.grad).float().numpy() for name, t in p.items()}


def _variables(model):
    return kernels_and_biases(backbone=model.backbone, head=model.head)


def test_one_invaspread_step_equals_the_authors_step():
    model = InvaSpread(dense_relu_backbone(), temperature=TEMPERATURE, embedding_dim=4, augmentation=None, seed=2)
    model.compile(optimizer=keras.optimizers.SGD(LR))
    rng = np.random.default_rng(0)
    set_scaled_normal_start(model, rng)  # the same start on every backend and run
    view_1 = rng.normal(size=(5, 2, 2, 3)).astype("float32")
    view_2 = (view_1 + 0.3 * rng.normal(size=view_1.shape)).astype("float32")  # the same images, altered
    before = _variables(model)
    loss, expected = reference_step(before, view_1, view_2, LR)
    logs = model.train_on_batch(x=(view_1, view_2), return_dict=True)
    after = _variables(model)
    assert logs["loss"] == pytest.approx(loss, rel=1e-5)
    for name, value in expected.items():
        assert np.abs(value - before[name]).max() > 1e-3, f"{name} did not move"
        assert_close(after[name], value, err_msg=name)
