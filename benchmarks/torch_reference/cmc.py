"""CMC training step in plain PyTorch: the reference for the `cmc` family.

The same step as `CMC.from_preset("cmc_cifar_resnet18", num_data=N, augmentation=None)` in
keras-paperzoo, written from the paper (Tian, Krishnan, Isola 2019, "Contrastive
Multiview Coding") and the published description of the authors'
training loop (HobbitLong/CMC), with nothing beyond `torch`:

- Views: each RGB image in [0, 1] is converted to CIE L*a*b* (sRGB gamma, the sRGB ->
  XYZ matrix, D65 white, f(t) = t^(1/3) or its linear toe) inside the step, as the
  Keras model does, and each channel is normalised by the mid-point and half-range of
  its sRGB values (L: 50 / 50; a: 6.025 / 92.208; b: -6.6895 / 101.1675). L (1 channel)
  and ab (2 channels) go to two encoders.
- Encoders: per view a half-width CIFAR ResNet-18 (3x3 stride-1 stem of 64 filters, no
  max pool, basic blocks [2, 2, 2, 2] of 32, 64, 128, 256 filters, a 1x1 conv + BN
  projection shortcut where the shape changes), global average pooling, a linear layer
  to 128 and L2 normalisation: the layer shapes of the Keras `ResNetBackbone` preset.
- Memory banks: one (N, 128) tensor per view, rows initialised uniformly and normalised.
  Per image, the positive row (its index) and 4096 rows drawn uniformly, the same draw for
  both views; the L features are scored against the ab bank and the ab features against
  the L bank; scores exp(v . z / 0.07).
- NCE per direction: P = exp(s) / Z with Z = N x the mean of the first batch's exp scores
  (then fixed), h = P / (P + m / N), loss -log h(positive) - sum log(1 - h(noise)), mean
  over the batch; the two directions add.
- Banks: after the scores, v <- normalize(0.5 v + 0.5 z) for the batch's rows.
- Optimizer: SGD, lr 0.03, momentum 0.9, weight decay 1e-4 (coupled), as the authors'.

Timed on its own: `python -m benchmarks cmc --runs torch_reference`.
"""

import math

import torch
from torch import nn
from torch.nn import functional as F

from .invaspread_cifar import BasicBlock  # 3x3-3x3 with option-B shortcuts
from .steps import count_params, loss_step

# linear sRGB -> XYZ (rows X, Y, Z) and the D65 white point
XYZ_FROM_RGB = torch.tensor([[0.412453, 0.357580, 0.180423],
                             [0.212671, 0.715160, 0.072169],
                             [0.019334, 0.119193, 0.950227]])
D65 = torch.tensor([0.95047, 1.0, 1.08883])
LAB_MEAN = torch.tensor([50.0, 6.025, -6.6895])
LAB_STD = torch.tensor([50.0, 92.208, 101.1675])
DELTA = 6.0 / 29.0


def rgb_to_normalised_lab(rgb):
    """(B, 3, H, W) sRGB in [0, 1] -> (B, 3, H, W) L*a*b*, each channel normalised to about [-1, 1]."""
    linear = torch.where(rgb <= 0.04045, rgb / 12.92, ((rgb.clamp(min=0.04045) + 0.055) / 1.055) ** 2.4)
    xyz = torch.einsum("ij,bjhw->bihw", XYZ_FROM_RGB, linear) / D65.view(1, 3, 1, 1)
    f = torch.where(xyz > DELTA ** 3, xyz.clamp(min=DELTA ** 3) ** (1.0 / 3.0), xyz / (3 * DELTA ** 2) + 4.0 / 29.0)
    lab = torch.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], dim=1)
    return (lab - LAB_MEAN.view(1, 3, 1, 1)) / LAB_STD.view(1, 3, 1, 1)


