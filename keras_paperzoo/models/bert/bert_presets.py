"""Named BERT configurations: plain dicts of `BertBackbone` arguments.

`bert_base` and `bert_large` are the paper's BERT_BASE (L=12, H=768, A=12, 110M) and
BERT_LARGE (L=24, H=1024, A=16, 340M) (Devlin et al. 2019, Sec. 3), with the 30,522-token
uncased WordPiece vocabulary, 512 positions and a 4H feed-forward. The small sizes follow
the names of Turc et al. 2019 ("Well-Read Students Learn Better", the official compact
BERTs): tiny L=2/H=128, mini L=4/H=256, small L=4/H=512, medium L=8/H=512, with A = H/64.
"""

BERT_VOCABULARY_SIZE = 30522  # bert-base-uncased's WordPiece vocabulary


def _preset(description, num_layers, hidden_dim, num_heads):
    return {
        "description": description,
        "config": {
            "vocabulary_size": BERT_VOCABULARY_SIZE,
            "num_layers": num_layers,
            "num_heads": num_heads,
            "hidden_dim": hidden_dim,
            "intermediate_dim": 4 * hidden_dim,
            "max_sequence_length": 512,
        },
    }


BERT_PRESETS = {
    "bert_tiny": _preset("BERT-Tiny (Turc et al. 2019): L=2, H=128, A=2; 4.4M.", 2, 128, 2),
    "bert_mini": _preset("BERT-Mini (Turc et al. 2019): L=4, H=256, A=4; 11.2M.", 4, 256, 4),
    "bert_small": _preset("BERT-Small (Turc et al. 2019): L=4, H=512, A=8; 28.8M.", 4, 512, 8),
    "bert_medium": _preset("BERT-Medium (Turc et al. 2019): L=8, H=512, A=8; 41.4M.", 8, 512, 8),
    "bert_base": _preset("BERT_BASE (Sec. 3): L=12, H=768, A=12; 109,482,240 (the paper's 110M).", 12, 768, 12),
    "bert_large": _preset("BERT_LARGE (Sec. 3): L=24, H=1024, A=16; 335,141,888 (the paper's 340M).", 24, 1024, 16),
}


def bert_parameter_count(vocabulary_size, num_layers, hidden_dim, intermediate_dim, max_sequence_length=512,
                         num_segments=2, **_):
    """Parameters of a `BertBackbone` (pooler included), from its configuration alone.

    Embeddings (V + P + S) H + LayerNorm 2H; per layer: attention 4(H^2 + H), LayerNorm 2H,
    feed-forward 2 H I + I + H, LayerNorm 2H; pooler H^2 + H.

    Example: `bert_parameter_count(**BERT_PRESETS["bert_large"]["config"])` is 335,141,888.
    """
    h, i = hidden_dim, intermediate_dim
    embeddings = (vocabulary_size + max_sequence_length + num_segments) * h + 2 * h
    layer = 4 * (h * h + h) + 2 * h + (2 * h * i + i + h) + 2 * h
    return embeddings + num_layers * layer + h * h + h
