"""Hugging Face BEiT checkpoints (`model_type` "beit") as `BEiTBackbone`: the reader behind `from_transformers`.

`transformers.BeitModel` holds the released BEiT weights (`microsoft/beit-base-patch16-224`,
`-pt22k`, `-large-...`) in the official code's layout. Name map (transformers 5 names ->
ours; the Hub checkpoints' older names, `encoder.layer.i.attention.attention.query`,
`intermediate.dense`, ..., are renamed to these first; torch Linear weights are
(out, in), Keras kernels (in, out)):

    embeddings.patch_embeddings.projection (D, C, P, P) OIHW -> patch_embedding/projection (P, P, C, D) HWIO
    embeddings.cls_token, embeddings.mask_token (1, 1, D)   -> class_token/token, mask_embedding/token
    embeddings.position_embeddings (1, 1 + N, D)            -> position_embedding/embeddings (1 + N, D)
    layers.i.layernorm_before / layernorm_after             -> transformer_block_i/attention_norm / mlp_norm
    layers.i.attention.{q,k,v}_proj                         -> attention q/k/v (D, heads, head_dim); HF's key
                                                               has no bias: ours is set to zero
    layers.i.relative_position_bias.relative_position_bias_table
                                                            -> attention/relative_position_bias table, rows
                                                               reordered (see below)
    shared_position_bias.relative_position_bias_table       -> copied into every layer's table
    layers.i.attention.o_proj                               -> attention output (heads, head_dim, D)
    layers.i.mlp.fc1 / mlp.fc2                              -> mlp_dense_1 / mlp_dense_2
    layers.i.lambda_1 / lambda_2 (LayerScale)               -> attention_layer_scale / mlp_layer_scale
    layernorm (use_mean_pooling=False)                      -> encoder_norm
    pooler.layernorm (use_mean_pooling=True)                -> pooled_norm

The relative-position table has the same rows in another order: HF (and the official
code) index the three class-token rows last (E-3 cls->patch, E-2 patch->cls, E-1
cls->cls), ours first (`relative_position_index`); the reorder is read off the two
index matrices, position pair by position pair, so every (i, j) gets the bias it had.

Then `backbone(images)` equals HF's `pooler_output` for a mean-pooling model (the
fine-tuned checkpoints) and `backbone.encode(images, mask)` equals `last_hidden_state`
for a model with a final LayerNorm (the pre-trained ones, `bool_masked_pos=mask`).
A head model's "beit." prefix is stripped and its head ignored. What `BEiTBackbone`
cannot express is refused in one line (`beit_config_from_hf`): an activation other
than the exact GELU, non-square patches. `layer_norm_eps` is copied (HF's configs say
1e-12, the official code 1e-6).
"""

import re

import numpy as np

from keras_paperzoo.convert.hf import strip_prefix, take
from keras_paperzoo.models.beit.beit_backbone import BEiTBackbone

HEAD_PREFIXES = ("beit.",)
# The Hub checkpoints' (transformers 4) names -> transformers 5's, in this order.
OLD_NAMES = (
    (r"^encoder\.layer\.(\d+)\.", r"layers.\1."),
    (r"^encoder\.relative_position_bias\.", "shared_position_bias."),
    (r"\.attention\.attention\.relative_position_bias\.", ".relative_position_bias."),
    (r"\.attention\.attention\.query\.", ".attention.q_proj."),
    (r"\.attention\.attention\.key\.", ".attention.k_proj."),
    (r"\.attention\.attention\.value\.", ".attention.v_proj."),
    (r"\.attention\.output\.dense\.", ".attention.o_proj."),
    (r"\.intermediate\.dense\.", ".mlp.fc1."),
    (r"\.output\.dense\.", ".mlp.fc2."),
)


