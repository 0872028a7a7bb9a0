"""timm ViT weights -> ViTBackbone, checked against a plain-PyTorch ViT with timm's parameter names.

timm itself needs torchvision, whose C++ ops do not match the CPU torch build here,
so `tests/torch_references.py` re-states timm's `VisionTransformer` forward pass (class
token, pre-norm blocks, exact GELU, LayerNorm eps 1e-6, fused qkv reshaped as
(B, N, 3, heads, head_dim)); `test_real_timm_vit` runs when timm imports.
"""

import numpy as np
import pytest

from keras import ops

from keras_paperzoo.layers.position_embedding import resize_position_embeddings
from keras_paperzoo.models.vit import vit_from_timm_state_dict

torch = pytest.importorskip("torch")
F = torch.nn.functional

from tests import torch_references as ref  # noqa: E402

CONFIG = dict(patch_size=8, num_layers=2, hidden_dim=32, num_heads=2, mlp_dim=64, image_shape=(32, 32, 3))
TIMM_ARGS = dict(patch_size=8, embed_dim=32, depth=2, num_heads=2, mlp_ratio=2.0, num_classes=5)


def _random_torch_vit(img=32):
    torch.manual_seed(0)
    return ref.randomize(ref.VisionTransformer(img_size=img, **TIMM_ARGS))  # norms and biases away from (1, 0)


def _images(size, n=3):
    return np.random.default_rng(1).normal(size=(n, size, size, 3)).astype("float32")


def test_converted_backbone_matches_the_torch_vit():
    reference = _random_torch_vit()
    backbone = vit_from_timm_state_dict(reference.state_dict(), CONFIG)
    x = _images(32)
    with torch.no_grad():
        expected = ref.vit_pre_logits(reference, torch.from_numpy(x).permute(0, 3, 1, 2)).numpy()
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
    at_48 = ref.VisionTransformer(img_size=48, **TIMM_ARGS).eval()
    at_48.load_state_dict({**reference.state_dict(), "pos_embed": resampled})
    x = _images(48)
    with torch.no_grad():
        expected = ref.vit_pre_logits(at_48, torch.from_numpy(x).permute(0, 3, 1, 2)).numpy()
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
