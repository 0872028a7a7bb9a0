"""CPC's augmentations: of the whole image (v1), and of each patch (v1's jitter, v2's colour dropping).

CPC v1 (van den Oord et al. 2018, Sec. 3.2): "The 256x256 images are randomly
cropped from a 300x300 image, horizontally flipped with a probability of 50% and
converted to greyscale. For each of the 64x64 crops we randomly take a 60x60
subcrop and pad them back to a 64x64 image." CPC v2 (Henaff et al. 2019) adds
"the 'color dropping' method [...], which randomly drops two of the three color
channels in each patch" (and a fixed AutoAugment-style policy, elastic
deformations and colour transforms, which are not implemented here).

- `CPCAugmentation` (images -> images): the random crop as a random resized crop
  of a fixed area fraction (256 / 300)^2 and aspect 1 (the crop of a 300-pixel
  image, resized back to the image's size: the same framing, at the image's
  resolution), the flip, grayscale with probability `grayscale`, then (x - mean) /
  std. At inference only the normalisation.
- `PatchAugmentation` (patches -> patches): per patch, a random (p - j) x (p - j)
  subcrop placed back in the middle of a zero p x p patch (a jitter of up to j / 2
  pixels each way; v1's j = 4 of 64), and, with `color_dropping`, one random
  channel kept and the other two set to 0 (the dataset mean, after the
  normalisation; Doersch et al. 2015's colour dropping fills them with faint
  noise instead).
"""

import numpy as np

import keras

from keras_paperzoo.data.views import (
    RandomResizedCrop,
    ViewPipeline,
    check_interval,
    check_range,
    offset_seed,
)
from keras_paperzoo.data.views.base import DataLayer  # Keras's DataLayer: no public equivalent in Keras 3.15

