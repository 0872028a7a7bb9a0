"""A plain PyTorch MAE pre-training step (He et al. 2022) on timm's ViT blocks: the reference
for the `ssl` family.

Written from the paper (Sec. 3 and App. A.1), not from the authors' repository (which is
under a non-commercial licence); the Transformer blocks and the patch embedding are
timm's (`timm.models.vision_transformer.Block`, `timm.layers.PatchEmbed`). The same
step as keras-paperzoo's `MAE.from_preset("mae_vit_s16")`:

1. Patch embedding of every 16x16 patch (a stride-16 conv), a class token, and fixed
   2-D sin-cos position embeddings (the class token's row zeros), added before masking.
2. Per-sample uniform random masking without replacement: sort uniform noise, keep the
   first K = N (1 - mask_ratio) patches (75 % removed), and the inverse permutation to
   restore the order later.
3. Encoder: ViT-S/16 blocks (12 x 384, 6 heads, MLP 1536, q/k/v biases, exact GELU,
   LayerNorm eps 1e-6, pre-norm) and a final LayerNorm on the class token + K visible
   patches only.
4. Decoder: a linear map to 512, one shared learned mask token per removed patch,
   un-shuffled to patch order, its own fixed 2-D sin-cos positions, 8 blocks x 512
   (16 heads, MLP 2048), LayerNorm, and a linear predictor to the 16 x 16 x 3 pixels of
   each patch (the class token's prediction dropped).
5. Loss: mean squared error on the masked patches only, against per-patch normalised
   pixels (mean and unbiased variance of the patch, eps 1e-6: "norm_pix_loss").
6. AdamW(betas=(0.9, 0.95), weight decay 0.05 on weight matrices only, lr = 1.5e-4 x
   B / 256), as keras-paperzoo's `SelectiveDecayAdamW` (no decay on rank <= 1 variables
   and attention biases).

Tensors are NCHW images and (B, tokens, D) sequences. Initialisation is PyTorch's /
timm's defaults (it does not change the speed).

Timed on its own: `python -m benchmarks ssl --models mae_vit_s16 --runs torch_reference`.
"""

from functools import partial

import numpy as np
import torch
from timm.layers import PatchEmbed
from timm.models.vision_transformer import Block
from torch import nn

from .steps import count_params, loss_step


def sincos_table(grid, dim):
    """(1 + grid^2, dim) fixed 2-D sin-cos position table; row 0 (class token) zeros.

    Half of the channels encode the column, half the row; each half is
    [sin(p w_i), cos(p w_i)] with w_i = 10000^(-i / (dim / 4)), i < dim / 4.
    """
    quarter = dim // 4
    freqs = 1.0 / 10000.0 ** (np.arange(quarter, dtype=np.float64) / quarter)  # (dim/4,)
    rows, cols = np.divmod(np.arange(grid * grid), grid)  # raster order

    def encode(positions):
        angles = positions[:, None] * freqs[None, :]  # (N, dim/4)
        return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)  # (N, dim/2)

    table = np.concatenate([encode(cols), encode(rows)], axis=1)  # (N, dim)
    table = np.concatenate([np.zeros((1, dim)), table], axis=0)  # (1 + N, dim)
    return torch.tensor(table, dtype=torch.float32)[None]  # (1, 1 + N, dim)


