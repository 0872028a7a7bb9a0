"""Named BYOL configurations: a ResNet backbone preset (with overrides) and BYOL's arguments.

- `byol_resnet50`: the paper's ImageNet setting (projector and predictor 4096-256,
  tau_base 0.996); 74.3 % linear.
- `byol_cifar_resnet18`: a CIFAR ResNet-18 (3x3 stem, no max pool), the backbone of
  lightly's CIFAR-10 benchmark (BYOL kNN 86.8 % at 200 epochs, batch 512), with the
  paper's heads and tau_base, no blur on 32x32 images.
- `byol_resnet20_cifar`: CIFAR ResNet-20 (0.27M parameters), heads 256-64, tau_base
  0.99 (a run of a few hundred updates barely moves a target at 0.996), for CPU runs.
- `byol_tiny`: two residual blocks (8, 16 filters), heads 32-16: tests and smoke runs.
"""

from keras_paperzoo.models.common_presets import trainer_preset
from keras_paperzoo.models.resnet.resnet_presets import resnet18_cifar, tiny_resnet_cifar

BYOL_PRESETS = {
    "byol_resnet50": trainer_preset(
        "BYOL (Grill et al. 2020): ResNet-50, projector and predictor 4096-256, tau_base 0.996; "
        "74.3 % ImageNet linear.",
        "resnet50", projection_dims=[4096, 256], prediction_dims=[4096, 256], tau_base=0.996),
    "byol_cifar_resnet18": trainer_preset(
        "BYOL on a CIFAR ResNet-18 with the paper's heads and tau; lightly's CIFAR-10 kNN: 86.8 % "
        "at 200 epochs, batch 512.",
        "resnet18", resnet18_cifar(), projection_dims=[4096, 256], prediction_dims=[4096, 256], tau_base=0.996),
    "byol_resnet20_cifar": trainer_preset(
        "CPU-sized BYOL: CIFAR ResNet-20, projector and predictor 256-64, tau_base 0.99.",
        "resnet20_cifar", projection_dims=[256, 64], prediction_dims=[256, 64], tau_base=0.99),
    "byol_tiny": trainer_preset(
        "A smoke-test BYOL: CIFAR-style ResNet with two blocks (8, 16 filters), heads 32-16.",
        "resnet20_cifar", tiny_resnet_cifar(), projection_dims=[32, 16], prediction_dims=[32, 16], tau_base=0.99),
}
