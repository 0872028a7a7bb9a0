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
- `gpt3_*`: Brown et al. 2020, Sec. 2.1 and Table 2.1: "the same model and architecture
  as GPT-2", context 2048, feed-forward 4 d_model, GPT-2's 50,257-token BPE; the eight
  sizes from 125M to 175B with the table's n_layers, d_model, n_heads (d_head =
  d_model / n_heads). Table 2.1's batch size (tokens) and peak learning rate are kept
  beside each config under "training" (`GPT3_TABLE_2_1`). `GPTCausalLM.compile()` does
  not read them (a model does not know the preset it was built from, and its default
  is GPT-1's recipe): `compile(optimizer=gpt3_optimizer("gpt3_small"))` gives GPT-3's.
  Deviations: (1) GPT-3 XL: the table's 24 heads of 128 do not make its d_model 2048
  (24 x 128 = 3072); we keep d_head 128 with 16 heads, as EleutherAI's GPT-Neo 1.3B.
  (2) GPT-3 13B: the table's d_model 5140 is not divisible by its 40 heads; we use
  5120 = 40 x 128, its d_head column. (3) Every layer has dense attention by default: the
  paper's "alternating dense and locally banded sparse attention patterns in the layers of
  the transformer, similar to the Sparse Transformer" is an option,
  `GPTBackbone.frombackbone_preset("gpt3_small", attention_pattern="alternating_banded",
  local_window=256)` (blocks 1, 3, ... banded), not the default because the paper gives
  neither the band width nor the order of the layers (256, dense first: EleutherAI's
  GPT-Neo). The mask adds no parameters: the counts below hold for both. (4) Dropout 0.1,
  GPT-2's (the GPT-3 paper names none). Parameter counts (tied embedding, 2048
  positions): 125.2M, 355.9M, 760.3M, 1.316B, 2.652B, 6.658B, 12.853B, 174.604B, each
  within 2 % of the table's 125M, 350M, 760M, 1.3B, 2.7B, 6.7B, 13.0B, 175.0B.
- `gpt_char_shakespeare`: nanoGPT's `shakespeare_char` configuration (6 layers, 384
  wide, 6 heads, context 256, dropout 0.2), the model behind the published
  character-level Tiny Shakespeare validation loss of 1.47; pre-norm (GPT-2 style).
- `gpt_char_tiny`: a CPU-sized character model (4 layers, 128 wide, context 128).

The vocabulary size of the character presets is a placeholder (65, Tiny
Shakespeare's distinct characters); pass `vocabulary_size=` for other text.
"""

from keras_paperzoo.models.common_presets import backbone_preset


def _gpt2(description, num_layers, hidden_dim, num_heads):
    return backbone_preset(
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


# GPT-3 Table 2.1: name -> (n_params as printed, n_layers, d_model, n_heads, d_head, batch size in tokens,
# learning rate), the table's numbers as printed (see the deviations above for XL's heads and 13B's width).
GPT3_TABLE_2_1 = {
    "gpt3_small": (125e6, 12, 768, 12, 64, 0.5e6, 6.0e-4),
    "gpt3_medium": (350e6, 24, 1024, 16, 64, 0.5e6, 3.0e-4),
    "gpt3_large": (760e6, 24, 1536, 16, 96, 0.5e6, 2.5e-4),
    "gpt3_xl": (1.3e9, 24, 2048, 24, 128, 1e6, 2.0e-4),
    "gpt3_2.7b": (2.7e9, 32, 2560, 32, 80, 1e6, 1.6e-4),
    "gpt3_6.7b": (6.7e9, 32, 4096, 32, 128, 2e6, 1.2e-4),
    "gpt3_13b": (13.0e9, 40, 5140, 40, 128, 2e6, 1.0e-4),
    "gpt3_175b": (175.0e9, 96, 12288, 96, 128, 3.2e6, 0.6e-4),
}
GPT3_DEVIATIONS = {"gpt3_xl": {"num_heads": 16}, "gpt3_13b": {"hidden_dim": 5120}}  # see the module docstring


def _gpt3(name):
    n_params, num_layers, hidden_dim, num_heads, _, batch_tokens, learning_rate = GPT3_TABLE_2_1[name]
    config = {"num_layers": num_layers, "hidden_dim": hidden_dim, "num_heads": num_heads}
    config.update(GPT3_DEVIATIONS.get(name, {}))
    size = f"{n_params / 1e6:g}M" if n_params < 1e9 else f"{n_params / 1e9:g}B"  # as Table 2.1 prints it
    preset = backbone_preset(
        f"GPT-3 {size} (Brown et al. 2020, Table 2.1): {config['num_layers']} layers, {config['hidden_dim']}, "
        f"{config['num_heads']} heads, context 2048; batch {batch_tokens / 1e6:g}M tokens, "
        f"learning rate {learning_rate:g}.",
        vocabulary_size=50257,
        intermediate_dim=4 * config["hidden_dim"],
        max_sequence_length=2048,
        dropout=0.1,
        norm_first=True,
        **config,
    )
    preset["training"] = {"batch_size_tokens": int(batch_tokens), "peak_learning_rate": learning_rate}
    return preset


GPT_PRESETS = {
    "gpt1": backbone_preset(
        "GPT-1 (Radford et al. 2018): 12 layers, 768, 12 heads, 3072, post-norm, context 512, "
        "40,478 BPE tokens; 116,534,784 parameters.",
        vocabulary_size=40478, num_layers=12, hidden_dim=768, num_heads=12, intermediate_dim=3072,
        max_sequence_length=512, dropout=0.1, norm_first=False,
    ),
    "gpt2_small": _gpt2("GPT-2 117M (Table 2; 124,439,808 as released): 12 layers, 768, 12 heads.", 12, 768, 12),
    "gpt2_medium": _gpt2("GPT-2 345M (Table 2; 354,823,168 as released): 24 layers, 1024, 16 heads.", 24, 1024, 16),
    "gpt2_large": _gpt2("GPT-2 762M (Table 2; 774,030,080 as released): 36 layers, 1280, 20 heads.", 36, 1280, 20),
    "gpt2_xl": _gpt2("GPT-2 1542M (Table 2; 1,557,611,200 as released): 48 layers, 1600, 25 heads.", 48, 1600, 25),
    **{name: _gpt3(name) for name in GPT3_TABLE_2_1},
    "gpt_char_shakespeare": backbone_preset(
        "nanoGPT shakespeare_char: 6 layers, 384, 6 heads, context 256, dropout 0.2 (published val loss 1.47).",
        vocabulary_size=65, num_layers=6, hidden_dim=384, num_heads=6, intermediate_dim=1536,
        max_sequence_length=256, dropout=0.2, norm_first=True,
    ),
    "gpt_char_tiny": backbone_preset(
        "CPU-sized character model: 4 layers, 128, 4 heads, context 128, dropout 0.1.",
        vocabulary_size=65, num_layers=4, hidden_dim=128, num_heads=4, intermediate_dim=512, max_sequence_length=128,
        dropout=0.1, norm_first=True,
    ),
}
