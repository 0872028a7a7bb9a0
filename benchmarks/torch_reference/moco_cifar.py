"""MoCo v2 training step in PyTorch from lightly's pieces: the reference for the `ssl` family.

The same step as `MoCo.from_preset("moco_cifar_resnet18", version=2, ...)` in
keras-paperzoo (MoCo Algorithm 1, He et al. 2020; v2 head, Chen et al. 2020):

- Backbone: torchvision's ResNet-18 made CIFAR-sized as in the MoCo authors' CIFAR demo
  and lightly's CIFAR examples: a 3x3 stride-1 stem conv with 64 filters, no max pool,
  the classifier removed (512-d features after global average pooling). This has the
  layer shapes of keras-paperzoo's `ResNetBackbone(stage_blocks=[2, 2, 2, 2],
  stem="cifar", stem_filters=64, shortcut="B")`: 11,168,832 parameters, 1.111 GFLOP
  forward per 32x32 image.
- Head: lightly's `MoCoProjectionHead(512, 2048, 128)` (Linear-ReLU-Linear, biases, no BN).
- Key encoder: a deep copy (lightly `deactivate_requires_grad`), moved by lightly's
  `update_momentum` (parameters only, BN statistics not) before the keys are computed.
- Shuffle-BN on one device: every BatchNorm is lightly's `SplitBatchNorm(num_splits=G)`
  (G = 8, the authors' CIFAR demo), and the key batch is shuffled / un-shuffled with
  lightly's `batch_shuffle` / `batch_unshuffle`.
- Loss: lightly's `NTXentLoss(temperature, memory_bank_size=(K, 128))`: InfoNCE over
  [q.k+ | q.queue^T] / tau with the bank read before the batch's keys are enqueued.
- Optimizer: `torch.optim.SGD(lr=0.03 x B / 256, momentum=0.9, weight_decay=1e-4)`
  (weight decay added to the gradient, as keras-paperzoo's `ScheduledMomentumSGD(l2=1e-4)`).

Timed on its own: `python -m benchmarks ssl --models moco_v2 --runs torch_reference`.
"""

import copy

import torch
import torchvision
from lightly.loss import NTXentLoss
from lightly.models.batchnorm import SplitBatchNorm
from lightly.models.modules import MoCoProjectionHead
from lightly.models.utils import batch_shuffle, batch_unshuffle, deactivate_requires_grad, update_momentum
from torch import nn

from .steps import count_params, loss_step


def cifar_resnet18(bn_splits=8):
    """torchvision ResNet-18 with a 3x3 stride-1 stem, no max pool, no classifier: (B, 3, 32, 32) -> (B, 512)."""
    norm = nn.BatchNorm2d if bn_splits == 1 else (lambda c: SplitBatchNorm(c, bn_splits))
    net = torchvision.models.resnet18(norm_layer=norm)
    net.conv1 = nn.Conv2d(3, 64, 3, stride=1, padding=1, bias=False)
    nn.init.kaiming_normal_(net.conv1.weight, mode="fan_out", nonlinearity="relu")
    net.maxpool = nn.Identity()
    net.fc = nn.Identity()
    return net


class MoCoV2(nn.Module):
    """Query encoder (backbone + MoCo v2 head), its momentum copy, and the queue inside the loss."""

    def __init__(self, queue_size=4096, temperature=0.2, momentum=0.99, hidden_dim=2048,
                 projection_dim=128, bn_splits=8):
        super().__init__()
        self.backbone = cifar_resnet18(bn_splits)
        self.head = MoCoProjectionHead(512, hidden_dim, projection_dim)
        self.backbone_momentum = copy.deepcopy(self.backbone)
        self.head_momentum = copy.deepcopy(self.head)
        deactivate_requires_grad(self.backbone_momentum)
        deactivate_requires_grad(self.head_momentum)
        self.momentum = momentum
        self.criterion = NTXentLoss(temperature=temperature, memory_bank_size=(queue_size, projection_dim))

    def loss(self, x_q, x_k):
        """InfoNCE of one batch of view pairs (B, 3, 32, 32) each; enqueues the keys."""
        q = self.head(self.backbone(x_q))  # (B, 128); normalised inside the loss
        update_momentum(self.backbone, self.backbone_momentum, self.momentum)
        update_momentum(self.head, self.head_momentum, self.momentum)
        with torch.no_grad():
            x_k, shuffle = batch_shuffle(x_k)
            k = self.head_momentum(self.backbone_momentum(x_k))  # (B, 128), shuffled order
            k = batch_unshuffle(k, shuffle)
        return self.criterion(q, k)


def make_step(model, batch_size, lr=None, weight_decay=1e-4):
    """(step(x_q, x_k) -> detached loss, description of the optimizer)."""
    lr = 0.03 * batch_size / 256 if lr is None else lr
    params = list(model.backbone.parameters()) + list(model.head.parameters())
    opt = torch.optim.SGD(params, lr=lr, momentum=0.9, weight_decay=weight_decay)
    return loss_step(model, opt), f"SGD(lr={lr:g}, momentum=0.9, weight_decay={weight_decay:g})"
