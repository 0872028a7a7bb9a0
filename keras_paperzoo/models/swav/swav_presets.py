"""Named SwAV configurations: a ResNet backbone preset (with overrides) and SwAV's arguments.

Every backbone takes images of any size (`image_shape` (None, None, 3)): multi-crop
feeds it full-size and small crops. The augmentation's `image_size` is the
full-size crops' side (`SwAV.from_preset(..., image_shape=(H, W, C))` sets it).

- `swav_resnet50`: the paper's 75.3 % model (800 epochs at batch 4096, 2 x 224 +
  6 x 96 crops, K = 3000, eps 0.05, no queue at that batch).
- `swav_resnet50_bs256`: the authors' batch-256 setting (72.7 % at 200 epochs,
  74.3 % at 400): the same with a queue of 3840 features from epoch 15.
- `swav_cifar_resnet18`: a CIFAR ResNet-18 (3x3 stem, no max pool), lightly's
  CIFAR-10 benchmark backbone (SwAV kNN 84.2 % at 200 epochs, batch 512), the
  paper's heads, K = 3000, multi-crop 2 x 32 + 6 x 14 (SwAV's proportions),
  colour strength 0.5 and no blur on 32-pixel images (SimCLR's CIFAR choice).
- `swav_resnet20_cifar`: CIFAR ResNet-20, projector 256-64, K = 64 (a CPU run
  sees batches of 64-128: K must stay below what a batch can spread over), 2 x 32 +
  6 x 14 crops.
- `swav_tiny`: two residual blocks (8, 16 filters), projector 32-16, K = 8, crops
  2 + 2: tests and smoke runs.
"""

from keras_paperzoo.models.common_presets import trainer_preset
from keras_paperzoo.models.resnet.resnet_presets import resnet18_cifar, tiny_resnet_cifar

_ANY_SIZE = (None, None, 3)
_SMALL_IMAGES = {"color_strength": 0.5, "blur": False}

SWAV_PRESETS = {
    "swav_resnet50": trainer_preset(
        "SwAV (Caron et al. 2020): ResNet-50, projector 2048-128, 3000 prototypes, 2 x 224 + 6 x 96 "
        "crops; 75.3 % ImageNet linear (800 epochs, batch 4096).",
        "resnet50", {"image_shape": _ANY_SIZE}, projection_dims=[2048, 128], num_prototypes=3000,
        crop_counts=[2, 6], augmentation={"image_size": 224}),
    "swav_resnet50_bs256": trainer_preset(
        "SwAV at batch 256: the 75.3 % model's settings plus a queue of 3840 features from epoch 15; "
        "72.7 % (200 epochs) / 74.3 % (400 epochs) ImageNet linear.",
        "resnet50", {"image_shape": _ANY_SIZE}, projection_dims=[2048, 128], num_prototypes=3000,
        crop_counts=[2, 6], queue_length=3840, queue_start_epoch=15, augmentation={"image_size": 224}),
    "swav_cifar_resnet18": trainer_preset(
        "SwAV on a CIFAR ResNet-18 with the paper's heads, 2 x 32 + 6 x 14 crops; lightly's CIFAR-10 "
        "kNN: 84.2 % at 200 epochs, batch 512.",
        "resnet18", resnet18_cifar(image_shape=_ANY_SIZE), projection_dims=[2048, 128], num_prototypes=3000,
        crop_counts=[2, 6], augmentation={"image_size": 32, **_SMALL_IMAGES}),
    "swav_resnet20_cifar": trainer_preset(
        "CPU-sized SwAV: CIFAR ResNet-20, projector 256-64, 64 prototypes, 2 x 32 + 6 x 14 crops.",
        "resnet20_cifar", {"image_shape": _ANY_SIZE}, projection_dims=[256, 64], num_prototypes=64,
        crop_counts=[2, 6], augmentation={"image_size": 32, **_SMALL_IMAGES}),
    "swav_tiny": trainer_preset(
        "A smoke-test SwAV: CIFAR-style ResNet with two blocks (8, 16 filters), projector 32-16, "
        "8 prototypes, 2 + 2 crops.",
        "resnet20_cifar", tiny_resnet_cifar(image_shape=_ANY_SIZE), projection_dims=[32, 16], num_prototypes=8,
        crop_counts=[2, 2], augmentation={"image_size": 16, **_SMALL_IMAGES}),
}
