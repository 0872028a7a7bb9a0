"""Named iGPT configurations (Chen et al. 2020, Sec. 3 and its tables), in the trainer preset schema.

The backbone is `GPTBackbone` (GPT-2 pre-norm blocks, MLP 4d) over `palette + 1`
tokens: the palette's 512 ids and one extra id, the start-of-sequence token of the AR
objective / the mask token of the BERT one (see `IGPT`). The context is the image's
pixel count: 32 x 32 = 1,024 (iGPT-S/M/L), 64 x 64 = 4,096 (iGPT-XL).

| preset | layers | d | heads | paper params | ours (`igpt_parameter_count`) |
|---|---|---|---|---|---|
| igpt_s  | 24 | 512  | 8  | 76M    | 76,707,328 |
| igpt_m  | 36 | 1024 | 8  | 455M   | 455,564,288 |
| igpt_l  | 48 | 1536 | 16 | 1,362M | 1,363,063,296 |
| igpt_xl | 60 | 3072 | 24 | 6,801M | 6,812,906,496 |

Heads: 8, 8 and 16 are those of the released checkpoints (`openai/image-gpt`
README); iGPT-XL was not released and the paper gives no head count: 24 (head width
128, as iGPT-M's) is our choice. Dropout 0: the released model code has none.
Our counts exceed the released code's by its missing biases (no bias in its
projections, a scale-only norm): the released code gives 76.57M, 455.16M, 1,362.25M
(the paper's 1,362M) and, with 1,024 positions, 6,801.4M for iGPT-XL (the paper's 6,801M;
with 64 x 64 = 4,096 positions it would be 6,811M).

`igpt_mnist_tiny`: a CPU-sized model for 28 x 28 MNIST digits over a 16-colour
(greyscale) palette, 4 layers x 64, 4 heads.
"""

from keras_paperzoo.models.gpt.gpt_backbone import gpt_parameter_count

PAPER_PARAMETERS = {"igpt_s": 76e6, "igpt_m": 455e6, "igpt_l": 1362e6, "igpt_xl": 6801e6}


def _preset(description, palette_size, num_layers, hidden_dim, num_heads, resolution, objective="autoregressive"):
    backbone = {
        "vocabulary_size": palette_size + 1,  # palette ids + the SOS / mask token
        "num_layers": num_layers,
        "hidden_dim": hidden_dim,
        "num_heads": num_heads,
        "intermediate_dim": 4 * hidden_dim,
        "max_sequence_length": resolution * resolution,
        "dropout": 0.0,
        "norm_first": True,
    }
    return {"description": description, "backbone": {"preset": None, "overrides": backbone},
            "arguments": {"objective": objective}}


IGPT_PRESETS = {
    "igpt_s": _preset("iGPT-S (76M): 24 layers, 512, 8 heads, 32x32 over a 512-colour palette.", 512, 24, 512, 8, 32),
    "igpt_m": _preset("iGPT-M (455M): 36 layers, 1024, 8 heads, 32x32, 512 colours.", 512, 36, 1024, 8, 32),
    "igpt_l": _preset("iGPT-L (1362M): 48 layers, 1536, 16 heads, 32x32, 512 colours.", 512, 48, 1536, 16, 32),
    "igpt_xl": _preset("iGPT-XL (6801M): 60 layers, 3072, 24 heads (our choice), 64x64, 512 colours.",
                       512, 60, 3072, 24, 64),
    "igpt_mnist_tiny": _preset("CPU-sized: 4 layers, 64, 4 heads, 28x28 MNIST over 16 grey levels.", 16, 4, 64, 4, 28),
}


def igpt_parameter_count(vocabulary_size, hidden_dim, **config):
    """Parameters of an `IGPT` from its backbone config, without building it.

    The `GPTBackbone`'s (`gpt_parameter_count`, tied input embedding) plus iGPT's
    untied output projection d x palette (no bias, as the released code's `wtet`).
    """
    return gpt_parameter_count(vocabulary_size=vocabulary_size, hidden_dim=hidden_dim, **config) \
        + hidden_dim * (vocabulary_size - 1)