def modern_names(weights):
    """The weights under transformers 5's names (a Hub checkpoint's older names renamed; new ones kept)."""
    renamed = {}
    for name, value in weights.items():
        for pattern, replacement in OLD_NAMES:
            name = re.sub(pattern, replacement, name)
        renamed[name] = value
    return renamed


def beit_config_from_hf(config):
    """`BEiTBackbone` arguments from a HF BEiT `config.json` dict; ValueError for what it cannot express."""
    if config.get("hidden_act", "gelu") != "gelu":
        raise ValueError(f"BEiT hidden_act {config.get('hidden_act')!r} is not supported; BEiTBackbone has the exact GELU ('gelu').")
    image_size = config.get("image_size", 224)
    height, width = (image_size, image_size) if isinstance(image_size, int) else tuple(image_size)
    patch_size = config.get("patch_size", 16)
    if not isinstance(patch_size, int):
        raise ValueError(f"BEiT patch_size {patch_size!r} is not supported; BEiTBackbone takes square patches (an int).")
    layer_scale = config.get("layer_scale_init_value", 0.1)
    relative = bool(config.get("use_relative_position_bias", False) or config.get("use_shared_relative_position_bias", False))
    return {
        "patch_size": int(patch_size),
        "num_layers": int(config["num_hidden_layers"]),
        "hidden_dim": int(config["hidden_size"]),
        "num_heads": int(config["num_attention_heads"]),
        "mlp_dim": int(config["intermediate_size"]),
        "image_shape": (int(height), int(width), int(config.get("num_channels", 3))),
        "dropout_rate": float(config.get("hidden_dropout_prob", 0.0)),
        "attention_dropout": float(config.get("attention_probs_dropout_prob", 0.0)),
        "drop_path_rate": float(config.get("drop_path_rate", 0.1)),
        "layer_scale_init": float(layer_scale) if layer_scale and layer_scale > 0 else None,
        "use_relative_position_bias": relative,
        "use_absolute_position_embedding": bool(config.get("use_absolute_position_embeddings", False)),
        "layer_norm_epsilon": float(config.get("layer_norm_eps", 1e-12)),
    }


def hf_relative_position_index(grid_size):
    """The official / HF (1 + N, 1 + N) index into a ((2h-1)(2w-1) + 3)-row table (class-token rows last)."""
    h, w = grid_size
    coords = np.stack(np.meshgrid(np.arange(h), np.arange(w), indexing="ij")).reshape(2, -1)  # (2, N)
    relative = (coords[:, :, None] - coords[:, None, :]).transpose(1, 2, 0)  # (N, N, 2): (dr, dc)
    relative = relative + np.array([h - 1, w - 1])
    patch_index = relative[..., 0] * (2 * w - 1) + relative[..., 1]  # (N, N)
    size = (2 * h - 1) * (2 * w - 1) + 3
    index = np.zeros((h * w + 1, h * w + 1), "int64")
    index[1:, 1:] = patch_index
    index[0, :] = size - 3  # cls -> patch
    index[:, 0] = size - 2  # patch -> cls
    index[0, 0] = size - 1  # cls -> cls
    return index


def relative_table_from_hf(table, grid_size):
    """An HF / official ((2h-1)(2w-1) + 3, heads) table in our row order (`RelativePositionBias`)."""
    from keras_paperzoo.layers.position_embedding import relative_position_index

    ours, size = relative_position_index(grid_size, 1, "2d")
    theirs = hf_relative_position_index(grid_size)
    order = np.zeros(size, "int64")
    order[ours.reshape(-1)] = theirs.reshape(-1)  # our row e <- their row at the same (i, j)
    return np.asarray(table)[order]


def beit_from_hf(config, weights, checkpoint_dir=None):
    """A `BEiTBackbone` with the HF BEiT weights (no tokenizer: BEiT reads pixels). Returns (backbone, None)."""
    arguments = beit_config_from_hf(config)
    backbone = BEiTBackbone(**arguments)
    weights = modern_names(strip_prefix(weights, HEAD_PREFIXES))
    _assign_weights(backbone, weights, shared=bool(config.get("use_shared_relative_position_bias", False)))
    return backbone, None


