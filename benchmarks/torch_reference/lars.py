"""LARS in plain PyTorch, the twin of keras-paperzoo's `keras_paperzoo.training.LARS`.

You, Gitman and Ginsburg 2017 (Algorithm 1), as SimCLR's `lars_optimizer.py` and the
Keras class write it. For each parameter w with gradient g:

    g <- g + weight_decay * w                                         (weights only)
    trust_ratio = eta * ||w|| / ||g|| if ||w|| > 0 and ||g|| > 0, else 1   (weights only)
    v <- momentum * v + lr * trust_ratio * g
    w <- w - v

"Weights only": biases and normalisation parameters (every parameter of rank <= 1,
the Keras class's default `is_bias_or_norm_parameter` rule) are neither decayed nor
adapted, unless `exclude_bias_and_norm=False` (SwAV's apex LARC: every parameter; a
parameter group with `weight_decay=0` is adapted but not decayed). One parameter at a
time, as a plain PyTorch user writes it (no `_foreach`). Used by `simclr_cifar.py`,
`byol_cifar.py` and `swav_cifar.py`.
"""

import torch


class LARS(torch.optim.Optimizer):
    """Momentum SGD with a per-parameter trust ratio eta ||w|| / ||g|| (see the module docstring).

    Args:
        params: the parameters (or parameter groups).
        lr: the learning rate (SimCLR 0.3 x B / 256, BYOL 0.2 x B / 256).
        momentum: 0.9 in SimCLR and BYOL.
        weight_decay: coupled decay of the weights (SimCLR 1e-6, BYOL 1.5e-6).
        eta: the trust coefficient (0.001).
        exclude_bias_and_norm: leave the rank <= 1 parameters out of the decay and the
            adaptation (True; SwAV: False).
    """

    def __init__(self, params, lr, momentum=0.9, weight_decay=1e-6, eta=0.001, exclude_bias_and_norm=True):
        super().__init__(params, {"lr": lr, "momentum": momentum, "weight_decay": weight_decay, "eta": eta,
                                  "exclude_bias_and_norm": exclude_bias_and_norm})

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            lr, momentum, decay, eta = group["lr"], group["momentum"], group["weight_decay"], group["eta"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad
                if p.ndim > 1 or not group["exclude_bias_and_norm"]:  # a weight: decayed and adapted
                    g = g.add(p, alpha=decay)
                    w_norm = torch.linalg.vector_norm(p)  # ()
                    g_norm = torch.linalg.vector_norm(g)  # ()
                    ratio = torch.where((w_norm > 0) & (g_norm > 0), eta * w_norm / g_norm.clamp_min(1e-30),
                                        torch.ones_like(w_norm))
                    g = g.mul(ratio)
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = torch.zeros_like(p)
                v = state["momentum_buffer"]
                v.mul_(momentum).add_(g, alpha=lr)  # v <- m v + lr tr g
                p.sub_(v)  # w <- w - v
