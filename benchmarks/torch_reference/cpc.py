"""CPC training step in plain PyTorch, written from the papers: the reference for the `cpc` family.

The same step as `CPC.from_preset("cpc_v1_small" | "cpc_v2_small", augmentation=None)` in
keras-paperzoo (van den Oord et al. 2018, Sec. 2-3.2; Henaff et al. 2019, Appendix A.2):

- Patches: the (B, 3, 16, 16) images cut into a 7 x 7 grid of 4 x 4 patches at stride 2
  (`Tensor.unfold`), all B x 49 patches through the encoder as one batch.
- Encoder: a pre-activation bottleneck ResNet (3x3 stem of 32; stages of one block, 16 / 32
  wide, 64 / 128 out, the second with stride 2; final norm + ReLU), convolutions with biases
  as Keras's `Conv2D`, no normalisation (v1; the last convolution of each residual branch
  starts at zero) or layer norm over each patch's map (v2: `GroupNorm(1, C)`), the maps
  mean-pooled: z (B, 7, 7, 128).
- Per direction (v1: down; v2: down, up, right, left, the grid flipped / transposed so
  that the direction points down), the PixelCNN-style context of A.2 (3 residual blocks:
  1x1 to 64, ReLU, 1x3 'same', one zero row on top, 2x1 'valid', ReLU, 1x1 back to 128;
  ReLU), one bias-free linear W_k per step (v1: k = 1..5; v2: k = 3, targets projected to
  64, predictions x 0.1), scores against the z of all B x 49 positions, cross-entropy with
  the position k rows below as the label; the mean over k and directions.
- v2 also drops two of the three colour channels of every patch (colour dropping).
- Optimizer: Adam, lr 2e-4 (the paper's).

Timed on its own: `python -m benchmarks cpc --runs torch_reference`.
"""


import torch
import torch.nn.functional as F
from torch import nn

from .steps import count_params, loss_step

CONFIGS = {
    "cpc_v1_small": {"norm": None, "steps": (1, 2, 3, 4, 5), "directions": ("down",), "target_dim": None,
                     "scale": 1.0, "color_dropping": False},
    "cpc_v2_small": {"norm": "layer", "steps": (3,), "directions": ("down", "up", "right", "left"),
                     "target_dim": 64, "scale": 0.1, "color_dropping": True},
}


def _norm(kind, channels):
    return nn.GroupNorm(1, channels, eps=1e-5) if kind == "layer" else nn.Identity()


class PreActBottleneck(nn.Module):
    def __init__(self, in_channels, filters, out_channels, stride, norm):
        super().__init__()
        self.pre = _norm(norm, in_channels)
        self.shortcut = None
        if stride > 1 or in_channels != out_channels:
            self.shortcut = nn.Conv2d(in_channels, out_channels, 1, stride=stride)
        self.conv1 = nn.Conv2d(in_channels, filters, 1)
        self.mid1 = _norm(norm, filters)
        self.conv2 = nn.Conv2d(filters, filters, 3, stride=stride, padding=1)
        self.mid2 = _norm(norm, filters)
        self.conv3 = nn.Conv2d(filters, out_channels, 1)
        if norm is None:
            nn.init.zeros_(self.conv3.weight)

    def forward(self, x):
        pre = F.relu(self.pre(x))
        shortcut = x if self.shortcut is None else self.shortcut(pre)
        h = F.relu(self.mid1(self.conv1(pre)))
        h = F.relu(self.mid2(self.conv2(h)))
        return shortcut + self.conv3(h)


class PatchEncoder(nn.Module):
    """(n, 3, 4, 4) patches -> (n, 128) mean-pooled maps."""

    def __init__(self, norm, stem=32, filters=(16, 32), outputs=(64, 128)):
        super().__init__()
        self.stem = nn.Conv2d(3, stem, 3, padding=1)
        blocks, channels = [], stem
        for s, (f, o) in enumerate(zip(filters, outputs)):
            blocks.append(PreActBottleneck(channels, f, o, 2 if s > 0 else 1, norm))
            channels = o
        self.blocks = nn.Sequential(*blocks)
        self.post = _norm(norm, channels)
        self.width = channels

    def forward(self, x):
        return F.relu(self.post(self.blocks(self.stem(x)))).mean(dim=(2, 3))


