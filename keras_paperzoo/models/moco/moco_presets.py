"""Named MoCo configurations: a ResNet backbone preset (with overrides) and MoCo's arguments.

- `moco_v1_resnet50`, `moco_v2_resnet50`: the papers' ImageNet settings (He et al.
  2020; Chen et al. 2020), batch 256 on 8 GPUs, so 8 shuffle-BN groups of 32.
- `moco_cifar_resnet18`: the MoCo authors' CIFAR-10 demo (their README; the
  small-scale anchor of kNN 82.6 % at 200 epochs): ResNet-18 with a 3x3 stem and no
  max pool, linear 128-d head, K = 4096, m = 0.99, tau = 0.1, 8 BN splits, v2
  augmentation without blur. (The demo also trains with lr 0.06 at batch 512,
  weight decay 5e-4 and cosine decay: pass those to `compile`.)
- `moco_v1_resnet20_cifar`, `moco_v2_resnet20_cifar`: CPU-sized versions on the
  ResNet paper's CIFAR ResNet-20 (0.27M parameters), K = 4096, MLP hidden width
  the backbone's (64), as the authors' code sets it, and m = 0.99 as in their
  CIFAR demo: runs of a few hundred updates barely move a key encoder at 0.999
  (0.999^300 = 0.74 of it is still the initialisation). On `digits`, 30 epochs
  (330 updates) raised the kNN accuracy from 0.70 to 0.86 at m = 0.99 and only
  from 0.67 to 0.82 at m = 0.999.
- `moco_v2_resnet8_mnist`: the CPU MoCo v2 on a CIFAR ResNet-8 (one block per
  stage, 16-32-64 filters, 75k parameters), K = 2048 and the paper's m = 0.999:
  the momentum ablation on MNIST (`applications/moco_cifar.py --dataset mnist`),
  sized so that a 2-core CPU runs the ~3,000 updates that m = 0.999 needs
  (0.999^3000 = 0.05 of the key encoder left at its initialisation): 0.26 s per
  update at batch 64 (TensorFlow, load 4) against 0.48 s for ResNet-20.
- `moco_tiny`: two residual blocks (8 and 16 filters), K = 256: for tests and
  smoke runs.
"""

from keras_paperzoo.models.common_presets import trainer_preset
from keras_paperzoo.models.resnet.resnet_presets import resnet18_cifar, tiny_resnet_cifar

MOCO_PRESETS = {
    "moco_v1_resnet50": trainer_preset(
        "MoCo v1 (He et al. 2020): ResNet-50, linear 128-d head, K=65536, "
        "m=0.999, tau=0.07, v1 augmentation at 224.",
        "resnet50", version=1, queue_size=65536, momentum=0.999, temperature=0.07),
    "moco_v2_resnet50": trainer_preset(
        "MoCo v2 (Chen et al. 2020): ResNet-50, MLP head 2048-2048-128, "
        "K=65536, m=0.999, tau=0.2, aug+ (blur) at 224.",
        "resnet50", version=2, queue_size=65536, momentum=0.999, temperature=0.2),
    "moco_cifar_resnet18": trainer_preset(
        "The MoCo authors' CIFAR-10 demo: ResNet-18 (3x3 stem, no max pool), "
        "linear 128-d head, K=4096, m=0.99, tau=0.1, 8 BN splits, v2 augmentation "
        "without blur; reported kNN 82.6 % after 200 epochs.",
        "resnet18", resnet18_cifar(), version=1, queue_size=4096, momentum=0.99, temperature=0.1,
        augmentation={"version": 2, "blur_probability": 0.0}),
    "moco_v1_resnet20_cifar": trainer_preset(
        "CPU-sized MoCo v1: CIFAR ResNet-20 backbone, linear 128-d head, "
        "K=4096, m=0.99 (short runs), tau=0.07, v1 augmentation at 32x32.",
        "resnet20_cifar", version=1, queue_size=4096, momentum=0.99, temperature=0.07),
    "moco_v2_resnet20_cifar": trainer_preset(
        "CPU-sized MoCo v2: CIFAR ResNet-20 backbone, MLP head 64-64-128, "
        "K=4096, m=0.99 (short runs), tau=0.2, aug+ at 32x32.",
        "resnet20_cifar", version=2, queue_size=4096, momentum=0.99, temperature=0.2, projection_hidden_dim=64),
    "moco_v2_resnet8_mnist": trainer_preset(
        "CPU-sized MoCo v2 for long runs on small images: CIFAR ResNet-8 "
        "(1 block per stage, 16-32-64), MLP head 64-64-128, K=2048, m=0.999, tau=0.2, aug+.",
        "resnet20_cifar", {"stage_blocks": [1, 1, 1]}, version=2, queue_size=2048, momentum=0.999, temperature=0.2,
        projection_hidden_dim=64),
    "moco_tiny": trainer_preset(
        "A smoke-test MoCo v2: CIFAR-style ResNet with two blocks (8, 16 filters), "
        "MLP head 16-16-32, K=256, m=0.99, tau=0.2.",
        "resnet20_cifar", tiny_resnet_cifar(), version=2, queue_size=256, momentum=0.99, temperature=0.2,
        projection_dim=32, projection_hidden_dim=16),
}
