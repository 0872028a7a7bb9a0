"""InstDisc training step in plain PyTorch: the reference for the `instdisc` family.

The same step as `InstDisc.from_preset("instdisc_resnet20_cifar", augmentation=None)` in
keras-paperzoo, written from the paper (Wu et al. 2018, Sec. 3), independently of
keras-paperzoo and of the authors' code (whose NCE is a hand-written autograd
Function; here autograd differentiates the same forward):

- Network: the ResNet paper's CIFAR ResNet-20 (`resnet_cifar.CifarResNet`, option A
  shortcuts) whose final linear layer maps the pooled 64-d features to the 128-d
  embedding, then L2 normalisation: f = normalize(W h).
- Memory bank: an (n, 128) buffer of unit rows. Per image: its own row (the positive)
  and m rows drawn uniformly with replacement (the noise), gathered as (B, 1 + m, 128).
- Scores s = V f / tau (a batched matrix-vector product), P = exp(s) / Z with Z = n x
  mean(exp(s)) of the first batch, kept; NCE (eq. 6): -log(P_0 / (P_0 + m/n)) -
  sum_j log((m/n) / (P_j + m/n)), averaged over the batch (eps 1e-7 as the authors');
  plus lambda ||f - v_i||^2 when `proximal` > 0.
- After the optimizer step: v_i <- normalize(0.5 v_i + 0.5 f_i) (no gradient).
- Optimizer: `torch.optim.SGD(lr=0.03 x B / 256, momentum=0.9, weight_decay=1e-4)`
  (weight decay added to the gradient, as keras-paperzoo's `ScheduledMomentumSGD(l2=1e-4)`).

Timed on its own: `python -m benchmarks instdisc --runs torch_reference`.
"""


import torch
from torch import nn
from torch.nn import functional as F

from .resnet_cifar import CifarResNet
from .steps import count_params, loss_step

EPS = 1e-7


class InstDisc(nn.Module):
    """The embedding network, the memory bank and Z."""

    def __init__(self, num_data, num_negatives=4096, temperature=0.07, feature_dim=128, bank_momentum=0.5,
                 proximal=0.0, depth=20):
        super().__init__()
        self.network = CifarResNet(depth, num_classes=feature_dim)  # backbone + the linear layer W
        self.num_data, self.num_negatives, self.temperature = num_data, num_negatives, temperature
        self.bank_momentum, self.proximal = bank_momentum, proximal
        self.register_buffer("bank", F.normalize(torch.rand(num_data, feature_dim) * 2 - 1, dim=1))  # (n, d)
        self.z = None

    def loss(self, images, index):
        """NCE (+ proximal) of a batch (B, 3, H, W) with its rows (B,); remembers f for `update_bank`."""
        f = F.normalize(self.network(images), dim=1)  # (B, d)
        batch = f.shape[0]
        noise = torch.randint(self.num_data, (batch, self.num_negatives))  # (B, m), P_n = 1 / n
        rows = torch.cat([index[:, None], noise], dim=1)  # (B, 1 + m), the positive first
        weights = self.bank[rows]  # (B, 1 + m, d), constants
        scores = torch.bmm(weights, f[:, :, None]).squeeze(2) / self.temperature  # (B, 1 + m)
        p = scores.exp()
        if self.z is None:
            self.z = float(p.detach().mean()) * self.num_data  # eq. 7, once
        p = p / self.z
        k = self.num_negatives / self.num_data  # m P_n
        loss = -(torch.log(p[:, 0] / (p[:, 0] + k + EPS)) + torch.log(k / (p[:, 1:] + k + EPS)).sum(1)).mean()
        if self.proximal:
            loss = loss + self.proximal * (f - weights[:, 0]).pow(2).sum(1).mean()
        self._pending = (index, f.detach())
        return loss

    @torch.no_grad()
    def update_bank(self):
        index, f = self._pending
        rows = self.bank_momentum * self.bank[index] + (1 - self.bank_momentum) * f
        self.bank[index] = F.normalize(rows, dim=1)


def make_step(model, batch_size, lr=None, weight_decay=1e-4):
    """(step(images, index) -> detached loss, description of the optimizer)."""
    lr = 0.03 * batch_size / 256 if lr is None else lr
    opt = torch.optim.SGD(model.network.parameters(), lr=lr, momentum=0.9, weight_decay=weight_decay)
    description = f"SGD(lr={lr:g}, momentum=0.9, weight_decay={weight_decay:g})"
    return loss_step(model, opt, after=model.update_bank), description