class PixelCNNContext(nn.Module):
    """A.2's masked residual blocks on (B, D, rows, cols): c at row r sees rows <= r."""

    def __init__(self, depth, blocks=3, units=64):
        super().__init__()
        self.blocks = nn.ModuleList(nn.ModuleList([
            nn.Conv2d(depth, units, 1), nn.Conv2d(units, units, (1, 3), padding=(0, 1)),
            nn.Conv2d(units, units, (2, 1)), nn.Conv2d(units, depth, 1)]) for _ in range(blocks))

    def forward(self, z):
        c = z
        for conv_in, conv_row, conv_up, conv_out in self.blocks:
            h = conv_row(F.relu(conv_in(c)))
            h = F.relu(conv_up(F.pad(h, (0, 0, 1, 0))))  # one zero row on top
            c = c + conv_out(h)
        return F.relu(c)


def orient(grid, direction):
    """(B, D, rows, cols) turned so that `direction` points down the rows."""
    if direction == "down":
        return grid
    if direction == "up":
        return grid.flip(2)
    transposed = grid.transpose(2, 3)
    return transposed if direction == "right" else transposed.flip(2)


class CPC(nn.Module):
    def __init__(self, config, patch=4, stride=2):
        super().__init__()
        self.config, self.patch, self.stride = config, patch, stride
        self.encoder = PatchEncoder(config["norm"])
        depth = self.encoder.width
        self.contexts = nn.ModuleList(PixelCNNContext(depth) for _ in config["directions"])
        width = config["target_dim"] or depth
        self.target = nn.Linear(depth, width, bias=False) if config["target_dim"] else None
        self.predictors = nn.ModuleList(nn.Linear(depth, width, bias=False)
                                        for _ in config["directions"] for _ in config["steps"])

    def loss(self, images):
        """Mean InfoNCE over steps and directions for (B, 3, H, W) images."""
        b, channels = images.shape[:2]
        patches = images.unfold(2, self.patch, self.stride).unfold(3, self.patch, self.stride)  # (B, C, R, G, p, p)
        rows, cols = patches.shape[2:4]
        patches = patches.permute(0, 2, 3, 1, 4, 5).reshape(-1, channels, self.patch, self.patch)
        if self.config["color_dropping"] and self.training:
            kept = torch.randint(0, channels, (patches.shape[0],), device=patches.device)
            patches = patches * F.one_hot(kept, channels).to(patches.dtype)[:, :, None, None]
        z = self.encoder(patches).view(b, rows, cols, -1).permute(0, 3, 1, 2)  # (B, D, R, G)
        losses = []
        steps = self.config["steps"]
        for d, direction in enumerate(self.config["directions"]):
            z_d = orient(z, direction)
            r, g = z_d.shape[2:]
            c = self.contexts[d](z_d)
            targets = z_d.permute(0, 2, 3, 1).reshape(b * r * g, -1)  # (N, D): every position, every image
            if self.target is not None:
                targets = self.target(targets)
            for i, k in enumerate(steps):
                context = c[:, :, : r - k].permute(0, 2, 3, 1).reshape(-1, c.shape[1])  # (M, D)
                predictions = self.predictors[d * len(steps) + i](context) * self.config["scale"]
                logits = predictions @ targets.t()  # (M, N)
                index = torch.arange(logits.shape[0], device=logits.device)
                per_image = (r - k) * g
                labels = (index // per_image) * (r * g) + k * g + index % per_image
                losses.append(F.cross_entropy(logits, labels))
        return torch.stack(losses).mean()


def make_step(model, batch_size=None, lr=2e-4):
    """(step(images) -> detached loss, description of the optimizer)."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return loss_step(model, opt), f"Adam(lr={lr:g}) (torch.optim)"
