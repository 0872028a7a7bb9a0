"""Named InstDisc configurations: a ResNet backbone preset (with overrides) and InstDisc's arguments.

`num_data` (the memory bank's rows) is the training set's size: set it to your data's
(`paperzoo train instdisc` does).

- `instdisc_resnet50`: the paper's ImageNet setting (Wu et al. 2018, Sec. 4.2 and the
  authors' `main.py`): ResNet-50, linear 128-d head, n = 1,281,167 rows, m = 4096
  noise samples, tau = 0.07, bank momentum 0.5 (`--nce-m`), MoCo v1's augmentation
  (the same as the authors'). The bank alone is 1,281,167 x 128 float32 = 656 MB.
- `instdisc_cifar_resnet18`: the authors' CIFAR-10 script (`cifar.py`): ResNet-18
  with a 3x3 stem and no max pool, n = 50,000, m = 4096, tau = 0.1 (its
  `--nce-t`). It also trains with weight decay 5e-4 (pass `weight_decay=5e-4` to
  `compile`) and without the horizontal flip (kept here: `MoCoAugmentation` has
  it). The paper reports kNN 80.8 % on CIFAR-10 for the non-parametric softmax
  (Table 1, ResNet-18; NCE with m = 4096 approaches it).
- `instdisc_resnet20_cifar`: CPU-sized: the ResNet paper's CIFAR ResNet-20 (0.27M
  parameters), otherwise the paper's ImageNet arguments, n = 50,000.
- `instdisc_softmax_resnet20_cifar`: the same with the softmax over the 1 + m rows
  instead of NCE (`loss="softmax"`, the objective of the authors' later memory-bank
  models): the `instdisc` recipe's default, because NCE with Z fixed from the first
  batch collapses on small data (see `recipes/instdisc.py`).
- `instdisc_tiny`: two residual blocks (8, 16 filters), a 32-d embedding, n = 256,
  m = 32: tests and smoke runs.
"""

from keras_paperzoo.models.common_presets import trainer_preset
from keras_paperzoo.models.resnet.resnet_presets import resnet18_cifar, tiny_resnet_cifar

# The paper's ImageNet arguments (Sec. 4.2): m = 4096 noise samples, tau = 0.07, a 128-d embedding.
_PAPER = {"num_negatives": 4096, "temperature": 0.07, "feature_dim": 128}

INSTDISC_PRESETS = {
    "instdisc_resnet50": trainer_preset(
        "InstDisc (Wu et al. 2018): ResNet-50, linear 128-d head, ImageNet's 1,281,167 bank rows, "
        "m=4096, tau=0.07, bank momentum 0.5; ImageNet linear 54.0 % (conv5 features, the CVPR paper as MoCo cites it).",
        "resnet50", num_data=1_281_167, **_PAPER),
    "instdisc_cifar_resnet18": trainer_preset(
        "The InstDisc authors' CIFAR-10 script: ResNet-18 (3x3 stem, no max pool), 50,000 bank "
        "rows, m=4096, tau=0.1 (compile with weight_decay=5e-4 as they do).",
        "resnet18", resnet18_cifar(), num_data=50_000, num_negatives=4096, temperature=0.1, feature_dim=128),
    "instdisc_resnet20_cifar": trainer_preset(
        "CPU-sized InstDisc: CIFAR ResNet-20, linear 128-d head, 50,000 bank rows, m=4096, "
        "tau=0.07, bank momentum 0.5, v1 augmentation at 32x32.",
        "resnet20_cifar", num_data=50_000, **_PAPER),
    "instdisc_softmax_resnet20_cifar": trainer_preset(
        "CPU-sized InstDisc with the softmax over the 1 + m rows (the authors' later models) instead "
        "of NCE: CIFAR ResNet-20, linear 128-d head, 50,000 bank rows, m=4096, tau=0.07.",
        "resnet20_cifar", num_data=50_000, **_PAPER, loss="softmax"),
    "instdisc_tiny": trainer_preset(
        "A smoke-test InstDisc: CIFAR-style ResNet with two blocks (8, 16 filters), 32-d "
        "embedding, 256 bank rows, m=32, tau=0.07.",
        "resnet20_cifar", tiny_resnet_cifar(), num_data=256, num_negatives=32, temperature=0.07, feature_dim=32),
}
