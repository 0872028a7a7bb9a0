"""SwAV's multi-crop training step in plain PyTorch, written from the paper: the reference for `ssl`.

The same step as `SwAV.from_preset("swav_cifar_resnet18", queue_length=L, augmentation=None)`
in keras-paperzoo (Caron et al. 2020, Sec. 3.1-3.2 and Algorithm 1; the authors'
`main_swav.py` and `distributed_sinkhorn`, written out here, one device):

- Crops: V = 2 x 32 + 6 x 14 pixels (the preset's multi-crop, SwAV's 224 / 96 proportions
  on CIFAR), given as 8 tensors; each run of same-size crops goes through the backbone
  in one batch (BN statistics per size), as the authors' `MultiPrototypes` ResNet.
- Backbone: `cifar_resnet.cifar_resnet18_maps` (torchvision's ResNet-18 with the 3x3 stem
  and no max pool, written out) and global average pooling: (B, 512) per crop.
- Projector on all V B crops at once: Linear(512, 2048, no bias) - BN - ReLU -
  Linear(2048, 128), z = normalize(.) (the authors' first Linear has a bias, which the BN
  after it cancels; keras-paperzoo's `ProjectionHead` drops it, and so does this one:
  12,867,776 trainable parameters on both sides). Prototypes: Linear(128, K = 3000, bias=False), each prototype
  re-normalised to unit length at the start of every step (no gradient).
- Codes (no gradient) of the two 32-pixel crops: `sinkhorn` (eps 0.05, 3 iterations) of
  [queue . C^T ; scores], the batch's rows kept. The queue (L past z of each assignment
  crop, shifted by B each step) is always read: the steady state of the authors' batch-256
  setting after epoch 15. (keras-paperzoo's step computes the codes with and without
  its queue every step and picks one, so its cost does not depend on the epoch.)
- Loss (`swav_loss`): -sum_k q_s log softmax(s_t / 0.1) over every (assignment crop s,
  other crop t) pair, the mean over t per s, then over s (the authors' averaging).
- Optimizer: `lars.LARS(lr=0.6 x B / 256, momentum=0.9, eta=0.001, weight_decay=1e-6)` on
  every parameter, BN and biases included (the authors' apex LARC), the prototypes
  adapted but not decayed (as keras-paperzoo's `SwAV.compile()`); constant rate (the Keras
  side's cosine schedule costs nothing measurable). The prototypes get no update during
  the first `freeze_steps` steps (the authors' first epoch; their gradient set to None).

No torchvision or lightly: it runs in the Keras environment's interpreter, and
tests/test_swav_benchmark_reference.py checks `sinkhorn` and `swav_loss` against
keras-paperzoo's. Timed on its own: `python -m benchmarks ssl --models swav --runs torch_reference`.
"""

import torch
import torch.nn.functional as F
from torch import nn

from .cifar_resnet import cifar_resnet18_maps, pooled
from .lars import LARS
from .steps import count_params, loss_step


@torch.no_grad()
def sinkhorn(out, epsilon=0.05, iterations=3):
    """The authors' `distributed_sinkhorn` on one device: scores (B, K) -> codes (B, K), rows summing to 1."""
    q = torch.exp(out / epsilon).t()  # (K, B)
    batch, prototypes = q.shape[1], q.shape[0]
    q /= torch.sum(q)
    for _ in range(iterations):
        q /= torch.sum(q, dim=1, keepdim=True)  # each prototype's row sums to 1 / K
        q /= prototypes
        q /= torch.sum(q, dim=0, keepdim=True)  # each sample's column sums to 1 / B
        q /= batch
    return (q * batch).t()  # (B, K)


def swav_loss(scores, codes, crops_for_assign=(0, 1), temperature=0.1):
    """Eq. 1-2, 4: the mean over assignment crops s of the mean over other crops t of the batch-mean
    cross-entropy -sum_k q_s log softmax(s_t / tau); `scores` V x (B, K), `codes` one (B, K) per s."""
    loss = 0.0
    for q, s in zip(codes, crops_for_assign):
        others = [t for t in range(len(scores)) if t != s]
        subloss = sum(-torch.mean(torch.sum(q * F.log_softmax(scores[t] / temperature, dim=1), dim=1))
                      for t in others)
        loss = loss + subloss / len(others)
    return loss / len(crops_for_assign)


