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

from keras_paperzoo.models.resnet.resnet_presets import resnet18_cifar

BYOL_PRESETS = {
    "byol_resnet50": {
        "description": "BYOL (Grill et al. 2020): ResNet-50, projector and predictor 4096-256, tau_base 0.996; "
        "74.3 % ImageNet linear.",
        "backbone": {"preset": "resnet50", "overrides": {}},
        "arguments": {"projection_dims": [4096, 256], "prediction_dims": [4096, 256], "tau_base": 0.996},
    },
    "byol_cifar_resnet18": {
        "description": "BYOL on a CIFAR ResNet-18 with the paper's heads and tau; lightly's CIFAR-10 kNN: 86.8 % "
        "at 200 epochs, batch 512.",
        "backbone": {"preset": "resnet18", "overrides": resnet18_cifar()},
        "arguments": {"projection_dims": [4096, 256], "prediction_dims": [4096, 256], "tau_base": 0.996},
    },
    "byol_resnet20_cifar": {
        "description": "CPU-sized BYOL: CIFAR ResNet-20, projector and predictor 256-64, tau_base 0.99.",
        "backbone": {"preset": "resnet20_cifar", "overrides": {}},
        "arguments": {"projection_dims": [256, 64], "prediction_dims": [256, 64], "tau_base": 0.99},
    },
    "byol_tiny": {
        "description": "A smoke-test BYOL: CIFAR-style ResNet with two blocks (8, 16 filters), heads 32-16.",
        "backbone": {"preset": "resnet20_cifar",
                     "overrides": {"stage_blocks": [1, 1], "stage_filters": [8, 16], "stem_filters": 8}},
        "arguments": {"projection_dims": [32, 16], "prediction_dims": [32, 16], "tau_base": 0.99},
    },
}
