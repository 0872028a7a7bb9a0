"""A timm `VisionTransformer` object -> `ViTBackbone` with its weights.

Read from the model: the patch size, image size and input channels (`patch_embed`),
hidden size `embed_dim`, depth (`blocks`), heads (`blocks[i].attn.num_heads`), MLP width
(`blocks[i].mlp.fc1`), LayerNorm epsilon, dropout rates, and the pooling: `global_pool=
"token"` with the class token (the paper's eq. 4) or `"avg"` without a class token and
with `fc_norm=False` (the mean of the final-normed patch tokens, ViTBackbone's "gap").
Everything ViTBackbone cannot express is refused by name (register tokens, layer
scale, qk-norm, fc_norm, attention pooling, a pre-norm, tanh GELU, ...). The weights go
through `vit_from_timm_state_dict`, which resizes the position table when another
`image_shape` is asked for (timm's bicubic, antialiased `resample_abs_pos_embed`).
"""

from keras_paperzoo.convert.torch_modules import (
    conv_problem,
    head_weights,
    is_identity,
    kind,
    linear_size,
    pair,
    unsupported,
)
from keras_paperzoo.models.vit.vit_convert import vit_from_timm_state_dict


def read_vit(model, library, image_shape=None, include_head=False):
    """`(ViTBackbone, head)` for a timm `VisionTransformer`; `head` is `(weights, dropout)` or None."""

    def fail(reason):
        unsupported(model, library, reason)

    # --- patch embedding (eq. 1) and the tokens before the blocks ---
    embed = getattr(model, "patch_embed", None)
    if kind(embed) != "PatchEmbed":
        if hasattr(model, "conv_proj") and hasattr(model, "encoder"):
            fail("it is torchvision's VisionTransformer (conv_proj, encoder.layers); from_timm reads timm's")
        fail(f"its `patch_embed` is a {kind(embed)}, not timm's PatchEmbed (hybrid ViTs are not supported)")
    if not is_identity(getattr(model, "norm_pre", None)):
        fail("it normalises the tokens before the blocks (pre_norm=True, as CLIP)")
    patch = pair(embed.patch_size)
    problem = conv_problem(getattr(embed, "proj", None), patch, patch, 0, bias=True)
    if problem:
        fail(f"`patch_embed.proj` is {problem}")
    if not is_identity(getattr(embed, "norm", None)):
        fail("`patch_embed.norm` normalises the patch embeddings")
    if getattr(embed, "dynamic_img_pad", False):
        fail("dynamic_img_pad=True pads images to a multiple of the patch size")
    if getattr(model, "reg_token", None) is not None:
        fail("it has register tokens (reg_tokens > 0)")
    if getattr(model, "pos_embed", None) is None:
        fail("it has no position embedding (pos_embed='none')")
    if getattr(model, "no_embed_class", False):
        fail("no_embed_class=True: its position table has no row for the class token")

    # --- pooling (eq. 4 or App. D.3's global average pooling) ---
    global_pool = getattr(model, "global_pool", None)
    has_class_token = getattr(model, "cls_token", None) is not None
    if getattr(model, "attn_pool", None) is not None:
        fail(f"global_pool={global_pool!r} pools with attention")
    if not is_identity(getattr(model, "fc_norm", None)):
        fail(
            "it has fc_norm (a LayerNorm after pooling, timm's default for global_pool='avg'); ViTBackbone's "
            "'gap' applies the final LayerNorm before pooling, as the paper's code: use a model made with "
            "fc_norm=False"
        )
    if global_pool == "token" and has_class_token:
        pooling = "token"
    elif global_pool == "avg" and not has_class_token:
        pooling = "gap"
    else:
        fail(
            f"global_pool={global_pool!r} with{'' if has_class_token else 'out'} a class token; ViTBackbone pools "
            "with the class token ('token') or averages the patch tokens of a model without one ('avg')"
        )

    # --- the blocks (eqs. 2-3) ---
    blocks = list(getattr(model, "blocks", None) or [])
    if not blocks:
        fail("it has no `blocks`")
    dim = int(model.embed_dim)
    eps = float(getattr(blocks[0].norm1, "eps", 1e-6))
    heads = int(getattr(blocks[0].attn, "num_heads", 0))
    mlp_dim = (linear_size(getattr(blocks[0].mlp, "fc1", None)) or (0, 0))[1]
    if heads < 1 or dim % heads:
        fail(f"blocks.0.attn.num_heads={heads} does not divide embed_dim={dim}")
    for i, block in enumerate(blocks):
        problem = _block_problem(block, dim, heads, mlp_dim, eps)
        if problem:
            where, what = problem
            fail(f"`blocks.{i}{where}` {what}")
    reason = _layer_norm_problem(getattr(model, "norm", None), dim, eps)
    if reason:
        fail(f"the final `norm` is {reason} (final_norm=False?)")

    # --- configuration ---
    in_channels = int(embed.proj.in_channels)
    if image_shape is None:
        if getattr(embed, "img_size", None) is None:
            fail("its patch_embed has no img_size; pass image_shape")
        image_shape = pair(embed.img_size) + (in_channels,)
    first = blocks[0]
    config = dict(
        patch_size=patch[0] if patch[0] == patch[1] else patch,
        num_layers=len(blocks),
        hidden_dim=dim,
        num_heads=heads,
        mlp_dim=mlp_dim,
        image_shape=tuple(image_shape),
        # ViTBackbone has one rate for the embeddings and every dense output.
        dropout_rate=max(_rate(getattr(model, "pos_drop", None)), _rate(first.mlp.drop2), _rate(first.attn.proj_drop)),
        attention_dropout=_rate(first.attn.attn_drop),
        pooling=pooling,
        position_embedding="1d",
        layer_norm_epsilon=eps,
    )
    old_grid = getattr(embed, "grid_size", None)
    old_grid = tuple(int(g) for g in old_grid) if old_grid is not None else None
    backbone = vit_from_timm_state_dict(model.state_dict(), config, old_grid=old_grid)

    head = None
    if include_head and not is_identity(getattr(model, "head", None)):
        size = linear_size(model.head)
        if size is None or size[0] != dim:
            fail(f"its `head` is a {kind(model.head)}; include_head=True converts one Linear layer with a bias")
        head = (head_weights(model.head), _rate(getattr(model, "head_drop", None)))
    return backbone, head