class SwAV(nn.Module):
    """Backbone, projector, prototypes and one queue per assignment crop (see the module docstring)."""

    def __init__(self, projection_dims=(2048, 128), num_prototypes=3000, temperature=0.1, epsilon=0.05,
                 sinkhorn_iterations=3, crops_for_assign=(0, 1), queue_length=3840):
        super().__init__()
        hidden, dim = projection_dims
        self.backbone = cifar_resnet18_maps()
        self.projector = nn.Sequential(nn.Linear(512, hidden, bias=False), nn.BatchNorm1d(hidden),
                                       nn.ReLU(inplace=True), nn.Linear(hidden, dim))
        self.prototypes = nn.Linear(dim, num_prototypes, bias=False)
        self.register_buffer("queue", F.normalize(torch.randn(len(crops_for_assign), queue_length, dim), dim=2))
        self.temperature, self.epsilon, self.iterations = temperature, epsilon, sinkhorn_iterations
        self.crops_for_assign = tuple(crops_for_assign)

    def forward(self, crops):
        """V crops (B, 3, s, s) -> (z (V B, 128), scores (V B, K)), crops stacked in order."""
        features, start = [], 0
        while start < len(crops):  # the backbone once per run of same-size crops
            end = start + 1
            while end < len(crops) and crops[end].shape[-1] == crops[start].shape[-1]:
                end += 1
            features.append(pooled(self.backbone(torch.cat(crops[start:end]))))  # (n B, 512)
            start = end
        z = F.normalize(self.projector(torch.cat(features)), dim=1)  # (V B, 128): one BN over all crops
        return z, self.prototypes(z)  # (V B, K)

    def loss(self, *crops):
        with torch.no_grad():  # unit-norm prototypes at every step
            self.prototypes.weight.copy_(F.normalize(self.prototypes.weight, dim=1))
        z, scores = self.forward(crops)
        batch = crops[0].shape[0]
        codes = []
        with torch.no_grad():
            for i, crop in enumerate(self.crops_for_assign):
                out = scores[crop * batch:(crop + 1) * batch].detach()  # (B, K)
                out = torch.cat([self.queue[i] @ self.prototypes.weight.t(), out])  # (L + B, K)
                self.queue[i, batch:] = self.queue[i, :-batch].clone()  # shift; this batch's z first
                self.queue[i, :batch] = z[crop * batch:(crop + 1) * batch]
                codes.append(sinkhorn(out, self.epsilon, self.iterations)[-batch:])  # (B, K)
        return swav_loss(scores.split(batch), codes, self.crops_for_assign, self.temperature)


def make_step(model, batch_size, lr=None, weight_decay=1e-6, freeze_steps=0):
    """(step(*crops) -> detached loss, description of the optimizer); the prototypes frozen for `freeze_steps`."""
    lr = 0.6 * batch_size / 256 if lr is None else lr
    prototypes = list(model.prototypes.parameters())
    others = [p for name, p in model.named_parameters() if not name.startswith("prototypes.")]
    opt = LARS([{"params": others}, {"params": prototypes, "weight_decay": 0.0}], lr=lr, momentum=0.9,
               weight_decay=weight_decay, exclude_bias_and_norm=False)
    count = {"steps": 0}

    def drop_frozen_gradients():
        if count["steps"] < freeze_steps:
            for p in prototypes:
                p.grad = None
        count["steps"] += 1

    description = (f"LARS(lr={lr:g}, momentum=0.9, weight_decay={weight_decay:g} (prototypes 0), eta=0.001, "
                   f"every parameter adapted) (torch_reference/lars.py), prototypes frozen {freeze_steps} steps")
    return loss_step(model, opt, before_step=drop_frozen_gradients), description


def parameters(model):
    return count_params(model)
