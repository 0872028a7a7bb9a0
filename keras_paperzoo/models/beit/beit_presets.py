"""Named BEiT configurations: plain dicts of `BEiTBackbone` arguments, and the fine-tuning recipe.

Base and Large are the paper's (Bao et al. 2022, Sec. 2.5 and App. "Hyperparameters"):
ViT-B/16 (12 x 768, 12 heads, MLP 3072) and ViT-L/16 (24 x 1024, 16 heads, MLP 4096)
at 224 x 224 (a 14 x 14 patch grid), with the pre-training settings of the official
code: relative position bias in every layer, no absolute position embedding,
LayerScale 0.1, drop path 0.1, no dropout. The tiny preset is ours, for CPUs and
tests (32 x 32 digits, patch 4: an 8 x 8 grid).
"""

from keras_paperzoo.models.common_presets import backbone_preset


BEIT_PRESETS = {
    "beit_base_patch16_224": backbone_preset(
        "BEiT-B/16 at 224 (Sec. 2.5): 12 layers, D 768, 12 heads, MLP 3072, relative position bias per layer, "
        "LayerScale 0.1; 85,773,504 parameters: the official fine-tuning model's 86,530,984 less its "
        "1000-way head (769,000), plus [M] (768), the final norm (1,536) and Keras's redundant key biases (9,216).",
        image_shape=(224, 224, 3), patch_size=16, num_layers=12, hidden_dim=768, num_heads=12, mlp_dim=3072,
    ),
    "beit_large_patch16_224": backbone_preset(
        "BEiT-L/16 at 224: 24 layers, D 1024, 16 heads, MLP 4096, relative position bias per layer, LayerScale 0.1.",
        image_shape=(224, 224, 3), patch_size=16, num_layers=24, hidden_dim=1024, num_heads=16, mlp_dim=4096,
    ),
    "beit_tiny_digits": backbone_preset(
        "CPU size (ours): 32x32x1 images, patch 4 (8x8 grid), 4 layers x 64, 4 heads, MLP 256.",
        image_shape=(32, 32, 1), patch_size=4, num_layers=4, hidden_dim=64, num_heads=4, mlp_dim=256,
    ),
}

# Fine-tuning on ImageNet-1k (App. "Hyperparameters for image classification fine-tuning", BEiT-B):
# AdamW (0.9, 0.999), peak lr 4e-3 at batch 1024, 100 epochs with 20 of warmup then cosine,
# weight decay 0.05, layer-wise lr decay 0.65 (0.75 for L), drop path 0.1, no gradient clipping.
# The head is initialised N(0, 0.02^2) truncated, times 0.001 (`init_scale` in the official code).
# Read by `BEiTClassifier.paper_optimizer`; `ImageClassifier.compile()` on a BEiT backbone reads
# the same keys (without layer decay).
BEIT_FINE_TUNING_RECIPE = {
    "optimizer": "adamw", "learning_rate": 4e-3, "beta_2": 0.999, "weight_decay": 0.05, "clipnorm": None,
    "batch_size": 1024, "epochs": 100, "warmup_steps": 20 * (1_281_167 // 1024), "layer_decay": 0.65,
    "head_initializer": {"class_name": "TruncatedNormal", "config": {"mean": 0.0, "stddev": 0.02 * 0.001}},
}
