"""Plain PyTorch CIFAR ResNet (He et al. 2016, Sec. 4.2): the reference for ResNet-20.

timm has no CIFAR ResNet, so the vision benchmark times this one against the
keras-paperzoo `resnet20_cifar` preset. Written from the paper, independently of
keras-paperzoo:

- 6n+2 layers: a 3x3 conv with 16 filters, then three stages of n basic blocks
  (two 3x3 convs each) with 16, 32, 64 filters on 32x32, 16x16, 8x8 maps; the first
  conv of stages 2 and 3 has stride 2; global average pooling and a linear layer.
- Every conv is bias-free and followed by batch norm (eps 1e-5, momentum 0.1); a
  block's ReLU comes after the addition.
- Option A shortcuts: where the shape changes, the input subsampled by 2
  (`x[:, :, ::2, ::2]`) with the new channels appended as zeros (fb.resnet.torch's
  concatenation with a zero copy); elsewhere the identity. No parameters.
- Weights: He-normal with fan_out (torchvision's `kaiming_normal_`), BN 1 and 0, the
  linear layer PyTorch's default.

ResNet-20 (n = 3) has 269,722 parameters with a 10-way head (the paper's "0.27M").
Tensors are NCHW, PyTorch's native layout.

Timed on its own: `python -m benchmarks vision --models resnet20 --runs torch_reference`.
"""


import torch
from torch import nn
from torch.nn import functional as F

from .steps import count_params


class BasicBlock(nn.Module):
    """3x3 conv-BN-ReLU, 3x3 conv-BN, + shortcut (option A), ReLU (Fig. 2 and 5 left)."""

    def __init__(self, in_channels, filters, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, filters, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(filters)
        self.conv2 = nn.Conv2d(filters, filters, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(filters)
        self.stride = stride
        self.extra_channels = filters - in_channels

    def shortcut(self, x):
        if self.stride > 1:
            x = x[:, :, :: self.stride, :: self.stride]  # (B, C, H/2, W/2)
        if self.extra_channels:
            x = F.pad(x, (0, 0, 0, 0, 0, self.extra_channels))  # zeros as the new channels
        return x

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class CifarResNet(nn.Module):
    """ResNet-(6n+2) for 32x32 images, option A shortcuts."""

    def __init__(self, depth=20, num_classes=10, filters=(16, 32, 64)):
        super().__init__()
        if (depth - 2) % 6:
            raise ValueError(f"CIFAR ResNet depth must be 6n+2; got {depth}.")
        n = (depth - 2) // 6
        self.conv = nn.Conv2d(3, filters[0], 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(filters[0])
        blocks, channels = [], filters[0]
        for s, width in enumerate(filters):
            for b in range(n):
                blocks.append(BasicBlock(channels, width, 2 if (s > 0 and b == 0) else 1))
                channels = width
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(channels, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x):  # x: (B, 3, 32, 32)
        x = F.relu(self.bn(self.conv(x)))  # (B, 16, 32, 32)
        x = self.blocks(x)  # (B, 64, 8, 8)
        x = x.mean(dim=(2, 3))  # (B, 64)
        return self.fc(x)  # (B, num_classes)


def resnet20(num_classes=10):
    return CifarResNet(20, num_classes)
