"""Named ViT configurations: plain dicts of `ViTBackbone` arguments.

B, L, H are the paper's Table 1 (from BERT, H new); Ti and S come from DeiT (Touvron
et al. 2021) and "How to train your ViT" (Steiner et al. 2022), the official code's
`ViT-Ti_16` / `ViT-S_16`. "/16" is the patch size. All at 224 x 224 (the paper's
pre-training resolution); `from_preset(name, image_shape=(384, 384, 3))` builds the
fine-tuning size and `ViTBackbone.with_image_shape` carries trained weights over.
"""


def _preset(description, patch_size, num_layers, hidden_dim, num_heads, mlp_dim):
    return {
        "description": description,
        "config": {
            "image_shape": (224, 224, 3),
            "patch_size": patch_size,
            "num_layers": num_layers,
            "hidden_dim": hidden_dim,
            "num_heads": num_heads,
            "mlp_dim": mlp_dim,
        },
    }


VIT_PRESETS = {
    "vit_ti16": _preset("ViT-Ti/16 (DeiT-Ti): 12 layers, D 192, MLP 768, 3 heads, patch 16.", 16, 12, 192, 3, 768),
    "vit_s16": _preset("ViT-S/16 (DeiT-S): 12 layers, D 384, MLP 1536, 6 heads, patch 16.", 16, 12, 384, 6, 1536),
    "vit_b16": _preset("ViT-B/16 (Table 1): 12 layers, D 768, MLP 3072, 12 heads, patch 16; 86M.", 16, 12, 768, 12, 3072),
    "vit_b32": _preset("ViT-B/32 (Table 1): 12 layers, D 768, MLP 3072, 12 heads, patch 32.", 32, 12, 768, 12, 3072),
    "vit_l16": _preset("ViT-L/16 (Table 1): 24 layers, D 1024, MLP 4096, 16 heads, patch 16; 307M.", 16, 24, 1024, 16, 4096),
    "vit_l32": _preset("ViT-L/32 (Table 1): 24 layers, D 1024, MLP 4096, 16 heads, patch 32.", 32, 24, 1024, 16, 4096),
    "vit_h14": _preset("ViT-H/14 (Table 1): 32 layers, D 1280, MLP 5120, 16 heads, patch 14; 632M.", 14, 32, 1280, 16, 5120),
}

# The paper's training recipes, `ImageClassifier.compile()`'s default for a ViT
# (`ViTBackbone.classification_recipe`; keys: `image_classifier.paper_optimizer`).
# From scratch on ImageNet (Sec. 4.1, Table 3): Adam(W) 0.9/0.999, lr 3e-3, weight decay
# 0.3, 10k warmup steps, batch 4096, 300 epochs, clipping at global norm 1 (the paper
# decays linearly or by cosine; we use cosine). The classifier is "a zero-initialized
# D x K feedforward layer" (Sec. 3.1 and App. B.1.1, for fine-tuning; the official code's
# `head` is zero-initialised for training from scratch too): the softmax starts exactly
# uniform (loss log K).
VIT_PRETRAINING_RECIPE = {
    "optimizer": "adamw", "learning_rate": 3e-3, "beta_2": 0.999, "weight_decay": 0.3,
    "warmup_steps": 10000, "total_steps": 300 * 1251, "clipnorm": 1.0, "batch_size": 4096,
    "head_initializer": "zeros",
}
# Fine-tuning (Sec. 4.1, App. B.1.1): SGD momentum 0.9, cosine decay, clip at global norm 1.
VIT_FINE_TUNING_RECIPE = {
    "optimizer": "sgd_cosine", "learning_rate": 0.01, "momentum": 0.9,
    "warmup_steps": 500, "total_steps": 10000, "clipnorm": 1.0, "batch_size": 512,
}
