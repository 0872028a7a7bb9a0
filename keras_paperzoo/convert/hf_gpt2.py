"""Hugging Face GPT-2 checkpoints (`GPT2Model`, `GPT2LMHeadModel`) as a `GPTBackbone`.

The reader of `keras_paperzoo.convert.hf.from_transformers` for `model_type` "gpt2":

```python
from keras_paperzoo.convert.hf import from_transformers
from keras_paperzoo.models.gpt import GPTCausalLM

backbone, tokenizer = from_transformers("/path/to/gpt2", return_tokenizer=True)
lm = GPTCausalLM(backbone, tokenizer=tokenizer)
lm.generate("The meaning of life is", max_length=40, sampler="top_p")
```

Name mapping (HF's `Conv1D` stores (in, out) matrices, the Keras layout already):

| HF | `GPTBackbone` |
|---|---|
| `wte.weight` (V, D) | `token_embedding.embeddings` (also the tied LM head, `lm_head.weight`) |
| `wpe.weight` (P, D) | `position_embedding.position_embeddings` |
| `h.i.ln_1`, `h.i.ln_2` | block i `_self_attention_layer_norm`, `_feedforward_layer_norm` |
| `h.i.attn.c_attn` (D, 3D) | q, k, v kernels (D, heads, head_dim), split in that order |
| `h.i.attn.c_proj` (D, D) | attention output kernel (heads, head_dim, D) |
| `h.i.mlp.c_fc`, `h.i.mlp.c_proj` | `_feedforward_intermediate_dense`, `_feedforward_output_dense` |
| `ln_f` | `layer_norm` |

Only the standard GPT-2 architecture is accepted ("gelu_new" activation, attention
scaled by 1/sqrt(head_dim), no per-layer scaling); anything else is a ValueError
naming the setting. With `vocab.json` and `merges.txt` in the checkpoint folder the
tokenizer is keras-hub's byte-level BPE (`GPT2Tokenizer` when the vocabulary has
"<|endoftext|>", else `BytePairTokenizer`).
"""

import os

import numpy as np

from keras_paperzoo.convert.hf import strip_prefix, take

SUPPORTED_ACTIVATIONS = ("gelu_new", "gelu_pytorch_tanh")  # both the tanh-form GELU


def gpt2_config_from_hf(config):
    """`GPTBackbone` arguments of a HF GPT-2 config dict (unsupported variants are refused)."""
    activation = config.get("activation_function", "gelu_new")
    if activation not in SUPPORTED_ACTIVATIONS:
        raise ValueError(
            f"GPT-2 checkpoint activation_function {activation!r} is not supported; GPTBackbone uses the "
            f"tanh-form GELU ({', '.join(SUPPORTED_ACTIVATIONS)})."
        )
    for flag, expected in (("scale_attn_weights", True), ("scale_attn_by_inverse_layer_idx", False),
                           ("reorder_and_upcast_attn", False), ("add_cross_attention", False)):
        if config.get(flag, expected) != expected:
            raise ValueError(f"GPT-2 checkpoint setting {flag}={config[flag]!r} is not supported (GPTBackbone: {expected}).")
    hidden = int(config["n_embd"])
    return {
        "vocabulary_size": int(config["vocab_size"]),
        "num_layers": int(config["n_layer"]),
        "hidden_dim": hidden,
        "num_heads": int(config["n_head"]),
        "intermediate_dim": int(config.get("n_inner") or 4 * hidden),
        "max_sequence_length": int(config["n_positions"]),
        "dropout": float(config.get("resid_pdrop", 0.1)),
        "norm_first": True,
        "layer_norm_epsilon": float(config.get("layer_norm_epsilon", 1e-5)),
    }


def gpt2_from_hf(config, weights, checkpoint_dir=None):
    """(GPTBackbone with the checkpoint's weights, tokenizer or None): the `from_transformers` reader for "gpt2"."""
    from keras_paperzoo.models.gpt.gpt_backbone import GPTBackbone

    args = gpt2_config_from_hf(config)
    weights = strip_prefix(weights, ("transformer.",))
    backbone = GPTBackbone(**args)
    _assign_weights(backbone, weights, args)
    return backbone, _tokenizer(checkpoint_dir)


def _assign_weights(backbone, weights, args):
    d, f, heads, p = args["hidden_dim"], args["intermediate_dim"], args["num_heads"], args["max_sequence_length"]
    hd = d // heads

    def get(name, shape):
        return take(weights, name, shape, source="GPT-2 checkpoint")

    def layer_norm(layer, prefix):
        layer.gamma.assign(get(f"{prefix}.weight", (d,)))
        layer.beta.assign(get(f"{prefix}.bias", (d,)))

    backbone.token_embedding.embeddings.assign(get("wte.weight", (args["vocabulary_size"], d)))
    backbone.position_embedding.position_embeddings.assign(get("wpe.weight", (p, d)))
    for i, block in enumerate(backbone.transformer_layers):
        prefix = f"h.{i}"
        attention = block._self_attention_layer
        layer_norm(block._self_attention_layer_norm, f"{prefix}.ln_1")
        layer_norm(block._feedforward_layer_norm, f"{prefix}.ln_2")
        qkv = get(f"{prefix}.attn.c_attn.weight", (d, 3 * d))  # (D, 3D): [q | k | v]
        qkv_bias = get(f"{prefix}.attn.c_attn.bias", (3 * d,))
        for j, dense in enumerate((attention._query_dense, attention._key_dense, attention._value_dense)):
            dense.kernel.assign(qkv[:, j * d:(j + 1) * d].reshape(d, heads, hd))  # (D, heads, head_dim)
            dense.bias.assign(qkv_bias[j * d:(j + 1) * d].reshape(heads, hd))
        attention._output_dense.kernel.assign(get(f"{prefix}.attn.c_proj.weight", (d, d)).reshape(heads, hd, d))
        attention._output_dense.bias.assign(get(f"{prefix}.attn.c_proj.bias", (d,)))
        block._feedforward_intermediate_dense.kernel.assign(get(f"{prefix}.mlp.c_fc.weight", (d, f)))
        block._feedforward_intermediate_dense.bias.assign(get(f"{prefix}.mlp.c_fc.bias", (f,)))
        block._feedforward_output_dense.kernel.assign(get(f"{prefix}.mlp.c_proj.weight", (f, d)))
        block._feedforward_output_dense.bias.assign(get(f"{prefix}.mlp.c_proj.bias", (d,)))
    layer_norm(backbone.layer_norm, "ln_f")
    if "lm_head.weight" in weights and not np.array_equal(weights["lm_head.weight"], weights["wte.weight"]):
        raise ValueError("The GPT-2 checkpoint's lm_head.weight differs from wte.weight; GPTBackbone ties them.")


def _tokenizer(checkpoint_dir):
    """keras-hub byte-level BPE from the folder's vocab.json + merges.txt, or None."""
    if checkpoint_dir is None:
        return None
    vocabulary = os.path.join(checkpoint_dir, "vocab.json")
    merges = os.path.join(checkpoint_dir, "merges.txt")
    if not (os.path.isfile(vocabulary) and os.path.isfile(merges)):
        return None
    import json

    import keras_hub

    with open(vocabulary, encoding="utf-8") as file:
        has_end_token = "<|endoftext|>" in json.load(file)
    if has_end_token:
        return keras_hub.models.GPT2Tokenizer(vocabulary=vocabulary, merges=merges)
    return keras_hub.tokenizers.BytePairTokenizer(vocabulary=vocabulary, merges=merges)