def _rate(dropout):
    return float(getattr(dropout, "p", 0.0) or 0.0)


def _layer_norm_problem(norm, dim, eps):
    if kind(norm) != "LayerNorm":
        return f"a {kind(norm)}, not a LayerNorm"
    if tuple(norm.normalized_shape) != (dim,) or norm.weight is None or getattr(norm, "bias", None) is None:
        return f"a LayerNorm {tuple(norm.normalized_shape)} without its weight and bias over {dim}"
    if abs(norm.eps - eps) > 1e-12:
        return f"a LayerNorm with eps={norm.eps} where the first block's has {eps}"
    return None


def _block_problem(block, dim, heads, mlp_dim, eps):
    """None when the block is ViTBackbone's pre-norm block, else (sub-module, what differs)."""
    if kind(block) != "Block":
        return "", f"is a {kind(block)}; ViTBackbone's blocks are timm's pre-norm Block"
    for name in ("norm1", "norm2"):
        reason = _layer_norm_problem(getattr(block, name, None), dim, eps)
        if reason:
            return f".{name}", f"is {reason}"
    for name in ("ls1", "ls2"):
        if not is_identity(getattr(block, name, None)):
            return f".{name}", f"is a {kind(getattr(block, name))} (layer scale, init_values)"
    attn = getattr(block, "attn", None)
    if kind(attn) != "Attention":
        return ".attn", f"is a {kind(attn)}, not timm's Attention"
    if int(attn.num_heads) != heads or int(getattr(attn, "head_dim", dim // heads)) * heads != dim:
        return ".attn", f"has {attn.num_heads} heads of {getattr(attn, 'head_dim', '?')} for embed_dim={dim}"
    if linear_size(getattr(attn, "qkv", None)) != (dim, 3 * dim):
        return ".attn.qkv", "is not a Linear(embed_dim, 3 * embed_dim) with a bias (qkv_bias=False?)"
    if linear_size(getattr(attn, "proj", None)) != (dim, dim):
        return ".attn.proj", "is not a Linear(embed_dim, embed_dim) with a bias"
    for name in ("q_norm", "k_norm", "norm"):
        if not is_identity(getattr(attn, name, None)):
            return f".attn.{name}", f"is a {kind(getattr(attn, name))} (qk_norm / scale_attn_norm)"
    if getattr(attn, "gate", None) is not None:
        return ".attn", "has a gate (gated attention)"
    mlp = getattr(block, "mlp", None)
    if kind(mlp) != "Mlp":
        return ".mlp", f"is a {kind(mlp)}, not timm's Mlp"
    if linear_size(getattr(mlp, "fc1", None)) != (dim, mlp_dim) or linear_size(getattr(mlp, "fc2", None)) != (
        mlp_dim, dim
    ):
        return ".mlp", f"is not Linear({dim}, {mlp_dim}) -> Linear({mlp_dim}, {dim}) with biases, as the first block's"
    act = getattr(mlp, "act", None)
    if kind(act) != "GELU" or getattr(act, "approximate", "none") != "none":
        return ".mlp.act", f"is {act!r}; ViTBackbone's MLP has the exact GELU"
    if not is_identity(getattr(mlp, "norm", None)):
        return ".mlp.norm", f"is a {kind(mlp.norm)} (scale_mlp_norm)"
    return None
