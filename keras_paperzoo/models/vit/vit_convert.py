"""Weights from timm's `VisionTransformer` (PyTorch) onto `ViTBackbone` (timm's `checkpoint_filter_fn` idea).

Name map (timm -> ours; PyTorch Linear weights are (out, in), Keras kernels (in, out)):

    patch_embed.proj.weight (D, C, P, P) OIHW -> patch_embedding/projection kernel (P, P, C, D) HWIO
    cls_token (1, 1, D)                       -> class_token/token
    pos_embed (1, T, D)                       -> position_embedding/embeddings (T, D), resized if T differs
    blocks.i.norm1                            -> transformer_block_i/attention_norm
    blocks.i.attn.qkv (3D, D)                 -> attention query/key/value kernels (D, heads, head_dim)
                                                 (rows [q; k; v], head-major inside each, as timm's reshape)
    blocks.i.attn.proj (D, D)                 -> attention output kernel (heads, head_dim, D)
    blocks.i.norm2                            -> transformer_block_i/mlp_norm
    blocks.i.mlp.fc1 / fc2                    -> mlp_dense_1 / mlp_dense_2
    norm                                      -> encoder_norm

`head.*` (the classifier) is not part of the backbone and is skipped.
"""

import math

import numpy as np

from keras_paperzoo.layers.position_embedding import resize_position_embeddings
from keras_paperzoo.models.vit.vit_backbone import ViTBackbone

_SKIPPED_PREFIXES = ("head.", "head_drop.", "pre_logits.")


def _to_numpy(value):
    if hasattr(value, "detach"):  # torch.Tensor, without importing torch
        value = value.detach().cpu().float().numpy()
    return np.asarray(value, dtype="float32")


