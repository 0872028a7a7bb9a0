"""InvaSpread training step in plain PyTorch, written from the paper: the reference for the `ssl` family.

The same step as `InvaSpread.from_preset("invaspread_cifar_resnet18", augmentation=None)` in
keras-paperzoo (Ye et al. 2019, "Unsupervised Embedding Learning via Invariant and Spreading
Instance Feature", Sec. 3; the CIFAR settings of the authors' release):

- Embedding network f: a CIFAR ResNet-18 (3x3 stride-1 stem with 64 filters and batch
  norm, no max pool; four stages of two basic blocks, 64/128/256/512 filters, the first
  conv of stages 2-4 with stride 2; a 1x1 conv + batch norm shortcut where the shape
  changes; global average pooling), a linear layer 512 -> 128 with bias and no
  non-linearity, L2 normalisation. 11,168,832 backbone parameters, the layer shapes of
  keras-paperzoo's `ResNetBackbone(stage_blocks=[2, 2, 2, 2], stem="cifar",
  shortcut="B")`. Plain `torch.nn`, no torchvision.
- Both views of the N images in one batch of 2N through f (batch norm over all 2N).
- Loss (`invaspread_loss` below): each of the 2N features x_a is scored against the other
  2N - 1 as instance classes, whose weights are detached; a softmax at temperature 0.1;
  -log P(other view of a's image | x_a) - sum over the 2N - 2 other images' views of
  log(1 - P(b | x_a)); the mean over the 2N features.
- Optimizer: `torch.optim.SGD(lr=0.03, momentum=0.9, weight_decay=5e-4)` (weight decay
  added to the gradient, as keras-paperzoo's `ScheduledMomentumSGD(l2=5e-4)`); constant
  rate (the Keras side's step schedule costs nothing measurable).

Timed on its own: `python -m benchmarks ssl --models invaspread --runs torch_reference`.
"""


import torch
from torch import nn
from torch.nn import functional as F

from .cifar_resnet import BasicBlock


class EmbeddingNetwork(nn.Module):
    """CIFAR ResNet-18, global average pooling, Linear(512, embedding_dim), L2 normalisation."""

    def __init__(self, embedding_dim=128):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU())
        blocks, channels = [], 64
        for stage, filters in enumerate((64, 128, 256, 512)):
            for block in range(2):
                blocks.append(BasicBlock(channels, filters, 2 if stage > 0 and block == 0 else 1))
                channels = filters
        self.blocks = nn.Sequential(*blocks)
        self.linear = nn.Linear(channels, embedding_dim)

    def backbone_parameters(self):
        return sum(p.numel() for name, p in self.named_parameters() if not name.startswith("linear"))

    def forward(self, x):
        h = self.blocks(self.stem(x)).mean(dim=(2, 3))  # (B, 512)
        return F.normalize(self.linear(h), dim=1)  # (B, 128), unit rows


def invaspread_loss(f, f_hat, temperature=0.1):
    """Sec. 3.1's J over the 2N features of (f, f_hat), (N, C) each: the mean over the 2N inputs of
    -log P(positive | x_a) - sum_{negatives b} log(1 - P(b | x_a)), P a softmax over the 2N - 1 other
    features, whose side is a constant."""
    x = F.normalize(torch.cat([f, f_hat]), dim=1)  # (2N, C)
    two_n = x.shape[0]
    logits = x @ x.detach().t() / temperature  # (2N, 2N): inputs against constant instance weights
    self_mask = torch.eye(two_n, dtype=torch.bool, device=x.device)
    logits = logits.masked_fill(self_mask, float("-inf"))
    log_p = logits.log_softmax(dim=1)  # (2N, 2N), log P(b | x_a); the diagonal -inf (P = 0)
    positive = (torch.arange(two_n, device=x.device) + two_n // 2) % two_n  # (2N,)
    invariance = -log_p[torch.arange(two_n, device=x.device), positive]  # (2N,)
    negative_mask = ~self_mask
    negative_mask[torch.arange(two_n, device=x.device), positive] = False
    spreading = -torch.log1p(-log_p.exp()).masked_fill(~negative_mask, 0.0).sum(dim=1)  # (2N,)
    return (invariance + spreading).mean()


class InvaSpread(nn.Module):
    def __init__(self, embedding_dim=128, temperature=0.1):
        super().__init__()
        self.net = EmbeddingNetwork(embedding_dim)
        self.temperature = temperature

    def loss(self, x_a, x_b):
        """J of one batch of view pairs, (N, 3, 32, 32) each, both views in one batch of 2N."""
        f = self.net(torch.cat([x_a, x_b]))  # (2N, 128)
        f_a, f_b = f.chunk(2)
        return invaspread_loss(f_a, f_b, self.temperature)


def make_step(model, batch_size, lr=0.03, weight_decay=5e-4):
    """(step(x_a, x_b) -> detached loss, description of the optimizer)."""
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=weight_decay)

    def step(x_a, x_b):
        opt.zero_grad(set_to_none=True)
        loss = model.loss(x_a, x_b)
        loss.backward()
        opt.step()
        return loss.detach()

    return step, f"SGD(lr={lr:g}, momentum=0.9, weight_decay={weight_decay:g})"


def count_params(module):
    """Trainable parameters."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
