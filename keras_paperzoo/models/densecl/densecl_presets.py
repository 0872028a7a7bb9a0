"""Named DenseCL configurations: a ResNet backbone preset (with overrides) and DenseCL's arguments.

- `densecl_resnet50`: the paper's ImageNet setting (Wang et al. 2021, the authors'
  `densecl_r50_200ep` config): ResNet-50, both heads 2048-2048-128, two queues of
  65536, m = 0.999, tau = 0.2, lambda = 0.5, batch 256 on 8 GPUs (8 shuffle-BN groups).
- `densecl_resnet8_cifar`: a CPU-sized DenseCL on a CIFAR ResNet-8 (one block per
  stage, 16-32-64 filters): heads 64-64-128 (the hidden width the backbone's, as
  MoCo's CPU presets), K = 2048, m = 0.99 (runs of a few hundred updates; see
  `moco_presets.py`), the paper's tau and lambda. Its MoCo v2 twin for comparisons
  at the same budget is `MoCo(version=2)` with the same arguments.
- `densecl_tiny`: two residual blocks (8 and 16 filters), heads 16-16-32, K = 256: for
  tests and smoke runs.
"""

from keras_paperzoo.models.common_presets import trainer_preset
from keras_paperzoo.models.resnet.resnet_presets import tiny_resnet_cifar

DENSECL_PRESETS = {
    "densecl_resnet50": trainer_preset(
        "DenseCL (Wang et al. 2021): ResNet-50, global and dense heads 2048-2048-128, "
        "two queues of 65536, m=0.999, tau=0.2, lambda=0.5, MoCo v2 aug+ at 224.",
        "resnet50", queue_size=65536, momentum=0.999, temperature=0.2, dense_weight=0.5),
    "densecl_resnet8_cifar": trainer_preset(
        "CPU-sized DenseCL: CIFAR ResNet-8 (1 block per stage, 16-32-64), heads 64-64-128, "
        "K=2048, m=0.99 (short runs), tau=0.2, lambda=0.5, aug+.",
        "resnet20_cifar", {"stage_blocks": [1, 1, 1]}, queue_size=2048, momentum=0.99, temperature=0.2,
        dense_weight=0.5, projection_hidden_dim=64),
    "densecl_tiny": trainer_preset(
        "A smoke-test DenseCL: CIFAR-style ResNet with two blocks (8, 16 filters), "
        "heads 16-16-32, K=256, m=0.99, tau=0.2, lambda=0.5.",
        "resnet20_cifar", tiny_resnet_cifar(), queue_size=256, momentum=0.99, temperature=0.2, dense_weight=0.5,
        projection_dim=32, projection_hidden_dim=16),
}