def vit_from_timm_state_dict(state_dict, config, old_grid=None, interpolation="bicubic", antialias=True):
    """Build a `ViTBackbone` from `config` and fill it with a timm ViT `state_dict`.

    The backbone's pooled output then equals timm's pre-logits features,
    `model.forward_head(model.forward_features(x), pre_logits=True)`, for the
    class-token models (timm's default `global_pool="token"`). A `pos_embed` for
    another grid (a checkpoint trained at 224 loaded at 384, say) is resized with
    `resize_position_embeddings` (bicubic, antialiased: timm's own
    `resample_abs_pos_embed`).

    Args:
        state_dict: mapping name -> torch tensor or array, e.g. `timm_model.state_dict()`.
        config: dict of `ViTBackbone` arguments (e.g. `VIT_PRESETS["vit_b16"]["config"]`
            with overrides), or an already built `ViTBackbone` to fill in place.
        old_grid: (h, w) grid of the checkpoint's `pos_embed`; default square.
        interpolation, antialias: for resizing `pos_embed`.

    Returns the `ViTBackbone`.

    Example:

    ```python
    backbone = vit_from_timm_state_dict(timm_model.state_dict(), VIT_PRESETS["vit_b16"]["config"])
    ```
    """
    sd = {k: v for k, v in state_dict.items() if not k.startswith(_SKIPPED_PREFIXES)}
    backbone = config if isinstance(config, ViTBackbone) else ViTBackbone(**config)
    if backbone.position_embedding != "1d" or backbone.hybrid is not None:
        raise ValueError(
            "timm ViT weights fit a backbone with position_embedding='1d' and hybrid=None; got "
            f"position_embedding={backbone.position_embedding!r}, hybrid={backbone.hybrid!r}."
        )
    if any(k.startswith("fc_norm.") for k in sd):
        raise ValueError(
            "This checkpoint has timm's fc_norm (LayerNorm after global average pooling); ViTBackbone's "
            "'gap' applies the final LayerNorm before pooling, as the official code does, so it cannot hold it."
        )
    has_class_token = "cls_token" in sd
    if has_class_token != (backbone.pooling == "token"):
        raise ValueError(
            f"The checkpoint {'has' if has_class_token else 'has no'} cls_token but the backbone's pooling is "
            f"{backbone.pooling!r}; use pooling={'token' if has_class_token else 'gap'!r}."
        )
    num_blocks = len({k.split(".")[1] for k in sd if k.startswith("blocks.")})
    if num_blocks != backbone.num_layers:
        raise ValueError(f"The checkpoint has {num_blocks} blocks; the backbone has num_layers={backbone.num_layers}.")

    used = set()

    def take(key):
        if key not in sd:
            raise KeyError(f"timm state_dict has no {key!r}.")
        used.add(key)
        return _to_numpy(sd[key])

    def assign(variable, value, key):
        if tuple(variable.shape) != tuple(value.shape):
            raise ValueError(f"{key}: shape {value.shape} does not fit {variable.path} {tuple(variable.shape)}.")
        variable.assign(value)

    def assign_norm(layer, prefix):
        assign(layer.gamma, take(prefix + ".weight"), prefix + ".weight")
        assign(layer.beta, take(prefix + ".bias"), prefix + ".bias")

    def assign_dense(layer, prefix):
        assign(layer.kernel, take(prefix + ".weight").T, prefix + ".weight")
        assign(layer.bias, take(prefix + ".bias"), prefix + ".bias")

    d, heads = backbone.hidden_dim, backbone.num_heads
    head_dim = d // heads
    projection = backbone.patch_embedding.projection
    assign(projection.kernel, take("patch_embed.proj.weight").transpose(2, 3, 1, 0), "patch_embed.proj.weight")
    assign(projection.bias, take("patch_embed.proj.bias"), "patch_embed.proj.bias")
    if has_class_token:
        assign(backbone.class_token.token, take("cls_token"), "cls_token")

    pos = take("pos_embed")[0]  # (T_old, D)
    prefix = backbone.num_prefix_tokens
    if pos.shape[0] != backbone.sequence_length or (old_grid is not None and tuple(old_grid) != backbone.grid_size):
        if old_grid is None:
            side = int(round(math.sqrt(pos.shape[0] - prefix)))
            if side * side != pos.shape[0] - prefix:
                raise ValueError(
                    f"pos_embed has {pos.shape[0]} rows: {prefix} prefix + {pos.shape[0] - prefix}, not a square grid; "
                    "pass old_grid (timm's no_embed_class=True tables, without a class row, are not supported)."
                )
            old_grid = (side, side)
        pos = resize_position_embeddings(
            pos, old_grid, backbone.grid_size, prefix, interpolation=interpolation, antialias=antialias
        )
    assign(backbone.position_layer.embeddings, pos, "pos_embed")

    for i, block in enumerate(backbone.transformer_blocks):
        p = f"blocks.{i}."
        assign_norm(block.attention_norm, p + "norm1")
        qkv_w, qkv_b = take(p + "attn.qkv.weight"), take(p + "attn.qkv.bias")  # (3D, D), (3D,)
        attention = block.attention
        for j, dense in enumerate((attention.query_dense, attention.key_dense, attention.value_dense)):
            w, b = qkv_w[j * d : (j + 1) * d], qkv_b[j * d : (j + 1) * d]  # (D_out, D_in), rows h*head_dim + c
            assign(dense.kernel, w.T.reshape(d, heads, head_dim), p + "attn.qkv.weight")
            assign(dense.bias, b.reshape(heads, head_dim), p + "attn.qkv.bias")
        proj_w = take(p + "attn.proj.weight")  # (D, D_in), D_in = h*head_dim + c
        assign(attention.output_dense.kernel, proj_w.T.reshape(heads, head_dim, d), p + "attn.proj.weight")
        assign(attention.output_dense.bias, take(p + "attn.proj.bias"), p + "attn.proj.bias")
        assign_norm(block.mlp_norm, p + "norm2")
        assign_dense(block.mlp_dense_1, p + "mlp.fc1")
        assign_dense(block.mlp_dense_2, p + "mlp.fc2")
    assign_norm(backbone.encoder_norm, "norm")

    unused = sorted(set(sd) - used)
    if unused:
        raise ValueError(f"timm weights with no place in ViTBackbone (unsupported variant?): {unused[:8]}")
    return backbone
