"""BYOL training step in PyTorch from lightly's pieces: the reference for the `ssl` family's `byol`.

The same step as `BYOL.from_preset("byol_cifar_resnet18", augmentation=None)` in
keras-paperzoo (BYOL, Grill et al. 2020, Sec. 3.1-3.3, symmetrised loss):

- Backbone: torchvision's ResNet-18 with the CIFAR stem, `moco_cifar.cifar_resnet18(bn_splits=1)`
  (the layer shapes of keras-paperzoo's CIFAR `ResNetBackbone`, 11,168,832 parameters).
- Projector and predictor: lightly's `BYOLProjectionHead(512, 4096, 256)` and
  `BYOLPredictionHead(256, 4096, 256)` (Linear-BN-ReLU-Linear, the hidden Linear without
  bias), the Keras `ProjectionHead((4096, 256), batch_norm=True)`s: the same parameters.
- Target network: deep copies of backbone and projector (lightly `deactivate_requires_grad`),
  moved by lightly's `update_momentum` with tau = lightly's `cosine_schedule(step, K,
  0.996, 1)` (BYOL's tau_k) before the target's forward passes; parameters only, batch-norm
  statistics not (as the Keras `MomentumEncoder`).
- Each view through the online network separately (batch norm per view, as the authors'
  code and the Keras trainer), and each through the target network under `no_grad`.
- Loss: 2 - 2 cos(q, z') for both orders (eq. 2, L + L~), from lightly's
  `NegativeCosineSimilarity` (-cos): 4 + 2 (ncs(q, z2') + ncs(q', z1')).
- Optimizer: LARS (`lars.py`), lr 0.2 x B / 256, momentum 0.9, weight decay 1.5e-6,
  biases and norm parameters excluded; constant lr.

Timed on its own: `python -m benchmarks ssl --models byol --runs torch_reference`.
"""

import copy

import torch
from lightly.loss import NegativeCosineSimilarity
from lightly.models.modules import BYOLPredictionHead, BYOLProjectionHead
from lightly.models.utils import deactivate_requires_grad, update_momentum
from lightly.utils.scheduler import cosine_schedule
from torch import nn

from .lars import LARS
from .moco_cifar import cifar_resnet18
from .steps import count_params


class BYOL(nn.Module):
    """Online network (backbone, projector, predictor) and its momentum target (backbone, projector)."""

    def __init__(self, hidden_dim=4096, projection_dim=256, tau_base=0.996, total_steps=1000):
        super().__init__()
        self.backbone = cifar_resnet18(bn_splits=1)
        self.projector = BYOLProjectionHead(512, hidden_dim, projection_dim)
        self.predictor = BYOLPredictionHead(projection_dim, hidden_dim, projection_dim)
        self.backbone_momentum = copy.deepcopy(self.backbone)
        self.projector_momentum = copy.deepcopy(self.projector)
        deactivate_requires_grad(self.backbone_momentum)
        deactivate_requires_grad(self.projector_momentum)
        self.tau_base = tau_base
        self.total_steps = total_steps
        self.criterion = NegativeCosineSimilarity()

    def loss(self, x_a, x_b, step):
        """L + L~ of one batch of view pairs, (B, 3, 32, 32) each, at training step `step`."""
        tau = cosine_schedule(step, self.total_steps, self.tau_base, 1.0)
        update_momentum(self.backbone, self.backbone_momentum, m=tau)
        update_momentum(self.projector, self.projector_momentum, m=tau)
        q_a = self.predictor(self.projector(self.backbone(x_a)))  # (B, 256), online, per view
        q_b = self.predictor(self.projector(self.backbone(x_b)))
        with torch.no_grad():
            z_a = self.projector_momentum(self.backbone_momentum(x_a))  # (B, 256), target
            z_b = self.projector_momentum(self.backbone_momentum(x_b))
        return 4.0 + 2.0 * (self.criterion(q_a, z_b) + self.criterion(q_b, z_a))


def make_step(model, batch_size, lr=None, weight_decay=1.5e-6):
    """(step(x_a, x_b) -> detached loss, description of the optimizer)."""
    lr = 0.2 * batch_size / 256 if lr is None else lr
    opt = LARS([p for p in model.parameters() if p.requires_grad], lr=lr, momentum=0.9, weight_decay=weight_decay)
    state = {"step": 0}

    def step(x_a, x_b):
        opt.zero_grad(set_to_none=True)
        loss = model.loss(x_a, x_b, min(state["step"], model.total_steps))
        loss.backward()
        opt.step()
        state["step"] += 1
        return loss.detach()

    return step, f"LARS(lr={lr:g}, momentum=0.9, weight_decay={weight_decay:g}, eta=0.001) (torch_reference/lars.py)"
