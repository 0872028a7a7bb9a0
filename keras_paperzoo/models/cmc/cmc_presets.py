"""Named CMC configurations: one view encoder's ResNet (built twice, for L and for ab) and CMC's arguments.

Each view has its own encoder of half the network's width: the authors' AlexNet is
split across channels, one half per view, and their `resnet50v1` (HobbitLong/CMC
`models/resnet.py`, `ResNet(width=0.5)`) halves every stage and keeps the 64-filter
7x7 stem. The representation is the two encoders' pooled features concatenated, as
wide as the full network's. `image_shape`'s channels are set per view when the preset
is built (L: 1, ab: 2), so any `image_shape` of RGB images may be passed.

- `cmc_resnet50_half`: the paper's ImageNet setting with the authors' `resnet50v1`
  (two half-width ResNet-50s, 2 x 1024 features), 4096 negatives, tau 0.07, NCE,
  crops of 8-100 % of the image (their ImageNet ResNet setting).
- `cmc_cifar_resnet18`: two half-width CIFAR ResNet-18s (3x3 stem of 64, stages 32-256,
  2 x 256 features) for 32 x 32 images; tau 0.1, the authors' value for the small
  STL-10 images (README), crops of 20-100 %.
- `cmc_resnet20_cifar`: two half-width CIFAR ResNet-20s (stem and stages halved: 8,
  8-16-32, since option A shortcuts cannot narrow a 16-filter stem to 8; 2 x 32
  features), for CPU runs.
- `cmc_tiny`: two residual blocks per view (4 and 8 filters), 32 negatives: tests and
  smoke runs.
"""

from keras_paperzoo.models.common_presets import trainer_preset
from keras_paperzoo.models.resnet.resnet_presets import resnet18_cifar

_SMALL_IMAGES = {"crop_scale": (0.2, 1.0)}

CMC_PRESETS = {
    "cmc_resnet50_half": trainer_preset(
        "CMC (Tian et al. 2019) on ImageNet, L and ab: two half-width ResNet-50s (the authors' "
        "resnet50v1), NCE with 4096 negatives, tau 0.07; representation 2 x 1024.",
        "resnet50", {"stage_filters": [32, 64, 128, 256], "stem_filters": 64, "image_shape": (224, 224, 3)},
        num_negatives=4096, temperature=0.07, feature_dim=128, loss="nce", augmentation={"crop_scale": (0.08, 1.0)}),
    "cmc_cifar_resnet18": trainer_preset(
        "CMC on 32 x 32 images: two half-width CIFAR ResNet-18s (3x3 stem 64, stages 32-256), "
        "NCE with 4096 negatives, tau 0.1 (the authors' STL-10 value); representation 2 x 256.",
        "resnet18", resnet18_cifar(stage_filters=[32, 64, 128, 256]), num_negatives=4096, temperature=0.1,
        feature_dim=128, loss="nce", augmentation=dict(_SMALL_IMAGES)),
    "cmc_resnet20_cifar": trainer_preset(
        "CPU-sized CMC: two half-width CIFAR ResNet-20s (stem 8, stages 8-16-32), NCE with 4096 "
        "negatives, tau 0.1; representation 2 x 32.",
        "resnet20_cifar", {"stage_filters": [8, 16, 32], "stem_filters": 8}, num_negatives=4096, temperature=0.1,
        feature_dim=128, loss="nce", augmentation=dict(_SMALL_IMAGES)),
    "cmc_tiny": trainer_preset(
        "A smoke-test CMC: per view a CIFAR-style ResNet with two blocks (4, 8 filters), 32-d "
        "features, 32 negatives.",
        "resnet20_cifar", {"stage_blocks": [1, 1], "stage_filters": [4, 8], "stem_filters": 4}, num_negatives=32,
        temperature=0.1, feature_dim=32, loss="nce", augmentation=dict(_SMALL_IMAGES)),
}
