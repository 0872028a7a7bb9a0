"""Named CPC configurations: the patch / sequence encoders, and the trainer's grid, context and prediction settings.

Verified against the papers (see the `CPC` docstring for the sources):

- `cpc_v1_imagenet`: van den Oord et al. 2018, Sec. 3.2: 256 x 256 images, a 7 x 7
  grid of 64 x 64 patches at stride 32, the first three stacks of a ResNet v2 101
  without batch norm (1024-d per patch), a PixelCNN-style context over rows,
  predictions up to 5 rows below, Adam 2e-4; 48.7 % ImageNet top-1 (linear).
- `cpc_v2_imagenet`: Henaff et al. 2019: layer norm, ResNet-161 (third stack: 46
  blocks, 4096-d outputs, 512-d bottlenecks), predictions from all four
  directions, colour dropping per patch; target and prediction width 64 and
  prediction scale 0.1, ignoring the two nearest rows (the pseudo-code of
  Appendix A.2: `target_dim=64, emb_scale=0.1, steps_to_ignore=2,
  steps_to_predict=3`); 71.5 % ImageNet top-1 (linear). Kept from v1, not
  verified for v2: the 7 x 7 grid of 64-pixel patches (v2 reports "larger
  patches") and Adam 2e-4.
- `cpc_v1_cifar` / `cpc_v2_cifar`: the same proportions at 32 x 32 (8-pixel
  patches at stride 4: a 7 x 7 grid; lightning-bolts' CIFAR-10 CPC v2 uses these
  patches), on a small pre-activation ResNet. lightning-bolts reports 84.52 %
  CIFAR-10 test accuracy for its CPC v2 (a ResNet-101-style LN encoder, Adam,
  batch 64, 1000 epochs).
- `cpc_v1_small` / `cpc_v2_small`: the same proportions at 16 x 16 (4-pixel
  patches at stride 2: 7 x 7) on a two-block encoder, for CPU runs on `digits`
  (upsampled 8 x 8 digits: a 4-pixel patch holds 2 x 2 of the original pixels, as
  an 8-pixel patch at 32 x 32 would).
- `cpc_tiny`: 16 x 16 images, 4-pixel patches at stride 2 (7 x 7), a one-block
  encoder: tests and smoke runs.
- `cpc_audio`: Sec. 3.1: the strided convolution encoder on 20480-sample windows
  (128 steps of 512-d), a GRU with 256-d state, 12 steps ahead, Adam 2e-4.
- `cpc_sequence_tiny`: the same structure on 1280-sample windows (32 steps):
  tests and the synthetic-signal demo (`keras_paperzoo.data.synthetic_signal`).
"""

_RESNET101_STACKS_1_3 = {"stage_blocks": [3, 4, 23], "stage_filters": [64, 128, 256],
                         "stage_outputs": [256, 512, 1024], "stem": "imagenet", "stem_filters": 64}

CPC_RESNET_PRESETS = {
    "cpc_resnet101_v2_stack3": {
        "description": "CPC v1's patch encoder: ResNet v2 101's first three stacks (3, 4, 23 bottleneck blocks, "
        "1024-d), no normalisation, 64 x 64 patches.",
        "config": {**_RESNET101_STACKS_1_3, "normalization": None, "patch_shape": (64, 64, 3)},
    },
    "cpc_resnet161_v2": {
        "description": "CPC v2's ResNet-161: ResNet-101's first stacks, the third with 46 blocks of 4096-d outputs "
        "and 512-d bottlenecks, layer norm, 64 x 64 patches.",
        "config": {"stage_blocks": [3, 4, 46], "stage_filters": [64, 128, 512], "stage_outputs": [256, 512, 4096],
                   "stem": "imagenet", "stem_filters": 64, "normalization": "layer", "patch_shape": (64, 64, 3)},
    },
    "cpc_resnet_cifar": {
        "description": "A CPU-sized pre-activation ResNet for 8 x 8 patches: 3x3 stem (32), stages of 2 bottleneck "
        "blocks (16, 32, 64 wide; 64, 128, 256 out).",
        "config": {"stage_blocks": [2, 2, 2], "stage_filters": [16, 32, 64], "stage_outputs": [64, 128, 256],
                   "stem": "cifar", "stem_filters": 32, "normalization": None, "patch_shape": (8, 8, 3)},
    },
    "cpc_resnet_small": {
        "description": "A CPU-sized pre-activation ResNet for 4 x 4 patches: 3x3 stem (32), two bottleneck blocks "
        "(16, 32 wide; 64, 128 out).",
        "config": {"stage_blocks": [1, 1], "stage_filters": [16, 32], "stage_outputs": [64, 128], "stem": "cifar",
                   "stem_filters": 32, "normalization": None, "patch_shape": (4, 4, 3)},
    },
    "cpc_resnet_tiny": {
        "description": "One bottleneck block (4 wide, 16 out) on 4 x 4 patches: tests.",
        "config": {"stage_blocks": [1], "stage_filters": [4], "stage_outputs": [16], "stem": "cifar",
                   "stem_filters": 8, "normalization": None, "patch_shape": (4, 4, 3)},
    },
}

STRIDED_CONV_PRESETS = {
    "cpc_audio_encoder": {
        "description": "CPC v1's audio encoder: 5 conv layers, strides [5, 4, 2, 2, 2], sizes [10, 8, 4, 4, 4], "
        "512 units, ReLU, on 20480-sample windows (128 steps).",
        "config": {"strides": [5, 4, 2, 2, 2], "kernel_sizes": [10, 8, 4, 4, 4], "filters": 512,
                   "input_length": 20480, "channels": 1},
    },
    "cpc_audio_tiny": {
        "description": "The audio encoder's structure, 3 layers of 32 units, strides [5, 4, 2] (40), 1280 samples "
        "(32 steps): tests and the synthetic-signal demo.",
        "config": {"strides": [5, 4, 2], "kernel_sizes": [10, 8, 4], "filters": 32, "input_length": 1280,
                   "channels": 1},
    },
}

