"""BYOL's training step in plain PyTorch, written from the paper: the reference for the `ssl` family's `byol`.

The same step as `BYOL.from_preset("byol_cifar_resnet18", augmentation=None)` in
keras-paperzoo (BYOL, Grill et al. 2020, Sec. 3.1-3.3, symmetrised loss), the pieces in
`ssl_parts.py`:

- Backbone f: `ssl_parts.cifar_resnet18()`, torchvision's ResNet-18 with the CIFAR stem
  written out in `cifar_resnet.py` (the layer shapes of keras-paperzoo's CIFAR
  `ResNetBackbone`, 11,168,832 parameters).
- Projector g and predictor q (Sec. 3.3): `bn_mlp(512, 4096, 256)` and
  `bn_mlp(256, 4096, 256)`, Linear (no bias) - BN - ReLU - Linear, the Keras
  `ProjectionHead((4096, 256), batch_norm=True)`s: 16,428,608 trainable parameters on
  both sides.
- Target network xi: `momentum_copy`s of backbone and projector, moved by
  `momentum_update` (xi <- tau xi + (1 - tau) theta, Sec. 3.1) with tau_k =
  `cosine_momentum(k, K, 0.996)` = 1 - (1 - 0.996)(cos(pi k / K) + 1) / 2 (Sec. 3.2),
  k this step's index from 0, K the run's steps, before the target's forward passes;
  parameters only, batch-norm statistics not (as the Keras `MomentumEncoder`, whose
  step counter k this module's `steps` mirrors).
- Each view through the online network separately (batch norm per view, as the authors'
  code and the Keras trainer), and each through the target network under `no_grad`.
- Loss: `byol_loss(q, z') = 2 - 2 cos(q, sg(z'))` (eq. 2) for both orders, L + L~ (Keras:
  `losses.symmetric_byol_loss`).
- Optimizer: LARS (`lars.py`), lr 0.2 x B / 256, momentum 0.9, weight decay 1.5e-6,
  biases and norm parameters excluded; constant lr.

No torchvision or lightly: it runs in the Keras environment's interpreter, and
tests/test_ssl_benchmark_references.py checks the loss, the momentum update and tau_k
against keras-paperzoo's. Timed on its own: `python -m benchmarks ssl --models byol --runs torch_reference`.
"""

import torch
from torch import nn

from .ssl_parts import (bn_mlp, byol_loss, cifar_resnet18, cosine_momentum, lars_step, momentum_copy,
                        momentum_update)
from .steps import count_params


class BYOL(nn.Module):
    """Online network (backbone, projector, predictor) and its momentum target (backbone, projector)."""

    def __init__(self, hidden_dim=4096, projection_dim=256, tau_base=0.996, total_steps=1000):
        super().__init__()
        self.backbone = cifar_resnet18()
        self.projector = bn_mlp(512, hidden_dim, projection_dim)
        self.predictor = bn_mlp(projection_dim, hidden_dim, projection_dim)
        self.backbone_momentum = momentum_copy(self.backbone)
        self.projector_momentum = momentum_copy(self.projector)
        self.tau_base, self.total_steps = tau_base, total_steps
        self.steps = 0  # k: the momentum updates made so far

    def loss(self, x_a, x_b):
        """L + L~ of one batch of view pairs, (B, 3, 32, 32) each; moves the target with tau_k first."""
        tau = cosine_momentum(self.steps, self.total_steps, self.tau_base)
        momentum_update(self.backbone, self.backbone_momentum, tau)
        momentum_update(self.projector, self.projector_momentum, tau)
        self.steps += 1
        q_a = self.predictor(self.projector(self.backbone(x_a)))  # (B, 256), online, per view
        q_b = self.predictor(self.projector(self.backbone(x_b)))
        with torch.no_grad():
            z_a = self.projector_momentum(self.backbone_momentum(x_a))  # (B, 256), target
            z_b = self.projector_momentum(self.backbone_momentum(x_b))
        return byol_loss(q_a, z_b) + byol_loss(q_b, z_a)


def make_step(model, batch_size, lr=None, weight_decay=1.5e-6):
    """(step(x_a, x_b) -> detached loss, description of the optimizer): LARS, lr 0.2 x B / 256."""
    return lars_step(model, 0.2 * batch_size / 256 if lr is None else lr, weight_decay)


def parameters(model):
    """The online network's trainable parameters (the target gets no gradient)."""
    return count_params(model)