class MAE(nn.Module):
    """ViT encoder on the visible patches, lightweight decoder on all patches (see the module docstring)."""

    def __init__(self, image_size=224, patch_size=16, channels=3, dim=384, depth=12, heads=6,
                 mlp_ratio=4.0, decoder_dim=512, decoder_depth=8, decoder_heads=16, mask_ratio=0.75,
                 norm_pix_loss=True):
        super().__init__()
        norm = partial(nn.LayerNorm, eps=1e-6)
        self.patch_size, self.channels = patch_size, channels
        self.grid = image_size // patch_size
        self.num_patches = self.grid * self.grid
        self.num_visible = int(self.num_patches * (1 - mask_ratio))
        self.norm_pix_loss = norm_pix_loss
        # Encoder.
        self.patch_embed = PatchEmbed(image_size, patch_size, channels, dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.register_buffer("pos_embed", sincos_table(self.grid, dim), persistent=False)
        self.blocks = nn.ModuleList(
            [Block(dim, heads, mlp_ratio, qkv_bias=True, norm_layer=norm) for _ in range(depth)])
        self.norm = norm(dim)
        # Decoder.
        self.decoder_embed = nn.Linear(dim, decoder_dim)
        self.mask_token = nn.Parameter(torch.randn(1, 1, decoder_dim) * 0.02)
        self.register_buffer("decoder_pos_embed", sincos_table(self.grid, decoder_dim), persistent=False)
        self.decoder_blocks = nn.ModuleList(
            [Block(decoder_dim, decoder_heads, mlp_ratio, qkv_bias=True, norm_layer=norm)
             for _ in range(decoder_depth)])
        self.decoder_norm = norm(decoder_dim)
        self.decoder_pred = nn.Linear(decoder_dim, patch_size * patch_size * channels)

    def random_masking(self, tokens):
        """(B, N, D) -> visible (B, K, D), mask (B, N) with 1 = removed, ids_restore (B, N)."""
        b, n, d = tokens.shape
        noise = torch.rand(b, n, device=tokens.device)  # (B, N)
        ids_shuffle = torch.argsort(noise, dim=1)  # (B, N): kept patches first
        ids_restore = torch.argsort(ids_shuffle, dim=1)  # (B, N): inverse permutation
        keep = ids_shuffle[:, :self.num_visible]  # (B, K)
        visible = torch.gather(tokens, 1, keep[:, :, None].expand(-1, -1, d))  # (B, K, D)
        mask = torch.ones(b, n, device=tokens.device)
        mask[:, :self.num_visible] = 0
        mask = torch.gather(mask, 1, ids_restore)  # (B, N) in patch order
        return visible, mask, ids_restore

    def forward(self, images):
        """images (B, C, H, W) -> predicted pixels (B, N, P*P*C), mask (B, N)."""
        x = self.patch_embed(images) + self.pos_embed[:, 1:]  # (B, N, D)
        visible, mask, ids_restore = self.random_masking(x)  # (B, K, D)
        cls = (self.cls_token + self.pos_embed[:, :1]).expand(x.shape[0], -1, -1)  # (B, 1, D)
        x = torch.cat([cls, visible], dim=1)  # (B, 1 + K, D)
        for block in self.blocks:
            x = block(x)
        x = self.decoder_embed(self.norm(x))  # (B, 1 + K, d)
        b, k, d = x.shape[0], x.shape[1] - 1, x.shape[2]
        masked = self.mask_token.expand(b, self.num_patches - k, -1)  # (B, N - K, d)
        patches = torch.cat([x[:, 1:], masked], dim=1)  # (B, N, d), shuffled order
        patches = torch.gather(patches, 1, ids_restore[:, :, None].expand(-1, -1, d))  # patch order
        x = torch.cat([x[:, :1], patches], dim=1) + self.decoder_pos_embed  # (B, 1 + N, d)
        for block in self.decoder_blocks:
            x = block(x)
        pred = self.decoder_pred(self.decoder_norm(x))[:, 1:]  # (B, N, P*P*C)
        return pred, mask

    def patchify(self, images):
        """(B, C, H, W) -> (B, N, P*P*C)."""
        b, c, p, g = images.shape[0], self.channels, self.patch_size, self.grid
        x = images.reshape(b, c, g, p, g, p).permute(0, 2, 4, 3, 5, 1)  # (B, g, g, P, P, C)
        return x.reshape(b, g * g, p * p * c)

    def loss(self, images):
        """Masked-patch MSE (Sec. 3, "Reconstruction target")."""
        pred, mask = self(images)
        target = self.patchify(images)  # (B, N, P*P*C)
        if self.norm_pix_loss:
            mean, var = target.mean(dim=-1, keepdim=True), target.var(dim=-1, keepdim=True)
            target = (target - mean) / (var + 1e-6) ** 0.5
        per_patch = ((pred - target) ** 2).mean(dim=-1)  # (B, N)
        return (per_patch * mask).sum() / mask.sum()


def make_step(model, batch_size, base_lr=1.5e-4, weight_decay=0.05):
    """(step(images) -> detached loss, description of the optimizer)."""
    decay = [p for p in model.parameters() if p.ndim > 1 and p is not model.cls_token and p is not model.mask_token]
    no_decay = [p for p in model.parameters() if not any(p is q for q in decay)]
    lr = base_lr * batch_size / 256
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=lr, betas=(0.9, 0.95))
    description = f"AdamW(lr={lr:g}, betas=(0.9, 0.95), weight_decay={weight_decay:g} on weight matrices only)"
    return loss_step(model, opt), description
