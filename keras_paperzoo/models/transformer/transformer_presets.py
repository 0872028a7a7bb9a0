"""Named Transformer configurations: plain dicts of `TransformerBackbone` arguments.

`transformer_base` and `transformer_big` are Table 3 of Vaswani et al. 2017 with the
WMT14 EN-DE shared BPE vocabulary of about 37,000 tokens (Sec. 5.1); the paper reports
65M and 213M parameters, this code counts 63,082,496 and 214,245,376 at exactly 37,000
tokens (shared source/target/output embedding, no output bias). The CPU sizes keep the
paper's shape (post-norm, d_ff = 4 d_model, d_k = 64 or 32) at fewer layers and a smaller
vocabulary; the recipe replaces `vocabulary_size` with the size of the vocabulary it
learns.
"""


def _preset(description, num_layers, hidden_dim, intermediate_dim, num_heads, dropout, vocabulary_size):
    return {
        "description": description,
        "config": {
            "vocabulary_size": vocabulary_size,
            "num_layers": num_layers,
            "hidden_dim": hidden_dim,
            "intermediate_dim": intermediate_dim,
            "num_heads": num_heads,
            "dropout": dropout,
        },
    }


PAPER_VOCABULARY_SIZE = 37000

TRANSFORMER_PRESETS = {
    "transformer_base": _preset(
        "Transformer base (Table 3): N=6, d_model 512, d_ff 2048, h 8, P_drop 0.1, 37k shared vocabulary; 63.1M (paper: 65M).",
        6, 512, 2048, 8, 0.1, PAPER_VOCABULARY_SIZE,
    ),
    "transformer_big": _preset(
        "Transformer big (Table 3): N=6, d_model 1024, d_ff 4096, h 16, P_drop 0.3, 37k shared vocabulary; 214.2M (paper: 213M).",
        6, 1024, 4096, 16, 0.3, PAPER_VOCABULARY_SIZE,
    ),
    "transformer_small": _preset(
        "CPU size for Multi30k: N=3, d_model 256, d_ff 1024, h 4, P_drop 0.1, 8k vocabulary.",
        3, 256, 1024, 4, 0.1, 8000,
    ),
    "transformer_tiny": _preset(
        "CPU size for minutes-long runs: N=2, d_model 128, d_ff 512, h 4, P_drop 0.1, 4k vocabulary.",
        2, 128, 512, 4, 0.1, 4000,
    ),
}
