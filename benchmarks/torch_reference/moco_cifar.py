"""MoCo v2's training step in plain PyTorch, written from the papers: the reference for the `ssl` family.

The same step as `MoCo.from_preset("moco_cifar_resnet18", version=2, ...)` in
keras-paperzoo (MoCo Algorithm 1, He et al. 2020; v2 head, Chen et al. 2020), the
pieces in `ssl_parts.py`:

- Backbone: `ssl_parts.cifar_resnet18(bn_splits)`, torchvision's ResNet-18 made
  CIFAR-sized as in the MoCo authors' CIFAR demo (a 3x3 stride-1 stem conv with 64
  filters, no max pool, no classifier; 512-d features after global average pooling),
  written out in `cifar_resnet.py`. The layer shapes of keras-paperzoo's
  `ResNetBackbone(stage_blocks=[2, 2, 2, 2], stem="cifar", stem_filters=64,
  shortcut="B")`: 11,168,832 parameters, 1.111 GFLOP forward per 32x32 image.
- Head: `moco_head(512, 2048, 128)`, Linear - ReLU - Linear with biases, no BN (the Keras
  `ProjectionHead((2048, 128))`); q = normalize(head(f(x_q))). Query encoder: 12,481,728
  trainable parameters on both sides.
- Key encoder: a `momentum_copy` of backbone and head, moved by `momentum_update`
  (eq. 2, theta_k <- m theta_k + (1 - m) theta_q, m = 0.99; parameters only, BN
  statistics not, as the Keras `MomentumEncoder`) after q and before the keys (the
  authors' order).
- Shuffling BN on one device (Sec. 3.3): every BatchNorm of the backbone is a
  `cifar_resnet.SplitBatchNorm(G)` (G = 8, the authors' CIFAR demo), normalising G
  groups of B / G samples each (samples i = g mod G), and the keys are computed by
  `shuffled_call` over a random permutation of the key batch, undone after (Keras:
  `shuffle_bn_splits=G`, G contiguous groups through the encoder one at a time; other
  groups, the same statistics per group size and the same cost).
- Loss: `info_nce` (eq. 1) over [q.k+ | q.queue^T] / tau, tau = 0.2, K = 4096, the
  positive in column 0; the `FeatureQueue` is read before the batch's keys are enqueued
  (Keras: `contrastive_logits`, `info_nce_from_logits`, `FeatureQueue`).
- Optimizer: `torch.optim.SGD(lr=0.03 x B / 256, momentum=0.9, weight_decay=1e-4)`
  on the query encoder (weight decay added to the gradient, as keras-paperzoo's
  `ScheduledMomentumSGD(l2=1e-4)`); constant rate (the Keras side's cosine schedule
  costs nothing measurable).

No torchvision or lightly: it runs in the Keras environment's interpreter, and
tests/test_ssl_benchmark_references.py checks its loss, queue and momentum update against
keras-paperzoo's. Timed on its own: `python -m benchmarks ssl --models moco_v2 --runs torch_reference`.
"""

import torch
import torch.nn.functional as F
from torch import nn

from .ssl_parts import FeatureQueue, cifar_resnet18, info_nce, moco_head, momentum_copy, momentum_update, shuffled_call
from .steps import count_params, loss_step


class MoCoV2(nn.Module):
    """Query encoder (backbone + MoCo v2 head), its momentum copy (the key encoder) and the queue."""

    def __init__(self, queue_size=4096, temperature=0.2, momentum=0.99, hidden_dim=2048,
                 projection_dim=128, bn_splits=8):
        super().__init__()
        self.backbone = cifar_resnet18(bn_splits)
        self.head = moco_head(512, hidden_dim, projection_dim)
        self.backbone_momentum = momentum_copy(self.backbone)
        self.head_momentum = momentum_copy(self.head)
        self.queue = FeatureQueue(queue_size, projection_dim)
        self.momentum, self.temperature = momentum, temperature

    def key_encoder(self, x):
        """f_k: (B, 3, s, s) -> (B, 128) unit keys."""
        return F.normalize(self.head_momentum(self.backbone_momentum(x)), dim=1)

    def loss(self, x_q, x_k):
        """InfoNCE of one batch of view pairs, (B, 3, 32, 32) each; enqueues the keys."""
        q = F.normalize(self.head(self.backbone(x_q)), dim=1)  # (B, 128)
        momentum_update(self.backbone, self.backbone_momentum, self.momentum)  # eq. 2, before the keys
        momentum_update(self.head, self.head_momentum, self.momentum)
        k = shuffled_call(self.key_encoder, x_k)  # (B, 128), no gradient
        negatives = self.queue.read()  # (K, 128): the keys of earlier batches
        loss = info_nce((q * k).sum(dim=1, keepdim=True), q @ negatives.t(), self.temperature)
        self.queue.enqueue(k)
        return loss


def make_step(model, batch_size, lr=None, weight_decay=1e-4):
    """(step(x_q, x_k) -> detached loss, description of the optimizer)."""
    lr = 0.03 * batch_size / 256 if lr is None else lr
    params = list(model.backbone.parameters()) + list(model.head.parameters())
    opt = torch.optim.SGD(params, lr=lr, momentum=0.9, weight_decay=weight_decay)
    return loss_step(model, opt), f"SGD(lr={lr:g}, momentum=0.9, weight_decay={weight_decay:g})"


def parameters(model):
    """The query encoder's trainable parameters (the key encoder and the queue get no gradient)."""
    return count_params(model.backbone) + count_params(model.head)
