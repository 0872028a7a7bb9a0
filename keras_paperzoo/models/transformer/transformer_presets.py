"""Named Transformer configurations: plain dicts of `TransformerBackbone` arguments.

`transformer_base` and `transformer_big` are Table 3 of Vaswani et al. 2017 with the
WMT14 EN-DE shared BPE vocabulary of about 37,000 tokens (Sec. 5.1); the paper reports
65M and 213M parameters, this code counts 63,082,496 and 214,245,376 at exactly 37,000
tokens (shared source/target/output embedding, no output bias). The CPU sizes keep the
paper's shape (post-norm, d_ff = 4 d_model, d_k = 64 or 32) at fewer layers and a smaller
vocabulary; the recipe replaces `vocabulary_size` with the size of the vocabulary it
learns.
"""

from keras_paperzoo.models.common_presets import backbone_preset

PAPER_VOCABULARY_SIZE = 37000

TRANSFORMER_PRESETS = {
    "transformer_base": backbone_preset(
        "Transformer base (Table 3): N=6, d_model 512, d_ff 2048, h 8, P_drop 0.1, 37k shared vocabulary; 63.1M (paper: 65M).",
        vocabulary_size=PAPER_VOCABULARY_SIZE, num_layers=6, hidden_dim=512, intermediate_dim=2048, num_heads=8,
        dropout=0.1,
    ),
    "transformer_big": backbone_preset(
        "Transformer big (Table 3): N=6, d_model 1024, d_ff 4096, h 16, P_drop 0.3, 37k shared vocabulary; 214.2M (paper: 213M).",
        vocabulary_size=PAPER_VOCABULARY_SIZE, num_layers=6, hidden_dim=1024, intermediate_dim=4096, num_heads=16,
        dropout=0.3,
    ),
    "transformer_small": backbone_preset(
        "CPU size for Multi30k: N=3, d_model 256, d_ff 1024, h 4, P_drop 0.1, 8k vocabulary.",
        vocabulary_size=8000, num_layers=3, hidden_dim=256, intermediate_dim=1024, num_heads=4, dropout=0.1,
    ),
    "transformer_tiny": backbone_preset(
        "CPU size for minutes-long runs: N=2, d_model 128, d_ff 512, h 4, P_drop 0.1, 4k vocabulary.",
        vocabulary_size=4000, num_layers=2, hidden_dim=128, intermediate_dim=512, num_heads=4, dropout=0.1,
    ),
}
