"""The pieces the MoCo v2, DenseCL, SimCLR and BYOL references share, in plain PyTorch.

Each is written from its paper (the formula beside it). They replace what the references
took from lightly (named in brackets), whose model utilities import torchvision, which
does not import beside a CPU-only torch (`cifar_resnet.py`):

- `cifar_resnet18(bn_splits)`: `cifar_resnet.cifar_resnet18_maps` + global average
  pooling, (B, 3, s, s) -> (B, 512) (torchvision's `resnet18` with the CIFAR stem).
- `moco_head`: MoCo v2's head, Linear - ReLU - Linear with biases (Chen et al. 2020,
  the authors' `--mlp`) [lightly `MoCoProjectionHead`].
- `bn_mlp`: Linear (no bias) - BN - ReLU - Linear, BYOL's projector and predictor
  (Grill et al. 2020, Sec. 3.3) [lightly `BYOLProjectionHead`, `BYOLPredictionHead`].
- `lars_step(model, lr, weight_decay)`: SimCLR's and BYOL's optimizer step, `lars.LARS`
  (momentum 0.9, eta 0.001, biases and norm parameters excluded) on the trainable parameters.
- `momentum_copy(module)`: the key encoder / target network, a deep copy with no gradient,
  equal to the online network at start (MoCo Algorithm 1: f_k.params = f_q.params)
  [lightly `copy.deepcopy` + `deactivate_requires_grad`].
- `momentum_update(online, target, m)`: theta_k <- m theta_k + (1 - m) theta_q (MoCo
  eq. 2; BYOL's xi <- tau xi + (1 - tau) theta, Sec. 3.1), parameters only, batch-norm
  statistics not [lightly `update_momentum`].
- `cosine_momentum(k, K, tau_base)`: BYOL's tau_k = 1 - (1 - tau_base)(cos(pi k / K) + 1) / 2
  (Sec. 3.2), k clipped to K [lightly `cosine_schedule(k, K, tau_base, 1)`, which has
  pi k / (K - 1) and so reaches 1 one step earlier].
- `shuffled_call(encoder, x)`: Shuffling BN's key pass on one device (MoCo Sec. 3.3):
  encoder(x[pi]) put back in order by pi^-1 [lightly `batch_shuffle`, `batch_unshuffle`].
- `FeatureQueue`: MoCo's dictionary of K keys, a ring buffer read before it is written
  (Algorithm 1: `enqueue(queue, k)`, `dequeue(queue)`) [lightly `MemoryBankModule`].
- `info_nce(positive, negative, tau)`: MoCo eq. 1, L_q = -log exp(q.k+ / tau) /
  sum_{i=0..K} exp(q.k_i / tau), the batch mean [lightly `NTXentLoss(memory_bank_size=...)`].
- `nt_xent(z_a, z_b, tau)`: SimCLR eq. 1 over the 2N views, the mean over all 2N anchors
  [lightly `NTXentLoss()`].
- `byol_loss(q, z)`: BYOL eq. 2, 2 - 2 cos(q, sg(z')), the batch mean [lightly
  `NegativeCosineSimilarity` n: 2 + 2 n(q, z')].

keras-paperzoo's twins, which tests/test_ssl_benchmark_references.py compares them with:
`losses.info_nce`, `losses.nt_xent`, `losses.byol_loss`, `layers.FeatureQueue`,
`training.ema.ema_update` and `training.momentum.cosine_momentum`.
"""

import copy
import math

import torch
import torch.nn.functional as F
from torch import nn

from .cifar_resnet import cifar_resnet18_maps
from .lars import LARS
from .steps import loss_step


def cifar_resnet18(bn_splits=1):
    """(B, 3, s, s) -> (B, 512): the CIFAR ResNet-18 (`SplitBatchNorm(bn_splits)` for bn_splits > 1), pooled."""
    return nn.Sequential(cifar_resnet18_maps(bn_splits), nn.AdaptiveAvgPool2d(1), nn.Flatten())


def moco_head(in_dim=512, hidden_dim=2048, out_dim=128):
    """MoCo v2's projection head: Linear - ReLU - Linear, with biases, no batch norm."""
    return nn.Sequential(nn.Linear(in_dim, hidden_dim), nn.ReLU(inplace=True), nn.Linear(hidden_dim, out_dim))


def bn_mlp(in_dim, hidden_dim, out_dim):
    """Linear (no bias: the BN's beta replaces it) - BN - ReLU - Linear: BYOL's projector and predictor."""
    return nn.Sequential(nn.Linear(in_dim, hidden_dim, bias=False), nn.BatchNorm1d(hidden_dim),
                         nn.ReLU(inplace=True), nn.Linear(hidden_dim, out_dim))


