"""CMC's augmentation: a random resized crop and a horizontal flip, nothing else.

CMC (Tian et al. 2019) makes its two views by splitting colour channels, so the only
augmentation is geometric, the same for both views (one crop of the image, then L and
ab of that crop). The authors' `train_CMC.py` (HobbitLong/CMC) builds the training
transform as

    RandomResizedCrop(224, scale=(crop_low, 1)) -> RandomHorizontalFlip -> RGB2Lab -> Normalize

with `--crop_low` 0.2 by default and 0.08 for the ResNets on ImageNet. The Lab
conversion and its normalisation are the model's (`cmc_layers.LabViews`), so that the
encoder that is exported takes RGB images; this layer stays in RGB and, when given
the training set's per-channel `mean` and `std`, normalises the RGB view last, as
every augmentation of the package does (the model undoes it before the Lab
conversion).
"""

import keras

from keras_paperzoo.data.views import RandomResizedCrop, ViewPipeline, check_interval, offset_seed

DEFAULT_CROP_SCALE = (0.2, 1.0)  # the authors' --crop_low default (AlexNet); ResNets on ImageNet: 0.08


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class CMCAugmentation(ViewPipeline):
    """One random crop and flip of each RGB image, then optional (x - mean) / std.

    At inference (`training=False`) the images are only resized to `image_size` and
    normalised.

    Args:
        image_size: int or (height, width), the crop's output size (224 in the paper).
        crop_scale: (min, max) area fraction of the random resized crop ((0.2, 1):
            the authors' default; (0.08, 1) for their ImageNet ResNets).
        mean, std: optional per-channel RGB normalisation applied last.
        seed: int or None.

    Example:

    ```python
    augment = CMCAugmentation(32, crop_scale=(0.2, 1.0), seed=0)
    view = augment(images, training=True)   # (B, 32, 32, 3) RGB, one crop per image
    ```
    """

    def __init__(self, image_size=224, crop_scale=DEFAULT_CROP_SCALE, mean=None, std=None, seed=None, **kwargs):
        kwargs.setdefault("name", "cmc_augmentation")
        super().__init__(image_size, mean, std, **kwargs)
        self.crop_scale = check_interval("crop_scale", crop_scale)
        if self.crop_scale[1] > 1.0:
            raise ValueError(f"crop_scale is a fraction of the image area, at most 1; got {crop_scale!r}.")
        self.seed = seed

        # === Layers ===
        height, width = self.image_size
        self.crop = RandomResizedCrop(height, width, scale=self.crop_scale, seed=offset_seed(seed, 0))
        self.flip = keras.layers.RandomFlip("horizontal", seed=offset_seed(seed, 1))

    def call(self, images, training=True):
        x = self.crop(images, training=training)  # (B, height, width, 3)
        if training:
            x = self.flip(x, training=True)
        return self.normalize(x)

    def get_config(self):
        config = super().get_config()
        config.update({"crop_scale": list(self.crop_scale), "seed": self.seed})
        return config
