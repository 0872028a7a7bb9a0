"""A plain PyTorch BEiT masked-image-modelling step (Bao et al. 2022): the reference for the `mim` family.

Written from the paper (Sec. 2.1-2.5 and App. "Hyperparameters for pre-training"), plain
PyTorch only (no timm: the reference environment need not have it). The same step as
keras-paperzoo's `BEiT(BEiTBackbone.from_preset("beit_base_patch16_224", <sizes>), tokenizer)`:

1. Visual tokens z (B, N) from the stub tokenizer `stub_tokens` (the tokenizer's forward is
   not part of the benchmarked step on either side; both use the same cheap deterministic
   function of the images: the patch mean squashed to an id, see `stub_tokens`).
2. Blockwise masking (Algorithm 1, `BlockwiseMaskGenerator`): blocks of >= 16 patches,
   aspect ratio in [0.3, 1/0.3], until `num_masking_patches` (75 of 196) are masked; drawn
   per image in NumPy inside the step, as the official code's data loader does.
3. Patch embedding (a P x P stride-P conv), masked embeddings replaced by the learnable
   e_[M], a prepended [S] token, no absolute position embedding.
4. L pre-norm blocks (LayerNorm eps 1e-6; q/k/v with biases; a relative position bias
   table ((2h-1)(2w-1) + 3, heads) per layer added to the attention logits, the official
   `relative_position_index` with the three [S] entries; LayerScale gammas init 0.1 on both
   branches; exact GELU MLP; stochastic depth linspace(0, 0.1, L)), then the final LayerNorm.
5. The MIM head, a linear layer D -> |V| on every patch state; cross-entropy on the masked
   positions only, averaged over the masked positions of the batch.
6. AdamW(betas (0.9, 0.999), lr 1.5e-3 x B / 2048 constant, weight decay 0.05 on weight
   matrices except [S], [M] and the bias tables) after clipping the gradients to global
   norm 3.0, as `BEiT.compile()`'s `SelectiveDecayAdamW(global_clipnorm=3.0)`.

Scoring all N patches (4) is what keras-paperzoo's `BEiT` does; the official code applies
the head to the masked positions only (`x[bool_masked_pos]`, 38 % of them): 0.6 x the head's
FLOPs. Initialisation is PyTorch's defaults with the paper's LayerScale and 1/sqrt(2l)
rescaling; it does not change the speed. Tensors are NCHW images and (B, T, D) sequences.

Timed on its own: `python -m benchmarks mim --models beit_s16 --runs torch_reference`.
"""

import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F


