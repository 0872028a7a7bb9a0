"""Hugging Face BERT checkpoints (`model_type` "bert") as `BertBackbone`: the reader behind `from_transformers`.

HF's `BertModel` is the reference BERT: the same embeddings (word + position +
token type, LayerNorm), post-norm layers and tanh pooler, so every weight maps one to
one (Linear weights transposed, attention projections reshaped per head). What cannot
be expressed is refused: relative position embeddings (`position_embedding_type` other
than "absolute"), decoder / cross-attention configurations and activations other than
GELU (exact or tanh) and ReLU. Dropout rates are copied from `hidden_dropout_prob`
(`BertBackbone` has one rate for every place; it does not change inference).
"""

import json
import os

from keras_paperzoo.convert.hf import strip_prefix, take
from keras_paperzoo.models.bert.bert_backbone import BertBackbone

HF_ACTIVATIONS = {
    "gelu": "gelu",
    "gelu_new": "gelu_approximate",
    "gelu_pytorch_tanh": "gelu_approximate",
    "relu": "relu",
}
HEAD_PREFIXES = ("bert.",)


def bert_config_from_hf(config):
    """`BertBackbone` arguments from a HF BERT `config.json` dict; ValueError for what BERT cannot express."""
    activation = config.get("hidden_act", "gelu")
    if activation not in HF_ACTIVATIONS:
        raise ValueError(
            f"BERT hidden_act {activation!r} is not supported; supported: {', '.join(sorted(HF_ACTIVATIONS))}."
        )
    position_type = config.get("position_embedding_type", "absolute")
    if position_type != "absolute":
        raise ValueError(
            f"BERT position_embedding_type {position_type!r} is not supported; BertBackbone has the paper's "
            "learned absolute positions ('absolute')."
        )
    if config.get("is_decoder") or config.get("add_cross_attention"):
        raise ValueError("A BERT decoder (is_decoder / add_cross_attention) is not supported; BertBackbone is the encoder.")
    return {
        "vocabulary_size": int(config["vocab_size"]),
        "num_layers": int(config["num_hidden_layers"]),
        "num_heads": int(config["num_attention_heads"]),
        "hidden_dim": int(config["hidden_size"]),
        "intermediate_dim": int(config["intermediate_size"]),
        "dropout": float(config.get("hidden_dropout_prob", 0.1)),
        "max_sequence_length": int(config.get("max_position_embeddings", 512)),
        "num_segments": int(config.get("type_vocab_size", 2)),
        "activation": HF_ACTIVATIONS[activation],
        "layer_norm_epsilon": float(config.get("layer_norm_eps", 1e-12)),
    }


def _standard_names(weights):
    """Old TF-converted checkpoints name LayerNorm parameters gamma / beta; transformers renames them weight / bias."""
    renamed = {}
    for name, value in weights.items():
        if ".LayerNorm." in name or name.startswith("LayerNorm."):
            name = name.replace(".gamma", ".weight").replace(".beta", ".bias")
        renamed[name] = value
    return renamed


def bert_from_hf(config, weights, checkpoint_dir=None):
    """A `BertBackbone` with the HF BERT weights, and a `BertTokenizer` when `checkpoint_dir` has vocab.txt.

    Args:
        config: the HF config dict (`config.json`).
        weights: {HF state-dict name: float32 numpy array}, with or without the "bert."
            prefix of head models (their `cls.*` head weights are ignored).
        checkpoint_dir: the checkpoint folder or None.

    Returns:
        (backbone, tokenizer or None). The tokenizer is
        `keras_hub.models.BertTokenizer(vocab.txt, lowercase=do_lower_case)`
        (`tokenizer_config.json`'s flag, True when absent, as for the uncased models).
    """
    backbone = BertBackbone(**bert_config_from_hf(config))
    weights = _standard_names(strip_prefix(weights, HEAD_PREFIXES))
    _assign_weights(backbone, weights)
    return backbone, _tokenizer(checkpoint_dir)


def _assign_weights(backbone, weights):
    h, heads = backbone.hidden_dim, backbone.num_heads
    head_dim = h // heads

    def get(name, shape):
        return take(weights, name, shape, source="BERT checkpoint")

    def dense(layer, prefix, n_in, n_out):
        layer.kernel.assign(get(f"{prefix}.weight", (n_out, n_in)).T)  # torch Linear (out, in) -> (in, out)
        layer.bias.assign(get(f"{prefix}.bias", (n_out,)))

    def layer_norm(layer, prefix):
        layer.gamma.assign(get(f"{prefix}.weight", (h,)))
        layer.beta.assign(get(f"{prefix}.bias", (h,)))

    backbone.token_embedding.embeddings.assign(get("embeddings.word_embeddings.weight", (backbone.vocabulary_size, h)))
    backbone.position_embedding.position_embeddings.assign(
        get("embeddings.position_embeddings.weight", (backbone.max_sequence_length, h))
    )
    backbone.segment_embedding.embeddings.assign(get("embeddings.token_type_embeddings.weight", (backbone.num_segments, h)))
    layer_norm(backbone.embeddings_layer_norm, "embeddings.LayerNorm")
    for i, block in enumerate(backbone.transformer_layers):
        prefix = f"encoder.layer.{i}"
        attention = block._self_attention_layer
        for part, projection in (("query", attention.query_dense), ("key", attention.key_dense), ("value", attention.value_dense)):
            kernel = get(f"{prefix}.attention.self.{part}.weight", (h, h))
            projection.kernel.assign(kernel.T.reshape(h, heads, head_dim))  # (D, heads, head_dim)
            projection.bias.assign(get(f"{prefix}.attention.self.{part}.bias", (h,)).reshape(heads, head_dim))
        kernel = get(f"{prefix}.attention.output.dense.weight", (h, h))
        attention.output_dense.kernel.assign(kernel.T.reshape(heads, head_dim, h))  # (heads, head_dim, D)
        attention.output_dense.bias.assign(get(f"{prefix}.attention.output.dense.bias", (h,)))
        layer_norm(block._self_attention_layer_norm, f"{prefix}.attention.output.LayerNorm")
        dense(block._feedforward_intermediate_dense, f"{prefix}.intermediate.dense", h, backbone.intermediate_dim)
        dense(block._feedforward_output_dense, f"{prefix}.output.dense", backbone.intermediate_dim, h)
        layer_norm(block._feedforward_layer_norm, f"{prefix}.output.LayerNorm")
    # BertForMaskedLM and friends are built with add_pooling_layer=False: then the pooler
    # keeps its initialisation, as when transformers loads them into a BertModel.
    if "pooler.dense.weight" in weights:
        dense(backbone.pooled_dense, "pooler.dense", h, h)


def _tokenizer(checkpoint_dir):
    if checkpoint_dir is None:
        return None
    vocabulary = os.path.join(checkpoint_dir, "vocab.txt")
    if not os.path.isfile(vocabulary):
        return None
    lowercase = True
    settings = os.path.join(checkpoint_dir, "tokenizer_config.json")
    if os.path.isfile(settings):
        with open(settings) as f:
            lowercase = bool(json.load(f).get("do_lower_case", True))
    import keras_hub

    return keras_hub.models.BertTokenizer(vocabulary=vocabulary, lowercase=lowercase)