def momentum_copy(module):
    """A deep copy of `module` that no gradient reaches (MoCo's key encoder, BYOL's target), equal at start."""
    return copy.deepcopy(module).requires_grad_(False)


@torch.no_grad()
def momentum_update(online, target, momentum):
    """target <- m target + (1 - m) online, parameter by parameter (BN statistics not)."""
    for p, q in zip(online.parameters(), target.parameters()):
        q.mul_(momentum).add_(p.detach(), alpha=1 - momentum)


def cosine_momentum(step, total_steps, base):
    """BYOL's tau_k = 1 - (1 - base)(cos(pi k / K) + 1) / 2, k = min(step, K): from `base` at k = 0 to 1 at K."""
    progress = min(step / max(total_steps, 1), 1.0)
    return 1.0 - (1.0 - base) * (math.cos(math.pi * progress) + 1.0) / 2.0


@torch.no_grad()
def shuffled_call(encoder, x):
    """`encoder(x)` over a random permutation of the batch, un-permuted: Shuffling BN on one device.

    With `SplitBatchNorm` groups in `encoder`, a query and its key are normalised with the
    statistics of different samples. `encoder` returns a (B, ...) tensor or a tuple of them."""
    shuffle = torch.randperm(len(x), device=x.device)  # (B,)
    unshuffle = torch.argsort(shuffle)
    out = encoder(x[shuffle])
    return out[unshuffle] if torch.is_tensor(out) else tuple(t[unshuffle] for t in out)


class FeatureQueue(nn.Module):
    """K keys of width C (random unit vectors at start) and a write pointer.

    `read()` gives the keys as they are (a copy); `enqueue(keys)` writes the B keys over
    the B oldest and moves the pointer by B mod K (the authors' `queue[:, ptr:ptr + B] = k.T`)."""

    def __init__(self, size, dim):
        super().__init__()
        self.register_buffer("queue", F.normalize(torch.randn(size, dim), dim=1))  # (K, C)
        self.pointer = 0

    def read(self):
        return self.queue.clone()  # (K, C): a later enqueue does not change it

    @torch.no_grad()
    def enqueue(self, keys):
        rows = torch.arange(self.pointer, self.pointer + len(keys), device=keys.device) % len(self.queue)  # (B,)
        self.queue[rows] = keys.detach().to(self.queue.dtype)
        self.pointer = (self.pointer + len(keys)) % len(self.queue)


def info_nce(positive, negative, temperature):
    """MoCo eq. 1 from its logits' parts: positive (N, 1) q.k+, negative (N, K) q.k_i -> the mean of
    -log softmax([positive | negative] / tau)[0]."""
    logits = torch.cat([positive, negative], dim=1) / temperature  # (N, 1 + K), the positive in column 0
    return F.cross_entropy(logits, torch.zeros(len(logits), dtype=torch.long, device=logits.device))


def nt_xent(z_a, z_b, temperature):
    """SimCLR eq. 1: each of the 2N views picks the other view of its image among the 2N - 1 others.

    z_a, z_b: (N, C) projections of the two views (normalised here: cosine similarity).
    l(i, j) = -log exp(sim(z_i, z_j) / tau) / sum_{k != i} exp(sim(z_i, z_k) / tau), averaged
    over all 2N anchors (both orders of each pair)."""
    n = len(z_a)
    z = F.normalize(torch.cat([z_a, z_b]), dim=1)  # (2N, C)
    logits = z @ z.t() / temperature  # (2N, 2N)
    logits = logits.masked_fill(torch.eye(2 * n, dtype=torch.bool, device=z.device), float("-inf"))  # k != i
    positives = (torch.arange(2 * n, device=z.device) + n) % (2 * n)  # (2N,): row i's other view
    return F.cross_entropy(logits, positives)


def byol_loss(q, z):
    """BYOL eq. 2: ||q / ||q|| - z' / ||z'|| ||^2 = 2 - 2 cos(q, z'), z' under stop-gradient; (B, D) each -> mean."""
    return (2.0 - 2.0 * F.cosine_similarity(q, z.detach(), dim=1)).mean()


def lars_step(model, lr, weight_decay):
    """(step(*views) -> detached loss, description): `model.loss` under LARS on the trainable parameters."""
    opt = LARS([p for p in model.parameters() if p.requires_grad], lr=lr, momentum=0.9, weight_decay=weight_decay)
    description = f"LARS(lr={lr:g}, momentum=0.9, weight_decay={weight_decay:g}, eta=0.001) (torch_reference/lars.py)"
    return loss_step(model, opt), description
