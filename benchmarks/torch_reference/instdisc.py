"""InstDisc training step in plain PyTorch: the reference for `instdisc_step.py`.

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

Run on its own for a quick timing: `python benchmarks/torch_reference/instdisc.py`.
"""

import argparse
import os
import sys
import time

import torch
from torch import nn
from torch.nn import functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from resnet_cifar import CifarResNet  # noqa: E402

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

    def step(images, index):
        opt.zero_grad(set_to_none=True)
        loss = model.loss(images, index)
        loss.backward()
        opt.step()
        model.update_bank()
        return loss.detach()

    return step, f"SGD(lr={lr:g}, momentum=0.9, weight_decay={weight_decay:g})"


def count_params(module):
    return sum(p.numel() for p in module.parameters())


def main():
    p = argparse.ArgumentParser(description="Time the InstDisc training step in PyTorch.")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--num-data", type=int, default=50_000)
    args = p.parse_args()
    torch.manual_seed(0)
    model = InstDisc(args.num_data).train()
    step, description = make_step(model, args.batch_size)
    images = torch.randn(args.batch_size, 3, 32, 32)
    index = torch.arange(args.batch_size)
    step(images, index)
    t0 = time.perf_counter()
    for _ in range(args.steps):
        loss = step(images, index)
    float(loss)
    dt = (time.perf_counter() - t0) / args.steps
    print(f"InstDisc CIFAR ResNet-20: {count_params(model.network):,} parameters, bank {tuple(model.bank.shape)}, "
          f"{description}; {1 / dt:.3f} steps/s, {args.batch_size / dt:.1f} images/s (batch {args.batch_size}, "
          f"{torch.get_num_threads()} threads), loss {float(loss):.3f}")


if __name__ == "__main__":
    main()
