"""SimCLR's training step in plain PyTorch, written from the paper: the reference for the `ssl` family's `simclr`.

The same step as `SimCLR.from_preset("simclr_cifar_resnet18", augmentation=None)` in
keras-paperzoo (SimCLR Algorithm 1, Chen et al. 2020; the CIFAR-10 setting of App. B.9),
the pieces in `ssl_parts.py`:

- Backbone f: `ssl_parts.cifar_resnet18()`, torchvision's ResNet-18 with the CIFAR stem
  (3x3 stride-1 conv, 64 filters, no max pool, no classifier) written out in
  `cifar_resnet.py`: the layer shapes of keras-paperzoo's CIFAR `ResNetBackbone`,
  11,168,832 parameters.
- Head g (Sec. 2.1, z = W2 relu(W1 h), with the batch norms of the authors'
  `linear_layer`): `simclr_head(512, 512, 128)`, Linear (no bias) - BN - ReLU - Linear
  (no bias) - BN without beta (center=False: its bias stays 0 and is not trained), as
  the Keras `ProjectionHead((512, 128), batch_norm=True, output_batch_norm=True)`;
  11,497,664 trainable parameters on both sides (lightly's `SimCLRProjectionHead`, which
  this replaces, trained the output beta too: 128 more).
- Both views of the N images in one batch of 2N through the encoder (batch norm over
  all 2N, as the authors' code and the Keras trainer do).
- Loss: `nt_xent` (eq. 1) over the 2N views, tau 0.5 (Keras: `losses.nt_xent`).
- Optimizer: LARS (`lars.py`, the Keras `LARS`'s update in plain PyTorch), lr 0.3 x B / 256,
  momentum 0.9, weight decay 1e-6, biases and norm parameters excluded; constant lr
  (the Keras side's warmup-cosine schedule costs nothing measurable).

No torchvision or lightly: it runs in the Keras environment's interpreter, and
tests/test_ssl_benchmark_references.py checks `nt_xent` against keras-paperzoo's. Timed on
its own: `python -m benchmarks ssl --models simclr --runs torch_reference`.
"""

import torch
from torch import nn

from .ssl_parts import cifar_resnet18, lars_step, nt_xent
from .steps import count_params


def simclr_head(in_dim=512, hidden_dim=512, out_dim=128):
    """SimCLR v1's g: Linear - BN - ReLU - Linear - BN, no biases, the output BN without beta."""
    output_norm = nn.BatchNorm1d(out_dim)
    output_norm.bias.requires_grad_(False)  # center=False: beta stays 0
    return nn.Sequential(nn.Linear(in_dim, hidden_dim, bias=False), nn.BatchNorm1d(hidden_dim),
                         nn.ReLU(inplace=True), nn.Linear(hidden_dim, out_dim, bias=False), output_norm)


class SimCLR(nn.Module):
    """Encoder f (CIFAR ResNet-18), head g, NT-Xent on z = g(f(x)) of both views."""

    def __init__(self, hidden_dim=512, projection_dim=128, temperature=0.5):
        super().__init__()
        self.backbone = cifar_resnet18()
        self.head = simclr_head(512, hidden_dim, projection_dim)
        self.temperature = temperature

    def loss(self, x_a, x_b):
        """NT-Xent of one batch of view pairs, (N, 3, 32, 32) each."""
        z = self.head(self.backbone(torch.cat([x_a, x_b])))  # (2N, 128)
        z_a, z_b = z.chunk(2)  # (N, 128) each
        return nt_xent(z_a, z_b, self.temperature)


def make_step(model, batch_size, lr=None, weight_decay=1e-6):
    """(step(x_a, x_b) -> detached loss, description of the optimizer): LARS, lr 0.3 x B / 256."""
    return lars_step(model, 0.3 * batch_size / 256 if lr is None else lr, weight_decay)


def parameters(model):
    """The trainable parameters (the output norm's beta is not one)."""
    return count_params(model)