_V1 = {"context": "pixelcnn", "context_blocks": 5, "context_units": 256, "prediction_steps": 5,
       "steps_to_ignore": 0, "directions": ["down"], "target_dim": None, "prediction_scale": 1.0,
       "color_dropping": False}
_V2 = {**_V1, "prediction_steps": 3, "steps_to_ignore": 2, "directions": ["down", "up", "right", "left"],
       "target_dim": 64, "prediction_scale": 0.1, "color_dropping": True, "patch_jitter": 0}

CPC_PRESETS = {
    "cpc_v1_imagenet": {
        "description": "CPC v1 (van den Oord et al. 2018): 7 x 7 grid of 64-px patches at 256 px, ResNet v2 101 "
        "stacks 1-3 without BN, PixelCNN context, 5 rows ahead; 48.7 % ImageNet linear top-1.",
        "backbone": {"preset": "cpc_resnet101_v2_stack3", "overrides": {}},
        "arguments": {**_V1, "image_shape": (256, 256, 3), "augmentation": {"grayscale": 1.0}},
    },
    "cpc_v2_imagenet": {
        "description": "CPC v2 (Henaff et al. 2019): ResNet-161 with layer norm, four directions, colour "
        "dropping; 71.5 % ImageNet linear top-1.",
        "backbone": {"preset": "cpc_resnet161_v2", "overrides": {}},
        "arguments": {**_V2, "image_shape": (256, 256, 3), "augmentation": {"grayscale": 0.0}},
    },
    "cpc_v1_cifar": {
        "description": "CPC v1 at 32 px (8-px patches, stride 4: 7 x 7) on a small pre-activation ResNet, "
        "no normalisation, context 3 blocks of 64.",
        "backbone": {"preset": "cpc_resnet_cifar", "overrides": {}},
        "arguments": {**_V1, "image_shape": (32, 32, 3), "context_blocks": 3, "context_units": 64,
                      "augmentation": {"grayscale": 0.0}},
    },
    "cpc_v2_cifar": {
        "description": "CPC v2 at 32 px (8-px patches, stride 4: 7 x 7): layer norm, four directions, colour "
        "dropping, targets 64-d; lightning-bolts' CIFAR-10 CPC v2: 84.52 % test accuracy.",
        "backbone": {"preset": "cpc_resnet_cifar", "overrides": {"normalization": "layer"}},
        "arguments": {**_V2, "image_shape": (32, 32, 3), "context_blocks": 3, "context_units": 64,
                      "augmentation": {"grayscale": 0.0}},
    },
    "cpc_v1_small": {
        "description": "CPC v1 for a CPU at 16 px (4-px patches, stride 2: 7 x 7, v1's proportions), a two-block "
        "encoder, context 3 blocks of 64, 5 rows ahead: `paperzoo train cpc`'s default on digits.",
        "backbone": {"preset": "cpc_resnet_small", "overrides": {}},
        "arguments": {**_V1, "image_shape": (16, 16, 3), "context_blocks": 3, "context_units": 64,
                      "augmentation": {"grayscale": 0.0}},
    },
    "cpc_v2_small": {
        "description": "CPC v2 for a CPU at 16 px (4-px patches, stride 2: 7 x 7): layer norm, four directions, "
        "colour dropping, targets 64-d.",
        "backbone": {"preset": "cpc_resnet_small", "overrides": {"normalization": "layer"}},
        "arguments": {**_V2, "image_shape": (16, 16, 3), "context_blocks": 3, "context_units": 64,
                      "augmentation": {"grayscale": 0.0}},
    },
    "cpc_tiny": {
        "description": "A smoke-test CPC: 16 x 16 images, 4-px patches at stride 2 (7 x 7), one-block encoder, "
        "one context block of 8, 2 rows ahead.",
        "backbone": {"preset": "cpc_resnet_tiny", "overrides": {}},
        "arguments": {**_V1, "image_shape": (16, 16, 3), "context_blocks": 1, "context_units": 8,
                      "prediction_steps": 2, "augmentation": {"grayscale": 0.0}},
    },
    "cpc_audio": {
        "description": "CPC v1 on audio (Sec. 3.1): strided conv encoder (160x), GRU 256, 12 steps ahead, "
        "negatives from the other steps and sequences of the batch.",
        "backbone": {"preset": "cpc_audio_encoder", "overrides": {}},
        "arguments": {"context": "gru", "context_units": 256, "prediction_steps": 12, "steps_to_ignore": 0,
                      "directions": ["down"], "target_dim": None, "prediction_scale": 1.0, "augmentation": None},
    },
    "cpc_sequence_tiny": {
        "description": "The audio structure, small: 3 strided convs (40x, 32 units), GRU 32, 12 steps ahead, "
        "1280-sample windows of a synthetic signal.",
        "backbone": {"preset": "cpc_audio_tiny", "overrides": {}},
        "arguments": {"context": "gru", "context_units": 32, "prediction_steps": 12, "steps_to_ignore": 0,
                      "directions": ["down"], "target_dim": None, "prediction_scale": 1.0, "augmentation": None},
    },
}

IMAGE_PRESETS = tuple(name for name, preset in CPC_PRESETS.items() if preset["arguments"].get("context") != "gru")
SEQUENCE_PRESETS = tuple(name for name in CPC_PRESETS if name not in IMAGE_PRESETS)
