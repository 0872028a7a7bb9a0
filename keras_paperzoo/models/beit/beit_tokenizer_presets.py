"""Named `VisualTokenizer` configurations, in the trainer preset schema (`keras_paperzoo.models.trainer`).

The tokenizer builds its own networks, so a preset's "backbone" entry is empty (the
trainer preset schema keeps it): every value is a constructor argument under "arguments".

- `dall_e_8192`: the *shape* of the tokenizer BEiT uses (Bao et al. 2021, Sec. 2.1.2
  and 2.5): 8192 codes and a 14 x 14 token grid on 224 x 224 images, i.e. one token per
  16 x 16 BEiT patch; and DALL-E's dVAE schedules (Ramesh et al. 2021, App. A.2): the
  Gumbel-softmax temperature annealed from 1 to 1/16 over 150,000 updates, the KL
  weight raised from 0 to 6.6 over the first 5,000. It is not DALL-E's network and has
  none of its weights (those cannot be downloaded here): train it (`fit`) first. Ours has
  19,425,028 parameters (DALL-E's dVAE is larger, a ResNet of four groups 256-2048 wide).
- `beit_tokenizer_digits`: CPU size (ours), 32 x 32 grey images (MNIST / scikit-learn
  digits resized), patch 4 (an 8 x 8 grid), 64 codes, width 32. Its temperature reaches
  1/16 after 500 updates: annealed over 2,000 (the first version), a run of ~1,000
  updates at the default lr 1e-4 left the hard argmax codes collapsed (perplexity 1.02
  after 48 updates on the digits, 2026-11-26), while 230 updates at lr 1e-3 with the
  anneal over 115 gave a hard-code test MSE of 0.005 with 14 codes in use (test
  perplexity 4.8: most 4 x 4 patches of a digit are blank). Its KL weight is 0.1, not 6.6: with our
  Gaussian (squared-error) likelihood the reconstruction term pulls far less than
  DALL-E's logit-Laplace one, and 6.6 on these small images drives the encoder to the
  uniform prior (every position's code distribution flat: no information reaches the
  decoder). See `VisualTokenizer` for the loss.
"""

VISUAL_TOKENIZER_PRESETS = {
    "dall_e_8192": {
        "description": "BEiT's tokenizer shape (DALL-E dVAE schedules): 224x224x3, patch 16 (14x14 tokens), 8192 "
        "codes; hidden 256, 2 residual blocks per stage. Our network, not DALL-E's weights.",
        "backbone": {"preset": None, "overrides": {}},
        "arguments": {
            "image_shape": (224, 224, 3),
            "patch_size": 16,
            "vocabulary_size": 8192,
            "hidden_dim": 256,
            "num_res_blocks": 2,
            "temperature_start": 1.0,
            "temperature_end": 1.0 / 16,
            "temperature_steps": 150_000,
            "kl_weight": 6.6,
            "kl_warmup_steps": 5000,
        },
    },
    "beit_tokenizer_digits": {
        "description": "CPU size (ours): 32x32x1 digits, patch 4 (8x8 tokens), 64 codes, hidden 32; temperature "
        "1 -> 1/16 over 500 updates, KL weight 0 -> 0.1 over 500.",
        "backbone": {"preset": None, "overrides": {}},
        "arguments": {
            "image_shape": (32, 32, 1),
            "patch_size": 4,
            "vocabulary_size": 64,
            "hidden_dim": 32,
            "num_res_blocks": 1,
            "temperature_start": 1.0,
            "temperature_end": 1.0 / 16,
            "temperature_steps": 500,
            "kl_weight": 0.1,
            "kl_warmup_steps": 500,
        },
    },
}
