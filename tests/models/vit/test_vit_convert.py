"""timm ViT weights -> ViTBackbone, checked against a plain-PyTorch ViT with timm's parameter names.

timm itself needs torchvision, whose C++ ops do not match the CPU torch build here,
so `TimmNamedViT` re-states timm's `VisionTransformer` forward pass (class token,
pre-norm blocks, exact GELU, LayerNorm eps 1e-6, fused qkv reshaped as
(B, N, 3, heads, head_dim)); `test_real_timm_vit` runs when timm imports.
"""

import numpy as np
import pytest

from keras import ops

from keras_paperzoo.layers.position_embedding import resize_position_embeddings
from keras_paperzoo.models.vit import vit_from_timm_state_dict

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

CONFIG = dict(patch_size=8, num_layers=2, hidden_dim=32, num_heads=2, mlp_dim=64, image_shape=(32, 32, 3))


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)  # (B, heads, N, head_dim)
        attn = (q @ k.transpose(-2, -1)) * (c // self.heads) ** -0.5
        x = attn.softmax(dim=-1) @ v
        return self.proj(x.transpose(1, 2).reshape(b, n, c))


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim, eps=1e-6), Attention(dim, heads)
        self.norm2, self.mlp = nn.LayerNorm(dim, eps=1e-6), Mlp(dim, hidden)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class PatchEmbed(nn.Module):
    def __init__(self, patch, dim):
        super().__init__()
        self.proj = nn.Conv2d(3, dim, patch, stride=patch)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)  # (B, N, D), raster order


class TimmNamedViT(nn.Module):
    def __init__(self, img=32, patch=8, dim=32, depth=2, heads=2, hidden=64, classes=5):
        super().__init__()
        self.patch_embed = PatchEmbed(patch, dim)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, (img // patch) ** 2 + 1, dim) * 0.02)
        self.blocks = nn.ModuleList([Block(dim, heads, hidden) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, classes)

    def pre_logits(self, x, pos_embed=None):
        x = self.patch_embed(x)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1)
        x = x + (self.pos_embed if pos_embed is None else pos_embed)
        for block in self.blocks:
            x = block(x)
        return self.norm(x)[:, 0]


def _random_torch_vit(**kwargs):
    torch.manual_seed(0)
    model = TimmNamedViT(**kwargs).eval()
    with torch.no_grad():  # move LayerNorms and biases away from (1, 0) so a wrong mapping shows
        for name, p in model.named_parameters():
            if name.endswith(("norm1.weight", "norm2.weight", "norm.weight")):
                p.add_(torch.randn_like(p) * 0.2)
            elif name.endswith("bias"):
                p.copy_(torch.randn_like(p) * 0.1)
    return model


def _images(size, n=3):
    return np.random.default_rng(1).normal(size=(n, size, size, 3)).astype("float32")


def test_converted_backbone_matches_the_torch_vit():
    reference = _random_torch_vit()
    backbone = vit_from_timm_state_dict(reference.state_dict(), CONFIG)
    x = _images(32)
    with torch.no_grad():
        expected = reference.pre_logits(torch.from_numpy(x).permute(0, 3, 1, 2)).numpy()
    ours = np.asarray(ops.convert_to_numpy(backbone(x)))
    assert np.abs(ours - expected).max() < 1e-4


def test_converted_backbone_at_a_new_resolution_matches_timm_resampling():
    reference = _random_torch_vit()  # trained at 32 x 32: a 4 x 4 grid
    backbone = vit_from_timm_state_dict(reference.state_dict(), {**CONFIG, "image_shape": (48, 48, 3)})
    # timm's resample_abs_pos_embed: class row kept, grid resized by bicubic antialiased interpolate.
    pos = reference.pos_embed.detach()
    grid = pos[:, 1:].reshape(1, 4, 4, -1).permute(0, 3, 1, 2)
    grid = F.interpolate(grid, size=(6, 6), mode="bicubic", antialias=True).permute(0, 2, 3, 1).reshape(1, 36, -1)
    resampled = torch.cat([pos[:, :1], grid], dim=1)
    np.testing.assert_allclose(
        np.asarray(ops.convert_to_numpy(backbone.position_layer.embeddings)), resampled[0].numpy(), atol=1e-6
    )
    np.testing.assert_allclose(resize_position_embeddings(pos, 4, 6, 1)[0], resampled[0].numpy(), atol=1e-6)
    x = _images(48)
    with torch.no_grad():
        expected = reference.pre_logits(torch.from_numpy(x).permute(0, 3, 1, 2), resampled).numpy()
    assert np.abs(np.asarray(ops.convert_to_numpy(backbone(x))) - expected).max() < 1e-4


def test_converter_refuses_what_does_not_fit():
    state = _random_torch_vit().state_dict()
    with pytest.raises(ValueError, match="The checkpoint has 2 blocks; the backbone has num_layers=3"):
        vit_from_timm_state_dict(state, {**CONFIG, "num_layers": 3})
    with pytest.raises(ValueError, match="pooling"):
        vit_from_timm_state_dict(state, {**CONFIG, "pooling": "gap"})
    with pytest.raises(ValueError, match="position_embedding='1d'"):
        vit_from_timm_state_dict(state, {**CONFIG, "position_embedding": "2d"})
    with pytest.raises(ValueError, match="mlp.fc1.weight: shape"):
        vit_from_timm_state_dict(state, {**CONFIG, "mlp_dim": 48})


def test_real_timm_vit():
    try:  # importorskip only catches ImportError; a mismatched torchvision raises RuntimeError
        import timm  # noqa: F401  (the import is the check)
        from timm.models.vision_transformer import VisionTransformer
    except Exception as error:  # noqa: BLE001
        pytest.skip(f"timm does not import here: {type(error).__name__}: {str(error)[:80]}")

    torch.manual_seed(0)
    model = VisionTransformer(
        img_size=32, patch_size=8, embed_dim=32, depth=2, num_heads=2, mlp_ratio=2.0, num_classes=5
    ).eval()
    backbone = vit_from_timm_state_dict(model.state_dict(), CONFIG)
    x = _images(32)
    with torch.no_grad():
        t = torch.from_numpy(x).permute(0, 3, 1, 2)
        expected = model.forward_head(model.forward_features(t), pre_logits=True).numpy()
    assert np.abs(np.asarray(ops.convert_to_numpy(backbone(x))) - expected).max() < 1e-4
