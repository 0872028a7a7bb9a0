"""DenseCL training step in plain PyTorch: the reference for `ssl`.

The same step as `DenseCL.from_preset("densecl_resnet50", ...)`'s on the MoCo authors' CIFAR
ResNet-18 in keras-paperzoo (Wang et al. 2021; the authors' `densecl.py` and
`DenseCLNeck`, written out here):

- Backbone: `cifar_resnet.cifar_resnet18_maps` (torchvision's ResNet-18 with the 3x3 stem
  and no max pool, written out; every BN a `SplitBatchNorm(G)`): (B, 512, 4, 4) maps at 32x32.
- Global head: pooling, the MoCo v2 head Linear(512, 2048) - ReLU - Linear(2048, 128).
  Dense head: Conv1x1 512 -> 2048, ReLU, Conv1x1 2048 -> 128 (the authors' `mlp2`); its
  pooled output goes to the second queue.
- Key encoder: deep copies moved by the momentum update before the keys (the authors'
  `_momentum_update_key_encoder`); the key batch shuffled / un-shuffled around the key
  encoder (their `_batch_shuffle_ddp` on one device: a random permutation).
- Correspondence: argmax over the cosine similarity of the query and key backbone maps;
  the dense positive gathered from the key's dense grid; negatives from the second queue.
- Loss: 0.5 x InfoNCE(global) + 0.5 x InfoNCE(dense), tau 0.2, both queues read before
  the batch's keys are enqueued.
- Optimizer: `torch.optim.SGD(lr=0.03 x B / 256, momentum=0.9, weight_decay=1e-4)`.

No torchvision or lightly (lightly's model utilities import torchvision, whose PyPI wheels
need a CUDA torch: `cifar_resnet.py`), so it runs in the Keras environment's interpreter.
Timed on its own: `python -m benchmarks ssl --models densecl --runs torch_reference`.
"""

import functools

import torch
import torch.nn.functional as F
from torch import nn

from .cifar_resnet import cifar_resnet18_maps
from .ssl_parts import FeatureQueue, info_nce, moco_head, momentum_copy, momentum_update, shuffled_call
from .steps import count_params, loss_step


class DenseCL(nn.Module):
    """Query encoder (backbone, global head, dense head), its momentum copy and the two queues."""

    def __init__(self, queue_size=4096, temperature=0.2, momentum=0.99, hidden_dim=2048, projection_dim=128,
                 bn_splits=8, dense_weight=0.5):
        super().__init__()
        self.backbone = cifar_resnet18_maps(bn_splits)
        self.head = moco_head(512, hidden_dim, projection_dim)
        self.dense_head = nn.Sequential(nn.Conv2d(512, hidden_dim, 1), nn.ReLU(inplace=True),
                                        nn.Conv2d(hidden_dim, projection_dim, 1))
        self.momentum_copies = momentum_copy(nn.ModuleList([self.backbone, self.head, self.dense_head]))
        self.queue = FeatureQueue(queue_size, projection_dim)
        self.queue2 = FeatureQueue(queue_size, projection_dim)
        self.momentum, self.temperature, self.dense_weight = momentum, temperature, dense_weight

    @staticmethod
    def _encode(backbone, head, dense_head, x):
        maps = backbone(x)  # (B, 512, s, s)
        g = F.normalize(head(maps.mean(dim=(2, 3))), dim=1)  # (B, 128)
        dense = dense_head(maps)  # (B, 128, s, s)
        pooled = F.normalize(dense.mean(dim=(2, 3)), dim=1)  # (B, 128), for queue2
        return g, F.normalize(dense.flatten(2), dim=1), pooled, F.normalize(maps.flatten(2), dim=1)

    def loss(self, x_q, x_k):
        q, q_grid, _, q_b = self._encode(self.backbone, self.head, self.dense_head, x_q)
        for online, target in zip((self.backbone, self.head, self.dense_head), self.momentum_copies):
            momentum_update(online, target, self.momentum)
        k, k_grid, k2, k_b = shuffled_call(functools.partial(self._encode, *self.momentum_copies), x_k)
        queue, queue2 = self.queue.read(), self.queue2.read()
        global_loss = info_nce((q * k).sum(1, keepdim=True), q @ queue.T, self.temperature)
        matches = torch.matmul(q_b.detach().transpose(1, 2), k_b).argmax(dim=2)  # (B, S)
        positives = torch.gather(k_grid, 2, matches.unsqueeze(1).expand(-1, k_grid.size(1), -1))  # (B, C, S)
        l_pos_dense = (q_grid * positives).sum(1).reshape(-1, 1)  # (B S, 1)
        q_rows = q_grid.transpose(1, 2).reshape(-1, q_grid.size(1))  # (B S, C)
        dense_loss = info_nce(l_pos_dense, q_rows @ queue2.T, self.temperature)
        self.queue.enqueue(k)
        self.queue2.enqueue(k2)
        return (1 - self.dense_weight) * global_loss + self.dense_weight * dense_loss


def make_step(model, batch_size, lr=None, weight_decay=1e-4):
    """(step(x_q, x_k) -> detached loss, description of the optimizer)."""
    lr = 0.03 * batch_size / 256 if lr is None else lr
    params = [p for m in (model.backbone, model.head, model.dense_head) for p in m.parameters()]
    opt = torch.optim.SGD(params, lr=lr, momentum=0.9, weight_decay=weight_decay)
    return loss_step(model, opt), f"SGD(lr={lr:g}, momentum=0.9, weight_decay={weight_decay:g})"


def parameters(model):
    return count_params(model.backbone) + count_params(model.head) + count_params(model.dense_head)
