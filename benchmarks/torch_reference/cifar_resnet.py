"""The CIFAR ResNet-18 of the plain-PyTorch `ssl` references, and the MoCo authors' split batch norm.

torchvision's `resnet18` with a 3x3 stride-1 stem conv (64 filters), no max pool and no
classifier (the MoCo authors' CIFAR demo, lightly's CIFAR examples), written out in plain
`torch.nn` block for block: four stages of two basic blocks (64/128/256/512 filters, the
first conv of stages 2-4 with stride 2, a 1x1 conv + norm shortcut where the shape
changes). 11,168,832 parameters, the layer shapes of keras-paperzoo's
`ResNetBackbone(stage_blocks=[2, 2, 2, 2], stem="cifar", stem_filters=64, shortcut="B")`.

Why not torchvision: PyPI's torchvision wheels are built against a CUDA torch (their
`_C.so` needs `libc10_cuda.so`) and do not import beside the CPU-only torch 2.13 of the
test environment, and lightly's model utilities import torchvision. References built
from this module run in the Keras environment's own interpreter.
"""

import torch
from torch import nn
from torch.nn import functional as F


class SplitBatchNorm(nn.BatchNorm2d):
    """Batch norm with statistics per group of `num_splits` equal sub-batches in training (shuffle-BN
    on one device), the MoCo authors' CIFAR demo's `SplitBatchNorm` (which lightly copies)."""

    def __init__(self, num_features, num_splits, **kwargs):
        super().__init__(num_features, **kwargs)
        self.num_splits = num_splits

    def forward(self, x):
        if not self.training:
            return super().forward(x)
        n, c, h, w = x.shape  # (N, C, H, W) -> (N / G, G C, H, W): G independent sets of channels
        mean_split = self.running_mean.repeat(self.num_splits)  # (G C,)
        var_split = self.running_var.repeat(self.num_splits)
        out = F.batch_norm(x.view(-1, c * self.num_splits, h, w), mean_split, var_split,
                           self.weight.repeat(self.num_splits), self.bias.repeat(self.num_splits), True,
                           self.momentum, self.eps).view(n, c, h, w)
        self.running_mean.data.copy_(mean_split.view(self.num_splits, c).mean(dim=0))
        self.running_var.data.copy_(var_split.view(self.num_splits, c).mean(dim=0))
        return out


def norm_layer(bn_splits=1):
    """`nn.BatchNorm2d`, or `SplitBatchNorm(channels, bn_splits)` for bn_splits > 1."""
    return nn.BatchNorm2d if bn_splits == 1 else (lambda channels: SplitBatchNorm(channels, bn_splits))


class BasicBlock(nn.Module):
    """3x3 conv-BN-ReLU, 3x3 conv-BN, + shortcut (identity, or 1x1 conv-BN), ReLU."""

    def __init__(self, in_channels, filters, stride, norm=nn.BatchNorm2d):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, filters, 3, stride=stride, padding=1, bias=False)
        self.bn1 = norm(filters)
        self.conv2 = nn.Conv2d(filters, filters, 3, padding=1, bias=False)
        self.bn2 = norm(filters)
        self.shortcut = nn.Identity()
        if stride != 1 or in_channels != filters:
            self.shortcut = nn.Sequential(nn.Conv2d(in_channels, filters, 1, stride=stride, bias=False),
                                          norm(filters))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


def cifar_resnet18_maps(bn_splits=1):
    """(B, 3, s, s) -> (B, 512, s / 8, s / 8) (rounded up): the CIFAR ResNet-18 before its pooling."""
    norm = norm_layer(bn_splits)
    layers, channels = [nn.Conv2d(3, 64, 3, padding=1, bias=False), norm(64), nn.ReLU(inplace=True)], 64
    for stage, filters in enumerate((64, 128, 256, 512)):
        for block in range(2):
            layers.append(BasicBlock(channels, filters, 2 if stage > 0 and block == 0 else 1, norm))
            channels = filters
    net = nn.Sequential(*layers)
    for module in net.modules():  # torchvision's initialisation
        if isinstance(module, nn.Conv2d):
            nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
    return net


def pooled(maps):
    """Global average pooling: (B, C, h, w) -> (B, C)."""
    return torch.flatten(F.adaptive_avg_pool2d(maps, 1), 1)
