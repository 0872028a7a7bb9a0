"""benchmarks/torch_reference/swav_cifar.py computes SwAV's codes and loss as keras-paperzoo does.

`python -m benchmarks ssl --models swav` times our SwAV step against this plain PyTorch
one; the comparison means something only if both compute the same objective. The
reference imports neither torchvision nor lightly, so it runs here.
"""

import math

import numpy as np
import pytest

from keras import ops

from keras_paperzoo.losses import sinkhorn, swav_loss

torch = pytest.importorskip("torch")
from benchmarks.torch_reference import swav_cifar  # noqa: E402  (needs torch)


def _cosines(shape, seed):
    """Scores z . c of unit vectors: cosines in [-1, 1], as SwAV's scores are."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((shape[0], 16))
    c = rng.standard_normal((shape[1], 16))
    z /= np.linalg.norm(z, axis=1, keepdims=True)
    c /= np.linalg.norm(c, axis=1, keepdims=True)
    return (z @ c.T).astype("float32")  # (B, K)


def test_reference_sinkhorn_matches_keras_paperzoos():
    scores = _cosines((12, 30), seed=0)  # eps 0.05: exp(s / eps) up to e^20, no shift needed in float32
    expected = ops.convert_to_numpy(sinkhorn(scores, epsilon=0.05, iterations=3))
    got = swav_cifar.sinkhorn(torch.tensor(scores), epsilon=0.05, iterations=3).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-5)  # each sample's code sums to 1
    assert got.argmax(axis=1).tolist() == expected.argmax(axis=1).tolist()


def test_reference_swav_loss_matches_keras_paperzoos():
    scores = [_cosines((6, 10), seed=seed) for seed in range(4)]  # V = 4 crops, K = 10
    codes = [ops.convert_to_numpy(sinkhorn(scores[i])) for i in (0, 1)]
    expected = float(ops.convert_to_numpy(swav_loss(scores, codes, crops_for_assign=(0, 1), temperature=0.1)))
    got = swav_cifar.swav_loss([torch.tensor(s) for s in scores], [torch.tensor(q) for q in codes], (0, 1), 0.1)
    assert float(got) == pytest.approx(expected, rel=1e-5)
    uniform = swav_cifar.swav_loss([torch.zeros(6, 10)] * 4, [torch.full((6, 10), 0.1)] * 2)
    assert float(uniform) == pytest.approx(math.log(10), rel=1e-6)  # ln K for uniform predictions


def test_reference_step_normalises_the_prototypes_and_shifts_the_queue():
    torch.manual_seed(0)
    model = swav_cifar.SwAV(projection_dims=(32, 8), num_prototypes=12, queue_length=8).eval()  # BN: fixed stats
    with torch.no_grad():
        model.prototypes.weight.mul_(3.0)
    before = model.queue.clone()  # (2, 8, 8)
    crops = [torch.randn(4, 3, 8, 8) for _ in range(2)] + [torch.randn(4, 3, 4, 4) for _ in range(2)]
    loss = model.loss(*crops)
    np.testing.assert_allclose(model.prototypes.weight.norm(dim=1).detach().numpy(), 1.0, rtol=1e-5)
    assert 0 < float(loss.detach()) < 2 * math.log(12)
    z, scores = model(crops)  # (16, 8), (16, 12)
    assert scores.shape == (16, 12)
    for i in (0, 1):  # assignment crop i's features in front of its queue, the older ones shifted back by B
        np.testing.assert_allclose(model.queue[i, :4].numpy(), z[4 * i:4 * (i + 1)].detach().numpy(), atol=1e-6)
        np.testing.assert_array_equal(model.queue[i, 4:].numpy(), before[i, :4].numpy())
