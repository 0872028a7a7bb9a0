"""Plain PyTorch reference of the MNIST GAN training step (Goodfellow et al. 2014).

Written from the paper (Sec. 5, Algorithm 1 with k = 1) and the authors' published
MNIST hyper-parameters, independently of keras-paperzoo, to time the same work in
eager float32 PyTorch:

- G: z (100, N(0, I)) -> 1200 ReLU -> 1200 ReLU -> 784 sigmoid, weights U(-0.05, 0.05).
- D: 784 -> dropout(p=0.2) -> maxout 240 x 5 -> dropout(0.5) -> maxout 240 x 5
  -> dropout(0.5) -> 1 logit, weights U(-0.005, 0.005). A maxout layer is one
  Linear to 240 * 5 features, viewed as (batch, 240, 5) and maxed over the pieces.
- One step: D update on m real images and G(z) for fresh z (G's output detached),
  loss softplus(-D(x)).mean() + softplus(D(G(z))).mean(); then fresh z and a G
  update on the non-saturating loss softplus(-D(G(z))).mean(), D in training mode
  (dropout on). Two `torch.optim.SGD`s with momentum, lr 0.1 / 1.000004^t
  (floor 1e-6) and momentum 0.5 -> 0.7 linearly over 250 epochs of 500 updates,
  both set in Python before every update.

During the G update D's parameters have `requires_grad` switched off, so autograd
computes only input gradients through D (the usual PyTorch idiom; it is also what
`torch.autograd.grad` over G's parameters does).

Timed on its own: `python -m benchmarks gan --runs torch_reference`.
"""

import math

import torch
from torch import nn
from torch.nn import functional as F

from .steps import count_params

LATENT_DIM = 100
IMAGE_SHAPE = (28, 28, 1)
IMAGE_DIM = 28 * 28


class Maxout(nn.Module):
    """max over `pieces` affine maps: Linear(in, units * pieces) -> view -> max."""

    def __init__(self, in_features, units, pieces):
        super().__init__()
        self.units, self.pieces = units, pieces
        self.linear = nn.Linear(in_features, units * pieces)

    def forward(self, x):
        z = self.linear(x)
        return z.view(-1, self.units, self.pieces).max(dim=-1).values


def _init_uniform(module, scale):
    for m in module.modules():
        if isinstance(m, nn.Linear):
            nn.init.uniform_(m.weight, -scale, scale)
            nn.init.zeros_(m.bias)


class Generator(nn.Module):
    def __init__(self, latent_dim=LATENT_DIM, hidden=(1200, 1200), out_dim=IMAGE_DIM):
        super().__init__()
        layers, width = [], latent_dim
        for units in hidden:
            layers += [nn.Linear(width, units), nn.ReLU()]
            width = units
        layers += [nn.Linear(width, out_dim), nn.Sigmoid()]
        self.net = nn.Sequential(*layers)
        _init_uniform(self, 0.05)

    def forward(self, z):
        return self.net(z).view(-1, *IMAGE_SHAPE)  # NHWC, as the Keras model


class Discriminator(nn.Module):
    def __init__(self, in_dim=IMAGE_DIM, units=(240, 240), pieces=5, p_in=0.2, p_hidden=0.5):
        super().__init__()
        layers, width = [nn.Flatten(), nn.Dropout(p_in)], in_dim
        for u in units:
            layers += [Maxout(width, u, pieces), nn.Dropout(p_hidden)]
            width = u
        layers += [nn.Linear(width, 1)]
        self.net = nn.Sequential(*layers)
        _init_uniform(self, 0.005)

    def forward(self, x):
        return self.net(x)


class GANStep:
    """The models, the two optimizers and one training step of Algorithm 1 (k = 1).

    The layer sizes default to the paper's MNIST networks; the `gan` benchmark family
    passes smaller ones for its `--preset gan_mnist_small` overhead measurement.
    """

    def __init__(self, seed=0, steps_per_epoch=500, latent_dim=LATENT_DIM,
                 g_hidden=(1200, 1200), d_units=(240, 240), pieces=5):
        torch.manual_seed(seed)
        self.latent_dim = latent_dim
        self.G = Generator(latent_dim, tuple(g_hidden))
        self.D = Discriminator(units=tuple(d_units), pieces=pieces)
        self.G.train()
        self.D.train()
        self.d_opt = torch.optim.SGD(self.D.parameters(), lr=0.1, momentum=0.5)
        self.g_opt = torch.optim.SGD(self.G.parameters(), lr=0.1, momentum=0.5)
        self.ramp_steps = 250 * steps_per_epoch
        self.d_updates = 0
        self.g_updates = 0

    def _schedule(self, optimizer, t):
        lr = max(0.1 * math.exp(-t * math.log(1.000004)), 1e-6)
        momentum = 0.5 + 0.2 * min(t / self.ramp_steps, 1.0)
        for group in optimizer.param_groups:
            group["lr"], group["momentum"] = lr, momentum

    def step(self, real):
        m = real.shape[0]
        # 1. Discriminator update: ascend log D(x) + log(1 - D(G(z))).
        z = torch.randn(m, self.latent_dim)
        with torch.no_grad():
            fake = self.G(z)
        real_logit = self.D(real)
        fake_logit = self.D(fake)
        d_loss = F.softplus(-real_logit).mean() + F.softplus(fake_logit).mean()
        self._schedule(self.d_opt, self.d_updates)
        self.d_opt.zero_grad(set_to_none=True)
        d_loss.backward()
        self.d_opt.step()
        self.d_updates += 1

        # 2. Generator update: fresh z, non-saturating loss -log D(G(z)).
        z = torch.randn(m, self.latent_dim)
        self.D.requires_grad_(False)
        g_logit = self.D(self.G(z))
        g_loss = F.softplus(-g_logit).mean()
        self._schedule(self.g_opt, self.g_updates)
        self.g_opt.zero_grad(set_to_none=True)
        g_loss.backward()
        self.g_opt.step()
        self.D.requires_grad_(True)
        self.g_updates += 1
        return {
            "d_loss": d_loss.detach(),
            "g_loss": g_loss.detach(),
            "d_real": torch.sigmoid(real_logit).mean().detach(),
            "d_fake": torch.sigmoid(fake_logit).mean().detach(),
        }
