"""MoCo's augmentation: one random view per call, v1's or v2's ("aug+") pipeline.

MoCo v1 (He et al. 2020, Sec. 4) uses InstDisc's recipe: a random resized crop
(scale 0.2-1), random grayscale (p = 0.2), colour jitter (0.4, 0.4, 0.4, 0.4)
and a horizontal flip. MoCo v2 (Chen et al. 2020, "Improved Baselines",
"aug+") follows SimCLR: the crop, colour jitter (0.4, 0.4, 0.4, 0.1) applied
with p = 0.8, grayscale (p = 0.2), Gaussian blur with sigma in [0.1, 2] applied
with p = 0.5, and the flip. (Parameter values verified in the authors'
`main_moco.py`; see ../shared/papers/contrastive-learning.md.) Each call draws
new randomness per image, so calling a pipeline twice on a batch gives two
independent views:

```python
augment = MoCoAugmentation(version=2, image_size=32)
view_q, view_k = augment(images), augment(images)
dataset.map(lambda x: ((augment(x), augment(x)),))   # in tf.data, any backend
```

The steps are the generic view layers of `keras_paperzoo.data.views`; InstDisc
uses v1's pipeline (`models/instdisc`).
"""

import keras

from keras_paperzoo.data.views import (
    ColorJitter,
    GaussianBlur,
    RandomResizedCrop,
    ViewPipeline,
    check_interval,
    check_range,
    offset_seed,
)

MOCO_AUGMENTATIONS = {
    # version: the pipeline of the authors' main_moco.py (verified, see the module docstring).
    1: {"jitter": (0.4, 0.4, 0.4, 0.4), "jitter_probability": 1.0, "blur_probability": 0.0},
    2: {"jitter": (0.4, 0.4, 0.4, 0.1), "jitter_probability": 0.8, "blur_probability": 0.5},
}


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class MoCoAugmentation(ViewPipeline):
    """One random view of each image: MoCo v1's or v2's ("aug+") pipeline.

    v1: RandomResizedCrop(scale 0.2-1) -> RandomGrayscale(0.2) -> ColorJitter(0.4,
    0.4, 0.4, 0.4) -> horizontal flip. v2: RandomResizedCrop(scale 0.2-1) ->
    ColorJitter(0.4, 0.4, 0.4, 0.1) with p = 0.8 -> RandomGrayscale(0.2) ->
    GaussianBlur(sigma 0.1-2) with p = 0.5 -> horizontal flip. Then, if given,
    (x - mean) / std. Call it twice for two independent views. At inference the
    images are only resized and normalised.

    Args:
        version: 1 or 2.
        image_size: int or (height, width), the crop's output size (224 in the
            papers; the images' own size for CIFAR).
        mean, std: optional per-channel normalisation applied last.
        blur_probability: overrides v2's 0.5 (e.g. 0 for 32x32 images, where the
            MoCo authors' CIFAR demo uses no blur).
        crop_scale: (min, max) area fraction of the random resized crop (0.2, 1).
        seed: int or None.

    Example:

    ```python
    augment = MoCoAugmentation(version=2, image_size=32)
    view_q, view_k = augment(images), augment(images)
    ```
    """

    def __init__(self, version=2, image_size=224, mean=None, std=None, blur_probability=None,
                 crop_scale=(0.2, 1.0), seed=None, **kwargs):
        kwargs.setdefault("name", "moco_augmentation")
        super().__init__(image_size, mean, std, **kwargs)
        if version not in MOCO_AUGMENTATIONS:
            raise ValueError(f"version must be 1 or 2; got {version!r}.")
        size = self.image_size
        recipe = dict(MOCO_AUGMENTATIONS[version])
        if blur_probability is not None:
            check_range("blur_probability", blur_probability, 0.0, 1.0)
            recipe["blur_probability"] = float(blur_probability)
        self.version = version
        self.blur_probability = blur_probability
        self.crop_scale = check_interval("crop_scale", crop_scale)
        self.seed = seed

        # === Layers ===
        self.crop = RandomResizedCrop(size[0], size[1], scale=self.crop_scale, seed=offset_seed(seed, 0))
        self.jitter = ColorJitter(*recipe["jitter"], probability=recipe["jitter_probability"], seed=offset_seed(seed, 1))
        self.grayscale = keras.layers.RandomGrayscale(factor=0.2, seed=offset_seed(seed, 2))
        self.blur = (
            GaussianBlur(sigma=(0.1, 2.0), probability=recipe["blur_probability"], seed=offset_seed(seed, 3))
            if recipe["blur_probability"] > 0 else None
        )
        self.flip = keras.layers.RandomFlip("horizontal", seed=offset_seed(seed, 4))

    def call(self, images, training=True):
        x = self.crop(images, training=training)
        if training:
            color = x.shape[-1] == 3
            if self.version == 1:
                x = self.grayscale(x, training=True) if color else x
                x = self.jitter(x, training=True)
            else:
                x = self.jitter(x, training=True)
                x = self.grayscale(x, training=True) if color else x
                x = self.blur(x, training=True) if self.blur is not None else x
            x = self.flip(x, training=True)
        return self.normalize(x)

    def get_config(self):
        config = super().get_config()
        config.update(
            {"version": self.version, "blur_probability": self.blur_probability,
             "crop_scale": list(self.crop_scale), "seed": self.seed}
        )
        return config
