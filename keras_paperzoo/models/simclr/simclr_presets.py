"""Named SimCLR configurations: a ResNet backbone preset (with overrides) and SimCLR's arguments.

- `simclr_v1_resnet50`, `simclr_v2_resnet50`: the papers' ImageNet settings (ResNet-50,
  head to 128-d, tau 0.1, colour strength 1.0 with blur).
- `simclr_cifar_resnet18`: the CIFAR-10 setting of Appendix B.9 (tau 0.5, colour
  strength 0.5, no blur) on a CIFAR ResNet-18 (3x3 stem, no max pool), the
  backbone of lightly's CIFAR-10 benchmark (SimCLR kNN 84.8 % at 200 epochs,
  batch 512).
- `simclr_resnet20_cifar`: the same settings on the ResNet paper's CIFAR ResNet-20
  (0.27M parameters), for CPU runs.
- `simclr_tiny`: two residual blocks (8, 16 filters): tests and smoke runs.
"""

from keras_paperzoo.models.common_presets import trainer_preset
from keras_paperzoo.models.resnet.resnet_presets import resnet18_cifar, tiny_resnet_cifar

_CIFAR = {"color_strength": 0.5, "blur": False}  # Appendix B.9

SIMCLR_PRESETS = {
    "simclr_v1_resnet50": trainer_preset(
        "SimCLR v1 (Chen et al. 2020): ResNet-50, head 2048-128 with BN, tau 0.1; "
        "69.3 % ImageNet linear at 1000 epochs, batch 4096.",
        "resnet50", version=1, temperature=0.1),
    "simclr_v2_resnet50": trainer_preset(
        "SimCLR v2 (Chen et al. 2020b): ResNet-50, 3-layer head 2048-2048-128 with BN, tau 0.1.",
        "resnet50", version=2, temperature=0.1),
    "simclr_cifar_resnet18": trainer_preset(
        "SimCLR's CIFAR-10 setting (App. B.9: tau 0.5, colour strength 0.5, no blur) on a "
        "CIFAR ResNet-18; about 91 % linear at 1000 epochs (paper), kNN 84.8 % at 200 (lightly).",
        "resnet18", resnet18_cifar(), version=1, temperature=0.5, augmentation=dict(_CIFAR)),
    "simclr_resnet20_cifar": trainer_preset(
        "CPU-sized SimCLR: CIFAR ResNet-20, head 64-128, the CIFAR-10 setting of App. B.9.",
        "resnet20_cifar", version=1, temperature=0.5, augmentation=dict(_CIFAR)),
    "simclr_tiny": trainer_preset(
        "A smoke-test SimCLR: CIFAR-style ResNet with two blocks (8, 16 filters), head 16-32.",
        "resnet20_cifar", tiny_resnet_cifar(), version=1, temperature=0.5, projection_dims=[16, 32],
        augmentation=dict(_CIFAR)),
}