def stub_tokens(images, patch_size, vocabulary_size):
    """The stub tokenizer: images (B, C, H, W) -> (B, N) ids in raster order.

    id = floor(sigmoid(patch mean x P sqrt(C)) x |V|), clipped to |V| - 1: cheap and
    deterministic (the patch mean of N(0, 1) pixels times P sqrt(C) is N(0, 1)).
    """
    b, c, h, w = images.shape
    p = patch_size
    means = images.reshape(b, c, h // p, p, w // p, p).mean(dim=(1, 3, 5))  # (B, h, w)
    ids = torch.floor(torch.sigmoid(means * (p * math.sqrt(c))) * vocabulary_size).long()
    return ids.clamp(max=vocabulary_size - 1).reshape(b, -1)  # (B, N)


class BlockwiseMaskGenerator:
    """Algorithm 1 (the official `MaskingGenerator`): a (h, w) 0/1 mask with `num_masking_patches` ones."""

    def __init__(self, grid, num_masking_patches, min_num_patches=16, min_aspect=0.3, seed=0):
        self.height, self.width = grid
        self.num_masking_patches = num_masking_patches
        self.min_num_patches = min_num_patches
        self.log_aspect = (math.log(min_aspect), math.log(1.0 / min_aspect))
        self.rng = np.random.default_rng(seed)

    def _block(self, mask, max_patches):
        for _ in range(10):
            # random.uniform(a, b) as the official code: b < a is allowed (a small remainder).
            area = self.min_num_patches + (max_patches - self.min_num_patches) * self.rng.random()
            aspect = math.exp(self.rng.uniform(*self.log_aspect))
            h, w = int(round(math.sqrt(area * aspect))), int(round(math.sqrt(area / aspect)))
            if w < self.width and h < self.height:
                top, left = self.rng.integers(0, self.height - h + 1), self.rng.integers(0, self.width - w + 1)
                window = mask[top:top + h, left:left + w]
                new = h * w - int(window.sum())
                if 0 < new <= max_patches:
                    window[...] = 1
                    return new
        return 0

    def __call__(self):
        mask = np.zeros((self.height, self.width), np.int64)
        count = 0
        while count < self.num_masking_patches:
            added = self._block(mask, self.num_masking_patches - count)
            if added == 0:
                break
            count += added
        return mask.reshape(-1)  # (N,)


def relative_position_index(grid):
    """(1 + N, 1 + N) indices into a ((2h-1)(2w-1) + 3)-row table; the last three rows: [S]->patch,
    patch->[S], [S]->[S] (the official code's layout)."""
    h, w = grid
    coords = np.stack(np.meshgrid(np.arange(h), np.arange(w), indexing="ij")).reshape(2, -1)  # (2, N)
    rel = (coords[:, :, None] - coords[:, None, :]).transpose(1, 2, 0)  # (N, N, 2)
    rel[:, :, 0] += h - 1
    rel[:, :, 1] += w - 1
    rel[:, :, 0] *= 2 * w - 1
    size = (2 * h - 1) * (2 * w - 1) + 3
    index = np.zeros((1 + h * w, 1 + h * w), np.int64)
    index[1:, 1:] = rel.sum(-1)
    index[0, :] = size - 3
    index[:, 0] = size - 2
    index[0, 0] = size - 1
    return torch.from_numpy(index), size


def drop_path(x, rate, training):
    """Stochastic depth: zero a sample's residual branch with probability `rate`, scale the rest."""
    if not training or rate == 0.0:
        return x
    keep = (torch.rand(x.shape[0], 1, 1, device=x.device) >= rate).to(x.dtype)  # (B, 1, 1)
    return x * keep / (1.0 - rate)


class Block(nn.Module):
    """Pre-norm Transformer block with a per-layer relative position bias and LayerScale."""

    def __init__(self, dim, heads, mlp_dim, grid, layer_scale=0.1, drop_path_rate=0.0, depth_index=1):
        super().__init__()
        self.heads, self.drop_path_rate = heads, drop_path_rate
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        index, size = relative_position_index(grid)
        self.register_buffer("rel_index", index, persistent=False)
        self.relative_position_bias_table = nn.Parameter(torch.zeros(size, heads))
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.fc1, self.fc2 = nn.Linear(dim, mlp_dim), nn.Linear(mlp_dim, dim)
        self.gamma_1 = nn.Parameter(layer_scale * torch.ones(dim))
        self.gamma_2 = nn.Parameter(layer_scale * torch.ones(dim))
        with torch.no_grad():  # fix_init_weight: 1 / sqrt(2 l)
            self.proj.weight.div_(math.sqrt(2.0 * depth_index))
            self.fc2.weight.div_(math.sqrt(2.0 * depth_index))

    def attention(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)  # (B, h, T, d/h)
        bias = self.relative_position_bias_table[self.rel_index].permute(2, 0, 1)[None]  # (1, heads, T, T)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)  # softmax(q k^T / sqrt(d/h) + bias) v
        return self.proj(out.transpose(1, 2).reshape(b, t, d))

    def forward(self, x):
        x = x + drop_path(self.gamma_1 * self.attention(self.norm1(x)), self.drop_path_rate, self.training)
        mlp = self.fc2(F.gelu(self.fc1(self.norm2(x))))
        return x + drop_path(self.gamma_2 * mlp, self.drop_path_rate, self.training)


class BEiT(nn.Module):
    """BEiT backbone + MIM head (see the module docstring)."""

    def __init__(self, image_size=224, patch_size=16, channels=3, dim=384, depth=12, heads=6, mlp_dim=1536,
                 vocabulary_size=8192, num_masking_patches=75, drop_path_rate=0.1, layer_scale=0.1):
        super().__init__()
        self.patch_size, self.vocabulary_size = patch_size, vocabulary_size
        grid = (image_size // patch_size,) * 2
        self.patch_embed = nn.Conv2d(channels, dim, patch_size, stride=patch_size)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.mask_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        rates = np.linspace(0.0, drop_path_rate, depth)
        self.blocks = nn.ModuleList([Block(dim, heads, mlp_dim, grid, layer_scale, float(rates[i]), i + 1)
                                     for i in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, vocabulary_size)
        self.masks = BlockwiseMaskGenerator(grid, num_masking_patches)

    def forward(self, images, mask):
        """images (B, C, H, W), mask (B, N) 1 = [M] -> MIM logits (B, N, |V|)."""
        x = self.patch_embed(images).flatten(2).transpose(1, 2)  # (B, N, D)
        w = mask[:, :, None].to(x.dtype)  # (B, N, 1)
        x = x * (1.0 - w) + self.mask_token * w  # x^M
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1)  # (B, 1 + N, D)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x)[:, 1:])  # (B, N, |V|)

    def loss(self, images):
        """Cross-entropy on the masked positions (Sec. 2.3), masks and stub tokens drawn here."""
        mask = torch.from_numpy(np.stack([self.masks() for _ in range(images.shape[0])]))  # (B, N)
        tokens = stub_tokens(images, self.patch_size, self.vocabulary_size)  # (B, N)
        logits = self(images, mask)
        nll = F.cross_entropy(logits.reshape(-1, self.vocabulary_size), tokens.reshape(-1), reduction="none")
        m = mask.reshape(-1).to(nll.dtype)
        return (nll * m).sum() / m.sum().clamp(min=1.0)


NO_DECAY = ("cls_token", "mask_token", "relative_position_bias_table")


def make_step(model, batch_size, base_lr=1.5e-3, weight_decay=0.05, clip_norm=3.0):
    """(step(images) -> detached loss, description of the optimizer)."""
    decay = [p for n, p in model.named_parameters() if p.ndim > 1 and not any(k in n for k in NO_DECAY)]
    other = [p for p in model.parameters() if not any(p is q for q in decay)]
    lr = base_lr * batch_size / 2048
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": weight_decay},
                             {"params": other, "weight_decay": 0.0}], lr=lr, betas=(0.9, 0.999))

    def step(images):
        opt.zero_grad(set_to_none=True)
        loss = model.loss(images)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
        opt.step()
        return loss.detach()

    description = (f"AdamW(lr={lr:g}, betas=(0.9, 0.999), weight_decay={weight_decay:g} on weight matrices "
                   f"except [S], [M] and the bias tables), grad clip {clip_norm:g}")
    return step, description