V1_CROP_AREA = (256 / 300) ** 2  # a 256 x 256 crop of a 300 x 300 image


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class CPCAugmentation(ViewPipeline):
    """CPC v1's image augmentation: random crop, horizontal flip, grayscale, then normalisation.

    Args:
        image_size: int or (height, width), the output size (the image's own).
        crop_scale: (min, max) area fraction of the square random crop; v1's
            crop of 256 from 300 pixels is (0.728, 0.728).
        flip: bool, a horizontal flip with probability 0.5.
        grayscale: probability of converting an image to grayscale (v1: 1.0, every
            image; CPC v2 drops colours per patch instead: 0).
        mean, std: optional per-channel normalisation applied last (also at inference).
        seed: int or None.

    Example:

    ```python
    augment = CPCAugmentation(256)                                # v1
    augment = CPCAugmentation(32, crop_scale=(0.5, 1.0), grayscale=0.0, mean=m, std=s)
    ```
    """

    def __init__(self, image_size=256, crop_scale=(V1_CROP_AREA, V1_CROP_AREA), flip=True, grayscale=1.0,
                 mean=None, std=None, seed=None, **kwargs):
        kwargs.setdefault("name", "cpc_augmentation")
        super().__init__(image_size, mean, std, **kwargs)
        self.crop_scale = check_interval("crop_scale", crop_scale)
        check_range("grayscale", grayscale, 0.0, 1.0)
        self.flip, self.grayscale, self.seed = bool(flip), float(grayscale), seed

        # === Layers ===
        height, width = self.image_size
        self.crop = RandomResizedCrop(height, width, scale=self.crop_scale, ratio=(1.0, 1.0), seed=offset_seed(seed, 0))
        self.flipper = keras.layers.RandomFlip("horizontal", seed=offset_seed(seed, 1)) if self.flip else None
        self.gray = keras.layers.RandomGrayscale(factor=self.grayscale, seed=offset_seed(seed, 2)) if self.grayscale else None

    def call(self, images, training=True):
        x = self.crop(images, training=training)
        if training:
            x = self.flipper(x, training=True) if self.flipper is not None else x
            x = self.gray(x, training=True) if self.gray is not None and x.shape[-1] == 3 else x
        return self.normalize(x)

    def get_config(self):
        config = super().get_config()
        config.update({"crop_scale": list(self.crop_scale), "flip": self.flip, "grayscale": self.grayscale,
                       "seed": self.seed})
        return config


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class PatchAugmentation(DataLayer):
    """Each patch of a grid on its own: v1's spatial jitter and v2's colour dropping.

    (B, rows, cols, p, p, C) -> the same shape. Training only; the identity at inference.

    Args:
        jitter: int >= 0, j: a random (p - j) x (p - j) subcrop of each patch is
            placed in the middle of a zero patch (v1: 4 for 64-pixel patches).
        color_dropping: bool, keep one random channel of each patch and set the
            others to 0 (v2).
        seed: int or None.

    Example:

    ```python
    augment = PatchAugmentation(jitter=4, color_dropping=True)
    patches = augment(PatchGrid(64, 32)(images), training=True)
    ```
    """

    def __init__(self, jitter=0, color_dropping=False, seed=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(jitter, bool) or not isinstance(jitter, int) or jitter < 0:
            raise ValueError(f"PatchAugmentation jitter must be an int >= 0 (pixels); got {jitter!r}.")
        self.jitter, self.color_dropping, self.seed = jitter, bool(color_dropping), seed
        self.generator = keras.random.SeedGenerator(seed)

    def build(self, input_shape):
        if len(input_shape) != 6:
            raise ValueError(f"PatchAugmentation takes a grid of patches (B, rows, cols, p, p, C); got shape "
                             f"{tuple(input_shape)}.")
        if self.jitter >= min(input_shape[3:5]):
            raise ValueError(f"PatchAugmentation jitter {self.jitter} must be smaller than the patch side "
                             f"{min(input_shape[3:5])}.")
        self.built = True

    def call(self, patches, training=True):
        if not training or (not self.jitter and not self.color_dropping):
            return patches
        np_, random = self.backend.numpy, self.backend.random
        seed = self._get_seed_generator(self.backend._backend)
        grid_shape = patches.shape[1:]
        rows, cols, height, width, channels = grid_shape
        x = np_.reshape(patches, (-1, height, width, channels))  # (N, p, p, C): every patch
        count = self.backend.shape(x)[0]
        if self.jitter:
            j = self.jitter
            # Subcrop at offset o in [0, j], placed at offset j // 2: output (y, x) reads input (y + o - j // 2, ...).
            offsets = np_.floor(random.uniform((count, 2), 0.0, j + 1.0, seed=seed))  # (N, 2): (oy, ox)
            shift = offsets - float(j // 2)
            zeros, ones = np_.zeros_like(shift[:, 0]), np_.ones_like(shift[:, 0])
            transform = np_.stack([ones, zeros, shift[:, 1], zeros, ones, shift[:, 0], zeros, zeros], axis=1)
            x = self.backend.image.affine_transform(x, self.backend.cast(transform, "float32"),
                                                    interpolation="nearest", fill_mode="constant", fill_value=0)
            window = np.zeros((1, height, width, 1), "float32")
            window[:, j // 2: j // 2 + height - j, j // 2: j // 2 + width - j] = 1.0
            x = x * self.backend.convert_to_tensor(window, x.dtype)  # zero outside the (p - j) x (p - j) subcrop
        if self.color_dropping:
            kept = np_.floor(random.uniform((count,), 0.0, float(channels), seed=seed))  # (N,): the kept channel
            channel = self.backend.convert_to_tensor(np.arange(channels, dtype="float32")[None, :])
            keep = self.backend.cast(np_.equal(kept[:, None], channel), x.dtype)  # (N, C)
            x = x * keep[:, None, None, :]
        return np_.reshape(x, (-1, *grid_shape))

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "jitter": self.jitter, "color_dropping": self.color_dropping,
                "seed": self.seed}
