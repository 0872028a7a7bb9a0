"""Crops: the random resized crop of the self-supervised papers, the supervised crop and flip, the evaluation crops.

- `RandomResizedCrop`: torchvision's, which MoCo, InstDisc, SimCLR, BYOL and SwAV
  use. Keras 3.15 has none (`RandomZoom` keeps the aspect ratio distribution and
  the centre).
- `crop_and_flip`: the arithmetic of ResNet's CIFAR augmentation (a crop per image
  of the zero-padded images, and a mirror), in NumPy or `keras.ops`
  (`supervised.CifarAugmentation` draws the offsets).
- `center_crop`, `ten_crop`, `ten_crop_predict`: the evaluation crops (AlexNet's
  10-crop: the four corners and the centre, and their mirrors).
"""

import math

import numpy as np

import keras
from keras import ops

from keras_paperzoo.data.views.base import RandomLayer
from keras_paperzoo.data.views.checks import check_interval


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class RandomResizedCrop(RandomLayer):
    """Crop a random area and aspect ratio of each image, resized to (height, width).

    torchvision's `RandomResizedCrop`, which MoCo, InstDisc and SimCLR use: the
    crop covers a fraction of the image area drawn uniformly from `scale` and has
    an aspect ratio whose log is uniform over log(`ratio`); up to 10 draws are
    tried for a crop that fits, else the whole image (centre crop at the nearest
    allowed ratio). The crop is resampled bilinearly. Unlike torchvision, crop
    sizes and offsets are not rounded to whole pixels.

    At inference (`training=False`) the image is only resized to (height, width).

    Args:
        height, width: output size.
        scale: (min, max) fraction of the image area; MoCo uses (0.2, 1.0),
            torchvision's default is (0.08, 1.0).
        ratio: (min, max) aspect ratio width / height.
        seed: int or None.

    Example:

    ```python
    crop = RandomResizedCrop(32, 32, scale=(0.2, 1.0), seed=0)
    crop(images).shape  # (B, 32, 32, C)
    ```
    """

    ATTEMPTS = 10

    def __init__(self, height, width, scale=(0.2, 1.0), ratio=(3 / 4, 4 / 3), seed=None, **kwargs):
        super().__init__(**kwargs)
        for name, size in (("height", height), ("width", width)):
            if not isinstance(size, int) or size < 1:
                raise ValueError(f"RandomResizedCrop {name} must be an int >= 1; got {size!r}.")
        self.height, self.width = height, width
        self.scale = check_interval("scale", scale)
        if self.scale[1] > 1.0:
            raise ValueError(f"scale is a fraction of the image area, at most 1; got {scale!r}.")
        self.ratio = check_interval("ratio", ratio)
        self.seed = seed
        self.generator = keras.random.SeedGenerator(seed)

    def _resize(self, images, height, width):
        return self.backend.image.resize(images, (height, width), interpolation="bilinear")

    def inference(self, images):
        if tuple(images.shape[-3:-1]) == (self.height, self.width):
            return images
        batched = len(images.shape) == 4
        images = images if batched else self.backend.numpy.expand_dims(images, 0)
        outputs = self._resize(self.backend.cast(images, self.compute_dtype), self.height, self.width)
        return outputs if batched else self.backend.numpy.squeeze(outputs, 0)

    def augment(self, images):
        np_ = self.backend.numpy
        height, width = images.shape[1], images.shape[2]
        if height is None or width is None:
            raise ValueError(
                f"RandomResizedCrop needs a static image size; got shape {tuple(images.shape)}."
            )
        if height < self.height or width < self.width:
            # Upsample first so that the crop can be taken by slicing the transform's output.
            height, width = max(height, self.height), max(width, self.width)
            images = self._resize(images, height, width)
        batch = self.backend.shape(images)[0]
        seed = self._get_seed_generator(self.backend._backend)
        random = self.backend.random
        shape = (batch, self.ATTEMPTS)
        area = random.uniform(shape, self.scale[0], self.scale[1], seed=seed) * (height * width)
        log_ratio = random.uniform(shape, math.log(self.ratio[0]), math.log(self.ratio[1]), seed=seed)
        aspect = np_.exp(log_ratio)
        crop_w = np_.sqrt(area * aspect)  # (B, attempts)
        crop_h = np_.sqrt(area / aspect)
        fits = np_.logical_and(crop_w <= width, crop_h <= height)
        first = np_.argmax(self.backend.cast(fits, "int32"), axis=1)[:, None]  # (B, 1)
        any_fit = np_.any(fits, axis=1)  # (B,)
        crop_w = np_.take_along_axis(crop_w, first, axis=1)[:, 0]  # (B,)
        crop_h = np_.take_along_axis(crop_h, first, axis=1)[:, 0]
        # torchvision's fallback: a centre crop of the whole image at the nearest allowed ratio.
        image_ratio = width / height
        if image_ratio < self.ratio[0]:
            fallback_w, fallback_h = width, width / self.ratio[0]
        elif image_ratio > self.ratio[1]:
            fallback_w, fallback_h = height * self.ratio[1], height
        else:
            fallback_w, fallback_h = width, height
        crop_w = np_.where(any_fit, crop_w, fallback_w)
        crop_h = np_.where(any_fit, crop_h, fallback_h)
        u = random.uniform((batch, 2), seed=seed)
        left = np_.where(any_fit, u[:, 0] * (width - crop_w), (width - crop_w) / 2)  # (B,)
        top = np_.where(any_fit, u[:, 1] * (height - crop_h), (height - crop_h) / 2)
        # Output pixel (x, y) samples the input at (left + (x + 1/2) sx - 1/2, top + (y + 1/2) sy - 1/2).
        sx, sy = crop_w / self.width, crop_h / self.height
        zeros = np_.zeros_like(sx)
        transform = np_.stack(
            [sx, zeros, left + 0.5 * sx - 0.5, zeros, sy, top + 0.5 * sy - 0.5, zeros, zeros], axis=1
        )  # (B, 8)
        transform = self.backend.cast(transform, "float32")
        outputs = self.backend.image.affine_transform(
            images, transform, interpolation="bilinear", fill_mode="nearest"
        )  # (B, H, W, C): the crop fills the top-left (height, width) corner
        return outputs[:, : self.height, : self.width, :]

    def compute_output_shape(self, input_shape):
        return (*input_shape[:-3], self.height, self.width, input_shape[-1])

    def get_config(self):
        config = super().get_config()
        config.update(
            {"height": self.height, "width": self.width, "scale": list(self.scale),
             "ratio": list(self.ratio), "seed": self.seed}
        )
        return config


