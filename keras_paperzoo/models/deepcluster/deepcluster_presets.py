"""Named DeepCluster configurations: a backbone preset (with overrides) and DeepCluster's arguments.

`num_data` (one pseudo-label per training image) is the training set's size: set it to
your data's (`paperzoo train deepcluster` does).

- `deepcluster_resnet50`: the paper's ImageNet arguments (Caron et al. 2018, Sec. 4:
  k = 10,000, PCA to 256, whitening, L2, 1,281,167 images) on a ResNet-50 (the paper
  trains AlexNet with batch norm and VGG-16; `AlexNetBackbone` / `VGGBackbone` can be
  passed as `backbone=`).
- `deepcluster_resnet20_cifar`: CPU-sized: the ResNet paper's CIFAR ResNet-20 (64-d
  features, so PCA keeps all 64), k = 100, 50,000 images. k is ten times the classes,
  as the paper's 10,000 is ten times ImageNet's (Sec. 6.1 finds k = 10,000 best; k =
  1,000 is worse).
- `deepcluster_tiny`: two residual blocks (8, 16 filters), k = 10, 256 images: tests.
"""

from keras_paperzoo.models.common_presets import trainer_preset
from keras_paperzoo.models.resnet.resnet_presets import tiny_resnet_cifar

DEEPCLUSTER_PRESETS = {
    "deepcluster_resnet50": trainer_preset(
        "DeepCluster (Caron et al. 2018) ImageNet arguments on ResNet-50: k=10,000, PCA-256 whitened, "
        "L2, 1,281,167 images (the paper: AlexNet-BN, linear conv4 ImageNet top-1 39.8 %, from memory).",
        "resnet50", num_data=1_281_167, num_clusters=10_000, pca_dim=256),
    "deepcluster_resnet20_cifar": trainer_preset(
        "CPU-sized DeepCluster: CIFAR ResNet-20 (64-d features, all kept by the PCA), k=100, "
        "50,000 images.",
        "resnet20_cifar", num_data=50_000, num_clusters=100, pca_dim=256),
    "deepcluster_tiny": trainer_preset(
        "A smoke-test DeepCluster: CIFAR-style ResNet with two blocks (8, 16 filters), k=10, "
        "256 images.",
        "resnet20_cifar", tiny_resnet_cifar(), num_data=256, num_clusters=10, pca_dim=256),
}
