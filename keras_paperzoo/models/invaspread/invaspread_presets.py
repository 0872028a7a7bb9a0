"""Named InvaSpread configurations: a ResNet backbone preset (with overrides) and InvaSpread's arguments.

- `invaspread_cifar_resnet18`: the authors' CIFAR-10 setting (mangye16/
  Unsupervised_Embedding_Learning, `demo_seen.py` and its README command
  `--batch-t 0.1 --lr 0.03 --low-dim 128 --batch-size 128`): a CIFAR ResNet-18
  (3x3 stride-1 stem, no max pool, 1x1-conv shortcuts where the shape changes,
  `models/resnet_cifar.py`), a linear 512 -> 128 embedding, L2-normalised,
  tau 0.1, their CIFAR-10 normalisation. The paper reports 83.6 % kNN accuracy
  (k = 200, weighted) on CIFAR-10 with it (Table 1), on the 128-d embedding.
- `invaspread_resnet20_cifar`: the same settings on the ResNet paper's CIFAR
  ResNet-20 (0.27M parameters, h 64-d), for CPU runs.
- `invaspread_tiny`: two residual blocks (8, 16 filters), a 32-d embedding: tests
  and smoke runs.
"""

from keras_paperzoo.models.common_presets import trainer_preset
from keras_paperzoo.models.resnet.resnet_presets import resnet18_cifar, tiny_resnet_cifar

# demo_seen.py's transforms.Normalize, applied after each view's augmentation.
_CIFAR_STATISTICS = {"mean": [0.4914, 0.4822, 0.4465], "std": [0.2023, 0.1994, 0.2010]}

INVASPREAD_PRESETS = {
    "invaspread_cifar_resnet18": trainer_preset(
        "InvaSpread's CIFAR-10 setting (the authors' demo_seen.py): CIFAR ResNet-18, linear "
        "512-128 embedding, tau 0.1, batch 128, SGD lr 0.03; 83.6 % kNN on CIFAR-10 (paper, Table 1).",
        "resnet18", resnet18_cifar(), temperature=0.1, embedding_dim=128, augmentation=dict(_CIFAR_STATISTICS)),
    "invaspread_resnet20_cifar": trainer_preset(
        "CPU-sized InvaSpread: CIFAR ResNet-20, linear 64-128 embedding, tau 0.1.",
        "resnet20_cifar", temperature=0.1, embedding_dim=128),
    "invaspread_tiny": trainer_preset(
        "A smoke-test InvaSpread: CIFAR-style ResNet with two blocks (8, 16 filters), 32-d embedding.",
        "resnet20_cifar", tiny_resnet_cifar(), temperature=0.1, embedding_dim=32),
}