def crop_and_flip(images, top, left, flip, padding, size, xp=ops):
    """Zero-pad, crop each image at its own offset, mirror the chosen ones.

    The arithmetic of ResNet's CIFAR augmentation, written once for NumPy (`xp=np`,
    the data loader's fast path) and `keras.ops` (inside a model or a step).

    Args:
        images: (B, H, W, C).
        top, left: (B,) int offsets into the padded image, in [0, H + 2 padding - size].
        flip: (B,) bool, mirror left-right.
        padding, size: ints.

    Returns:
        (B, size, size, C).

    Example:

    ```python
    crops = crop_and_flip(images, top, left, flip, padding=4, size=32, xp=np)
    ```
    """
    padded = xp.pad(images, ((0, 0), (padding, padding), (padding, padding), (0, 0)))  # (B, H+2p, W+2p, C)
    if xp is np:  # a slice per image: 10x faster than a fancy-indexing gather or take_along_axis
        crops = np.empty((len(padded), size, size, *padded.shape[3:]), padded.dtype)  # (B, size, size, C)
        for b, (t, l, f) in enumerate(zip(top, left, flip)):
            window = padded[b, t : t + size, l : l + size]
            crops[b] = window[:, ::-1] if f else window
        return crops
    rows = ops.cast(top, "int32")[:, None] + ops.arange(size, dtype="int32")  # (B, size)
    cols = ops.cast(left, "int32")[:, None] + ops.arange(size, dtype="int32")  # (B, size)
    crops = ops.take_along_axis(padded, rows[:, :, None, None], axis=1)  # (B, size, W+2p, C)
    crops = ops.take_along_axis(crops, cols[:, None, :, None], axis=2)  # (B, size, size, C)
    return ops.where(flip[:, None, None, None], ops.flip(crops, axis=2), crops)


def center_crop(images, size):
    """The central (size x size) crop of (B, H, W, C) images."""
    height, width = images.shape[1], images.shape[2]
    if height < size or width < size:
        raise ValueError(f"center_crop: images of {height}x{width} are smaller than the crop {size}.")
    top, left = (height - size) // 2, (width - size) // 2
    return images[:, top : top + size, left : left + size]


def ten_crop(images, size):
    """AlexNet's test-time crops: 4 corners + centre, and their mirrors -> (10, B, size, size, C)."""
    height, width = images.shape[1], images.shape[2]
    if height < size or width < size:
        raise ValueError(f"ten_crop: images of {height}x{width} are smaller than the crop {size}.")
    crops = [
        images[:, :size, :size],
        images[:, :size, width - size :],
        images[:, height - size :, :size],
        images[:, height - size :, width - size :],
        center_crop(images, size),
    ]
    crops += [ops.flip(crop, axis=2) for crop in crops]
    return ops.stack(crops, axis=0)


def ten_crop_predict(model, images, size, batch_size=64):
    """Average the softmax of `model` over the ten crops (AlexNet Sec. 4.1). NumPy out."""
    crops = ops.convert_to_numpy(ten_crop(ops.convert_to_tensor(images), size))
    probabilities = [
        ops.convert_to_numpy(ops.softmax(ops.convert_to_tensor(model.predict(c, batch_size=batch_size, verbose=0))))
        for c in crops
    ]
    return np.mean(probabilities, axis=0)
