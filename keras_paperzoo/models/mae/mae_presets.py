"""Named MAE configurations in the trainer preset schema (`keras_paperzoo.models.trainer`):
the ViT encoder (a `ViTBackbone` preset and overrides, or a config) and the MAE's own
arguments (the decoder's size).

The paper's decoder is 8 blocks, 512 wide, 16 heads (Sec. 4, "Baseline") for ViT-B,
L and H alike. Encoders pre-train without dropout (the authors' code has none),
so every preset sets `dropout_rate=0.0` on the ViT (whose own default, 0.1, is the
ViT paper's supervised setting). The small presets are ours, for CPUs and tests;
their decoders sit inside the paper's ablation range (Table 1a-b: depth 1-12,
width 128-1024).
"""

_PAPER_DECODER = {"decoder_depth": 8, "decoder_dim": 512, "decoder_heads": 16}


def _paper(description, encoder_preset):
    return {
        "description": description,
        "backbone": {"preset": encoder_preset, "overrides": {"dropout_rate": 0.0}},
        "arguments": dict(_PAPER_DECODER),
    }


MAE_PRESETS = {
    "mae_vit_b16": _paper(
        "MAE ViT-B/16 at 224 with the paper's decoder (8 x 512, 16 heads); fine-tunes to 83.6 % on ImageNet.",
        "vit_b16",
    ),
    "mae_vit_l16": _paper("MAE ViT-L/16 at 224 with the paper's decoder; 85.9 % fine-tuned.", "vit_l16"),
    "mae_vit_h14": _paper("MAE ViT-H/14 at 224 with the paper's decoder; 86.9 % fine-tuned.", "vit_h14"),
    "mae_vit_s16": _paper("ViT-S/16 encoder (not in the paper) with the paper's decoder; for benchmarks.", "vit_s16"),
    "mae_tiny": {
        "description": "CPU size (ours): 32x32 images, patch 4 (64 patches), encoder 4 x 128 (4 heads), "
        "decoder 2 x 128 (4 heads).",
        "backbone": {
            "preset": None,
            "overrides": {
                "image_shape": (32, 32, 3),
                "patch_size": 4,
                "num_layers": 4,
                "hidden_dim": 128,
                "num_heads": 4,
                "mlp_dim": 512,
                "dropout_rate": 0.0,
            },
        },
        "arguments": {"decoder_depth": 2, "decoder_dim": 128, "decoder_heads": 4},
    },
}