class ViewEncoder(nn.Module):
    """Half-width CIFAR ResNet-18 on one view, pooled, linear to `feature_dim`, L2-normalised."""

    def __init__(self, in_channels, stem=64, filters=(32, 64, 128, 256), blocks=(2, 2, 2, 2), feature_dim=128):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(in_channels, stem, 3, padding=1, bias=False), nn.BatchNorm2d(stem),
                                  nn.ReLU())
        layers, channels = [], stem
        for s, (count, width) in enumerate(zip(blocks, filters)):
            for b in range(count):
                layers.append(BasicBlock(channels, width, 2 if (s > 0 and b == 0) else 1))
                channels = width
        self.blocks = nn.Sequential(*layers)
        self.fc = nn.Linear(channels, feature_dim)

    def forward(self, x):
        h = self.blocks(self.stem(x)).mean(dim=(2, 3))  # (B, 256)
        return F.normalize(self.fc(h), dim=1)  # (B, 128)


class CMC(nn.Module):
    """Two view encoders (L: 1 channel, ab: 2), two memory banks, NCE in both directions."""

    def __init__(self, num_data, num_negatives=4096, temperature=0.07, feature_dim=128, momentum=0.5):
        super().__init__()
        self.l_encoder = ViewEncoder(1, feature_dim=feature_dim)
        self.ab_encoder = ViewEncoder(2, feature_dim=feature_dim)
        self.num_data, self.num_negatives = num_data, num_negatives
        self.temperature, self.momentum = temperature, momentum
        bound = 1.0 / math.sqrt(feature_dim / 3)
        self.register_buffer("l_bank", F.normalize(torch.rand(num_data, feature_dim) * 2 * bound - bound, dim=1))
        self.register_buffer("ab_bank", F.normalize(torch.rand(num_data, feature_dim) * 2 * bound - bound, dim=1))
        self.register_buffer("z", torch.tensor([-1.0, -1.0]))  # Z of the L direction, of the ab direction

    def nce(self, scores, direction):
        """NCE loss of (B, 1 + m) scores, positive first; Z set on the first batch."""
        exp = torch.exp(scores / self.temperature)
        if self.z[direction] < 0:
            self.z[direction] = exp.mean().detach() * self.num_data
        p = exp / float(self.z[direction])  # a constant (the buffer changes in place for the other direction)
        noise = (scores.shape[1] - 1) / self.num_data  # m P_n
        log_h = torch.log(p[:, 0] / (p[:, 0] + noise + 1e-7))
        log_not_h = torch.log(noise / (p[:, 1:] + noise + 1e-7))
        return -(log_h + log_not_h.sum(dim=1)).mean()

    def update(self, bank, index, features):
        with torch.no_grad():
            rows = F.normalize(self.momentum * bank[index] + (1 - self.momentum) * features, dim=1)
            bank.index_copy_(0, index, rows)

    def loss(self, images, index):
        """L(V1, V2) + L(V2, V1) of a batch of RGB images (B, 3, H, W) with their rows `index` (B,)."""
        lab = rgb_to_normalised_lab(images)
        z_l = self.l_encoder(lab[:, :1])  # (B, 128)
        z_ab = self.ab_encoder(lab[:, 1:])
        rows = torch.randint(0, self.num_data, (index.shape[0], 1 + self.num_negatives))
        rows[:, 0] = index  # (B, 1 + m): the positive, then the noise rows
        l_scores = torch.bmm(self.ab_bank[rows], z_l.unsqueeze(2)).squeeze(2)  # L features vs the ab bank
        ab_scores = torch.bmm(self.l_bank[rows], z_ab.unsqueeze(2)).squeeze(2)  # ab features vs the L bank
        loss = self.nce(l_scores, 0) + self.nce(ab_scores, 1)
        self.update(self.l_bank, index, z_l.detach())
        self.update(self.ab_bank, index, z_ab.detach())
        return loss


def make_step(model, lr=0.03, weight_decay=1e-4):
    """(step(images, index) -> detached loss, description of the optimizer)."""
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=weight_decay)
    return loss_step(model, opt), f"SGD(lr={lr:g}, momentum=0.9, weight_decay={weight_decay:g}) (coupled)"
