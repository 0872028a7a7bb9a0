"""Named GPT configurations: plain dicts of `GPTBackbone` arguments.

- `gpt1`: Radford et al. 2018, Sec. 4.1 "Model specifications": 12-layer decoder,
  768 wide, 12 heads, 3072 inner, learned positions, context 512, the 40,478-token
  BPE vocabulary of the released model (40,000 merges + 478 base symbols), post-norm
  blocks (the original Transformer's), dropout 0.1. 116,534,784 parameters (the
  paper's "117M"), the same as `transformers.OpenAIGPTModel(OpenAIGPTConfig())`.
- `gpt2_*`: Radford et al. 2019, Sec. 2.3 and Table 2: pre-norm blocks with a final
  LayerNorm, residual projections initialised with 1/sqrt(N), context 1024, byte-level
  BPE of 50,257 tokens. Table 2's sizes are "117M / 345M / 762M / 1542M"; the
  released checkpoints (and these presets, tied input/output embedding, 1024
  positions) have 124,439,808 / 354,823,168 / 774,030,080 / 1,557,611,200. The
  paper's column is known not to match the released models exactly (the smallest is
  listed like GPT-1's 117M although its vocabulary and context are larger); the
  exact counts are those of `transformers.GPT2Model(GPT2Config(...))`.
- `gpt_char_shakespeare`: nanoGPT's `shakespeare_char` configuration (6 layers, 384
  wide, 6 heads, context 256, dropout 0.2), the model behind the published
  character-level Tiny Shakespeare validation loss of 1.47; pre-norm (GPT-2 style).
- `gpt_char_tiny`: a CPU-sized character model (4 layers, 128 wide, context 128).

The vocabulary size of the character presets is a placeholder (65, Tiny
Shakespeare's distinct characters); pass `vocabulary_size=` for other text.
"""


def _preset(description, **config):
    return {"description": description, "config": config}


def _gpt2(description, num_layers, hidden_dim, num_heads):
    return _preset(
        description,
        vocabulary_size=50257,
        num_layers=num_layers,
        hidden_dim=hidden_dim,
        num_heads=num_heads,
        intermediate_dim=4 * hidden_dim,
        max_sequence_length=1024,
        dropout=0.1,
        norm_first=True,
    )


GPT_PRESETS = {
    "gpt1": _preset(
        "GPT-1 (Radford et al. 2018): 12 layers, 768, 12 heads, 3072, post-norm, context 512, "
        "40,478 BPE tokens; 116,534,784 parameters.",
        vocabulary_size=40478,
        num_layers=12,
        hidden_dim=768,
        num_heads=12,
        intermediate_dim=3072,
        max_sequence_length=512,
        dropout=0.1,
        norm_first=False,
    ),
    "gpt2_small": _gpt2("GPT-2 117M (Table 2; 124,439,808 as released): 12 layers, 768, 12 heads.", 12, 768, 12),
    "gpt2_medium": _gpt2("GPT-2 345M (Table 2; 354,823,168 as released): 24 layers, 1024, 16 heads.", 24, 1024, 16),
    "gpt2_large": _gpt2("GPT-2 762M (Table 2; 774,030,080 as released): 36 layers, 1280, 20 heads.", 36, 1280, 20),
    "gpt2_xl": _gpt2("GPT-2 1542M (Table 2; 1,557,611,200 as released): 48 layers, 1600, 25 heads.", 48, 1600, 25),
    "gpt_char_shakespeare": _preset(
        "nanoGPT shakespeare_char: 6 layers, 384, 6 heads, context 256, dropout 0.2 (published val loss 1.47).",
        vocabulary_size=65,
        num_layers=6,
        hidden_dim=384,
        num_heads=6,
        intermediate_dim=1536,
        max_sequence_length=256,
        dropout=0.2,
        norm_first=True,
    ),
    "gpt_char_tiny": _preset(
        "CPU-sized character model: 4 layers, 128, 4 heads, context 128, dropout 0.1.",
        vocabulary_size=65,
        num_layers=4,
        hidden_dim=128,
        num_heads=4,
        intermediate_dim=512,
        max_sequence_length=128,
        dropout=0.1,
        norm_first=True,
    ),
}
