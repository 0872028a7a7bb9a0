"""Named DenseCL configurations: a ResNet backbone preset (with overrides) and DenseCL's arguments.

DenseCL is MoCo v2 with a dense head and a second queue, so each preset is its MoCo v2 twin's
(`MOCO_PRESETS`: the same backbone, queue, momentum and heads) plus the dense loss weight
lambda, and the changes named below.

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
from keras_paperzoo.models.moco.moco_presets import MOCO_PRESETS


def _from_moco_v2(description, moco_preset, **changes):
    """DenseCL on the backbone and arguments of MoCo v2 preset `moco_preset` (its twin), with `changes`."""
    moco = MOCO_PRESETS[moco_preset]
    if moco["arguments"]["version"] != 2:
        raise ValueError(f"{moco_preset} is not a MoCo v2 preset.")
    arguments = {name: value for name, value in moco["arguments"].items() if name != "version"}
    return trainer_preset(description, moco["backbone"]["preset"], moco["backbone"]["overrides"],
                          **{**arguments, **changes})


DENSECL_PRESETS = {
    "densecl_resnet50": _from_moco_v2(
        "DenseCL (Wang et al. 2021): ResNet-50, global and dense heads 2048-2048-128, "
        "two queues of 65536, m=0.999, tau=0.2, lambda=0.5, MoCo v2 aug+ at 224.",
        "moco_v2_resnet50", dense_weight=0.5),
    "densecl_resnet8_cifar": _from_moco_v2(
        "CPU-sized DenseCL: CIFAR ResNet-8 (1 block per stage, 16-32-64), heads 64-64-128, "
        "K=2048, m=0.99 (short runs), tau=0.2, lambda=0.5, aug+.",
        "moco_v2_resnet8_mnist", momentum=0.99, dense_weight=0.5),
    "densecl_tiny": _from_moco_v2(
        "A smoke-test DenseCL: CIFAR-style ResNet with two blocks (8, 16 filters), "
        "heads 16-16-32, K=256, m=0.99, tau=0.2, lambda=0.5.",
        "moco_tiny", dense_weight=0.5),
}