def _assign_weights(backbone, weights, shared):
    d, heads = backbone.hidden_dim, backbone.num_heads
    head_dim = d // heads
    p, channels = backbone.patch_size, backbone.image_shape[2]

    def get(name, shape):
        return take(weights, name, shape, source="BEiT checkpoint")

    def dense(layer, prefix, n_in, n_out):
        layer.kernel.assign(get(f"{prefix}.weight", (n_out, n_in)).T)  # torch Linear (out, in) -> (in, out)
        layer.bias.assign(get(f"{prefix}.bias", (n_out,)))

    def layer_norm(layer, prefix):
        layer.gamma.assign(get(f"{prefix}.weight", (d,)))
        layer.beta.assign(get(f"{prefix}.bias", (d,)))

    projection = backbone.patch_embedding.projection
    projection.kernel.assign(get("embeddings.patch_embeddings.projection.weight", (d, channels, p, p)).transpose(2, 3, 1, 0))
    projection.bias.assign(get("embeddings.patch_embeddings.projection.bias", (d,)))
    backbone.class_token.token.assign(get("embeddings.cls_token", (1, 1, d)))
    if "embeddings.mask_token" in weights:  # pre-trained checkpoints; fine-tuned ones have none
        backbone.mask_embedding.token.assign(get("embeddings.mask_token", (1, 1, d)))
    if backbone.position_layer is not None:
        table = get("embeddings.position_embeddings", (1, backbone.sequence_length, d))
        backbone.position_layer.embeddings.assign(table[0])
    size = (2 * backbone.grid_size[0] - 1) * (2 * backbone.grid_size[1] - 1) + 3
    for i, block in enumerate(backbone.transformer_blocks):
        prefix = f"layers.{i}"
        attention = block.attention
        for part, projection in (("q", attention._query_dense), ("k", attention._key_dense),
                                 ("v", attention._value_dense)):
            kernel = get(f"{prefix}.attention.{part}_proj.weight", (d, d))
            projection.kernel.assign(kernel.T.reshape(d, heads, head_dim))  # (D, heads, head_dim)
            name = f"{prefix}.attention.{part}_proj.bias"
            bias = get(name, (d,)) if part != "k" or name in weights else np.zeros(d, "float32")
            projection.bias.assign(bias.reshape(heads, head_dim))
        kernel = get(f"{prefix}.attention.o_proj.weight", (d, d))
        attention._output_dense.kernel.assign(kernel.T.reshape(heads, head_dim, d))  # (heads, head_dim, D)
        attention._output_dense.bias.assign(get(f"{prefix}.attention.o_proj.bias", (d,)))
        if backbone.use_relative_position_bias:
            name = ("shared_position_bias" if shared
                    else f"{prefix}.relative_position_bias") + ".relative_position_bias_table"
            attention.relative_position_bias.table.assign(relative_table_from_hf(get(name, (size, heads)),
                                                                                 backbone.grid_size))
        layer_norm(block.attention_norm, f"{prefix}.layernorm_before")
        layer_norm(block.mlp_norm, f"{prefix}.layernorm_after")
        dense(block.mlp_dense_1, f"{prefix}.mlp.fc1", d, backbone.mlp_dim)
        dense(block.mlp_dense_2, f"{prefix}.mlp.fc2", backbone.mlp_dim, d)
        if backbone.layer_scale_init is not None:
            block.attention_scale.assign(get(f"{prefix}.lambda_1", (d,)))
            block.mlp_scale.assign(get(f"{prefix}.lambda_2", (d,)))
    if "layernorm.weight" in weights:
        layer_norm(backbone.encoder_norm, "layernorm")
    if "pooler.layernorm.weight" in weights:
        layer_norm(backbone.pooled_norm, "pooler.layernorm")
