"""SimCLR training step in PyTorch from lightly's pieces: the reference for the `ssl` family's `simclr`.

The same step as `SimCLR.from_preset("simclr_cifar_resnet18", augmentation=None)` in
keras-paperzoo (SimCLR Algorithm 1, Chen et al. 2020; the CIFAR-10 setting of App. B.9):

- Backbone: torchvision's ResNet-18 with the CIFAR stem (3x3 stride-1 conv, 64 filters,
  no max pool, no classifier), `moco_cifar.cifar_resnet18(bn_splits=1)`: the layer
  shapes of keras-paperzoo's CIFAR `ResNetBackbone`, 11,168,832 parameters.
- Head: lightly's `SimCLRProjectionHead(512, 512, 128)` (v1: Linear-BN-ReLU-Linear-BN,
  no biases), as the Keras `ProjectionHead((512, 128), batch_norm=True,
  output_batch_norm=True)`; the Keras output norm has no beta (128 parameters fewer).
- Both views of the N images in one batch of 2N through the encoder (batch norm over
  all 2N, as the authors' code and the Keras trainer do).
- Loss: lightly's `NTXentLoss(temperature=0.5)` over the 2N views (no memory bank).
- Optimizer: LARS (`lars.py`, the Keras `LARS`'s update in plain PyTorch), lr 0.3 x B / 256,
  momentum 0.9, weight decay 1e-6, biases and norm parameters excluded; constant lr
  (the Keras side's warmup-cosine schedule costs nothing measurable).

Timed on its own: `python -m benchmarks ssl --models simclr --runs torch_reference`.
"""


import torch
from lightly.loss import NTXentLoss
from lightly.models.modules import SimCLRProjectionHead
from torch import nn

from .lars import LARS
from .moco_cifar import cifar_resnet18
from .steps import count_params, loss_step


class SimCLR(nn.Module):
    """Encoder f (CIFAR ResNet-18), head g, NT-Xent on z = g(f(x)) of both views."""

    def __init__(self, hidden_dim=512, projection_dim=128, temperature=0.5):
        super().__init__()
        self.backbone = cifar_resnet18(bn_splits=1)
        self.head = SimCLRProjectionHead(512, hidden_dim, projection_dim, num_layers=2, batch_norm=True)
        self.criterion = NTXentLoss(temperature=temperature)

    def loss(self, x_a, x_b):
        """NT-Xent of one batch of view pairs, (N, 3, 32, 32) each."""
        z = self.head(self.backbone(torch.cat([x_a, x_b])))  # (2N, 128)
        z_a, z_b = z.chunk(2)  # (N, 128) each
        return self.criterion(z_a, z_b)


def make_step(model, batch_size, lr=None, weight_decay=1e-6):
    """(step(x_a, x_b) -> detached loss, description of the optimizer)."""
    lr = 0.3 * batch_size / 256 if lr is None else lr
    opt = LARS(model.parameters(), lr=lr, momentum=0.9, weight_decay=weight_decay)
    description = f"LARS(lr={lr:g}, momentum=0.9, weight_decay={weight_decay:g}, eta=0.001) (torch_reference/lars.py)"
    return loss_step(model, opt), description
