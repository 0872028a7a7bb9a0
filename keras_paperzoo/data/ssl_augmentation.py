"""The augmentations of contrastive self-supervised learning as Keras preprocessing layers.

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

All layers subclass Keras's `DataLayer` (the base of Keras's own preprocessing
layers: `self.backend` switches to TensorFlow ops inside `tf.data`), so they run
in `tf.data` pipelines and inside models on TensorFlow, JAX and PyTorch. Keras's
`RandomFlip` and `RandomGrayscale` are used as they are. Three are written here
because Keras 3.15's layers differ from the papers' (torchvision's):

- `RandomResizedCrop`: Keras has none (`RandomZoom` keeps the aspect ratio
  distribution and the centre).
- `ColorJitter`: Keras's `RandomBrightness` *adds* a delta where torchvision
  multiplies by b in [1 - 0.4, 1 + 0.4]; its `RandomSaturation` takes
  f / (1 - f) factors; and `RandomColorJitter` has no apply probability (v2's
  p = 0.8). Ours uses torchvision's formulas.
- `GaussianBlur`: Keras's `RandomGaussianBlur` draws one (sigma_x, sigma_y)
  pair per *batch*; the papers draw one isotropic sigma per image.
- `RandomSolarization` (BYOL): Keras's `Solarization` has no per-image
  probability.

SimCLR's and BYOL's per-view pipelines are built from these in
`view_recipes.py`; `multi_view.py` turns per-view pipelines into a list of views.

Images are expected in `value_range` (default [0, 1]); normalisation by the
dataset mean and std, if any, comes last (`mean`, `std`).
"""

import math

import keras
from keras.src.layers.preprocessing.data_layer import DataLayer  # Keras's documented base for tf.data-safe layers


def offset_seed(seed, offset):
    """The seed of a pipeline's `offset`-th random step (None stays None: unseeded)."""
    return None if seed is None else int(seed) + offset


def check_range(name, value, low, high):
    """Refuse `value` unless it is a number in [low, high], naming `name`."""
    if not (isinstance(value, (int, float)) and low <= value <= high):
        raise ValueError(f"{name} must be a number in [{low}, {high}]; got {value!r}.")


def check_interval(name, interval, low=0.0):
    if (
        not isinstance(interval, (list, tuple))
        or len(interval) != 2
        or not all(isinstance(v, (int, float)) for v in interval)
        or not low < interval[0] <= interval[1]
    ):
        raise ValueError(
            f"{name} must be (min, max) with {low} < min <= max; got {interval!r}."
        )
    return (float(interval[0]), float(interval[1]))


def _check_value_range(value_range):
    if (
        not isinstance(value_range, (list, tuple))
        or len(value_range) != 2
        or not value_range[0] < value_range[1]
    ):
        raise ValueError(f"value_range must be (low, high) with low < high; got {value_range!r}.")
    return (float(value_range[0]), float(value_range[1]))


def _check_image_size(image_size):
    """An int or (height, width) as a (height, width) tuple of ints >= 1."""
    size = (image_size, image_size) if isinstance(image_size, int) else image_size
    size = tuple(size) if isinstance(size, (list, tuple)) else ()
    if len(size) != 2 or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in size):
        raise ValueError(f"image_size must be an int or (height, width) of ints >= 1; got {image_size!r}.")
    return size


def _check_mean_std(mean, std):
    """Per-channel normalisation constants as lists of floats (or both None)."""
    if (mean is None) != (std is None):
        raise ValueError("mean and std go together: pass both or neither.")
    if mean is None:
        return None, None
    if any(float(s) <= 0 for s in std):
        raise ValueError(f"std must be > 0 per channel; got {std!r}.")
    return [float(m) for m in mean], [float(s) for s in std]


class _RandomLayer(DataLayer):
    """A DataLayer that works on batches (B, H, W, C) or single images (H, W, C)."""

    def __init__(self, **kwargs):
        # Augmentation computes in float32 under a mixed-precision policy too: the model's first
        # layer casts its output (a float16 / bfloat16 colour jitter would mix dtypes on TF).
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)

    def call(self, images, training=True):
        if not training:
            return self.inference(images)
        batched = len(images.shape) == 4
        if not batched:
            images = self.backend.numpy.expand_dims(images, 0)
        images = self.backend.cast(images, self.compute_dtype)
        outputs = self.augment(images)
        return outputs if batched else self.backend.numpy.squeeze(outputs, 0)

    def inference(self, images):
        return images

    def compute_output_shape(self, input_shape):
        return input_shape


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class RandomResizedCrop(_RandomLayer):
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


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class ColorJitter(_RandomLayer):
    """torchvision's `ColorJitter`, applied to each image with probability `probability`.

    Per image, factors b ~ U[1 - brightness, 1 + brightness], c ~ U[1 - contrast,
    1 + contrast], s ~ U[1 - saturation, 1 + saturation] (lower bounds at 0) and
    a hue shift h ~ U[-hue, hue] (a fraction of the colour wheel) give, in order:
    x <- b x; x <- c x + (1 - c) mean(gray(x)); x <- s x + (1 - s) gray(x); hue
    rotated by h in HSV; each step clipped to the value range. By default the
    four come in the fixed order above; `random_order=True` draws a new order per
    image, as torchvision's `ColorJitter`, SimCLR's `color_jitter_rand` and
    BYOL's `shuffle=True` do (it costs six cheap steps instead of three; the
    hue rotation still runs once). Single-channel images get brightness and
    contrast only.

    Args:
        brightness, contrast, saturation: floats >= 0 (0.4 in MoCo v1 and v2).
        hue: float in [0, 0.5] (0.4 in MoCo v1, 0.1 in v2).
        probability: chance that an image is jittered at all (1 in MoCo v1,
            0.8 in v2, torchvision's `RandomApply`).
        value_range: (low, high) of the pixel values.
        random_order: bool, a random order of the four operations per image.
        seed: int or None.

    Example:

    ```python
    jitter = ColorJitter(0.4, 0.4, 0.4, 0.1, probability=0.8)
    ```
    """

    def __init__(self, brightness=0.4, contrast=0.4, saturation=0.4, hue=0.1, probability=1.0,
                 value_range=(0.0, 1.0), random_order=False, seed=None, **kwargs):
        super().__init__(**kwargs)
        for name, value in (("brightness", brightness), ("contrast", contrast), ("saturation", saturation)):
            check_range(name, value, 0.0, float("inf"))
        check_range("hue", hue, 0.0, 0.5)
        check_range("probability", probability, 0.0, 1.0)
        self.value_range = _check_value_range(value_range)
        self.brightness, self.contrast = float(brightness), float(contrast)
        self.saturation, self.hue = float(saturation), float(hue)
        self.probability = float(probability)
        self.random_order = bool(random_order)
        self.seed = seed
        self.generator = keras.random.SeedGenerator(seed)

    def _gray(self, x):
        if x.shape[-1] == 1:
            return x
        return self.backend.image.rgb_to_grayscale(x)  # (B, H, W, 1)

    def _blend(self, x, chosen, factors):
        """One step: brightness (0), contrast (1), saturation (2) or nothing (3) per image, clipped.

        All three are x <- f x + (1 - f) target, with target 0 (brightness), the
        image's mean gray value (contrast) or each pixel's gray value (saturation).

        Args:
            x: (B, H, W, C) in [0, 1].
            chosen: an int, or (B,) ints: which operation each image gets.
            factors: (B, 3), the drawn brightness, contrast and saturation factors.
        """
        np_ = self.backend.numpy
        if isinstance(chosen, int):  # the same operation for every image
            if chosen == 3:
                return x
            factor = factors[:, chosen]
            target = 0.0 if chosen == 0 else self._gray(x)
            target = np_.mean(target, axis=(1, 2, 3), keepdims=True) if chosen == 1 else target
        else:
            gray = self._gray(x)  # (B, H, W, 1)
            chosen = np_.reshape(chosen, (-1, 1, 1, 1))
            factors = np_.concatenate([factors, np_.ones_like(factors[:, :1])], axis=1)  # factor 1: nothing
            factor = np_.take_along_axis(factors, np_.reshape(chosen, (-1, 1)), axis=1)[:, 0]  # (B,)
            mean = np_.mean(gray, axis=(1, 2, 3), keepdims=True)  # (B, 1, 1, 1)
            target = np_.where(chosen == 0, 0.0, np_.where(chosen == 1, mean, gray))  # (B, H, W, 1)
        factor = np_.reshape(factor, (-1, 1, 1, 1))
        return np_.clip(factor * x + (1.0 - factor) * target, 0.0, 1.0)

    def _rotate_hue(self, x, shift):
        """x with its hue rotated by shift (B,), a fraction of the colour wheel, in HSV."""
        np_ = self.backend.numpy
        hsv = self.backend.image.rgb_to_hsv(x)
        hue = np_.mod(hsv[..., 0] + np_.reshape(shift, (-1, 1, 1)), 1.0)
        return np_.clip(self.backend.image.hsv_to_rgb(np_.stack([hue, hsv[..., 1], hsv[..., 2]], axis=-1)), 0.0, 1.0)

    def augment(self, images):
        np_ = self.backend.numpy
        low, high = self.value_range
        x = (images - low) / (high - low)  # (B, H, W, C) in [0, 1]
        batch = self.backend.shape(images)[0]
        seed = self._get_seed_generator(self.backend._backend)
        u = self.backend.random.uniform((batch, 5), seed=seed)
        strengths = (self.brightness, self.contrast, self.saturation)
        lower = self.backend.convert_to_tensor([max(0.0, 1.0 - f) for f in strengths], dtype=u.dtype)
        upper = self.backend.convert_to_tensor([1.0 + f for f in strengths], dtype=u.dtype)
        factors = lower + (upper - lower) * u[:, :3]  # (B, 3), uniform on [max(0, 1 - f), 1 + f]
        hue_shift = (2.0 * u[:, 3] - 1.0) * self.hue  # (B,)
        rotate_hue = self.hue > 0 and images.shape[-1] != 1  # gray images: brightness and contrast only
        jittered = x
        if self.random_order:
            # order[b, k]: the operation at step k of image b (a random permutation of 0..3, 3 the hue).
            order = np_.argsort(self.backend.random.uniform((batch, 4), seed=seed), axis=1)  # (B, 4)
            hue_step = np_.argmax(self.backend.cast(order == 3, "int32"), axis=1)  # (B,)
            for step in range(3):  # the steps before the hue rotation
                jittered = self._blend(jittered, np_.where(hue_step > step, order[:, step], 3), factors)
            jittered = self._rotate_hue(jittered, hue_shift) if rotate_hue else jittered
            for step in range(1, 4):  # and after it
                jittered = self._blend(jittered, np_.where(hue_step < step, order[:, step], 3), factors)
        else:
            for operation, strength in enumerate(strengths):
                if strength and (operation < 2 or images.shape[-1] != 1):
                    jittered = self._blend(jittered, operation, factors)
            jittered = self._rotate_hue(jittered, hue_shift) if rotate_hue else jittered
        apply = np_.reshape(u[:, 4] < self.probability, (-1, 1, 1, 1))
        x = np_.where(apply, jittered, x)
        return self.backend.cast(x * (high - low) + low, self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update(
            {"brightness": self.brightness, "contrast": self.contrast, "saturation": self.saturation,
             "hue": self.hue, "probability": self.probability, "value_range": list(self.value_range),
             "random_order": self.random_order, "seed": self.seed}
        )
        return config


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class GaussianBlur(_RandomLayer):
    """Blur each image, with probability `probability`, by an isotropic Gaussian of random sigma.

    MoCo v2 / SimCLR: sigma ~ U[0.1, 2.0] pixels per image, applied with p = 0.5.
    The blur is separable: rows and then columns are multiplied by (B, H, H) and
    (B, W, W) Gaussian matrices whose rows are renormalised to sum to 1 near the
    borders (so flat images stay flat, where the papers' zero-padded 'SAME'
    convolutions darken the border). Without `kernel_size` it is exact (no
    truncation); with it, the Gaussian is cut to 2 * (kernel_size // 2) + 1 taps,
    as SimCLR's and BYOL's `gaussian_blur` do (an even size gets one tap more).

    Args:
        sigma: (min, max) standard deviation in pixels.
        probability: chance that an image is blurred.
        kernel_size: int >= 1 or None (exact); SimCLR and BYOL use 10 % of the
            image side (23 taps at 224).
        seed: int or None.

    Example:

    ```python
    blur = GaussianBlur(sigma=(0.1, 2.0), probability=0.5)
    ```
    """

    def __init__(self, sigma=(0.1, 2.0), probability=0.5, kernel_size=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.sigma = check_interval("sigma", sigma)
        check_range("probability", probability, 0.0, 1.0)
        if kernel_size is not None and (isinstance(kernel_size, bool) or not isinstance(kernel_size, int)
                                        or kernel_size < 1):
            raise ValueError(f"kernel_size must be an int >= 1 or None; got {kernel_size!r}.")
        self.probability = float(probability)
        self.kernel_size = kernel_size
        self.seed = seed
        self.generator = keras.random.SeedGenerator(seed)

    def _matrices(self, sigma, size):
        np_ = self.backend.numpy
        positions = np_.arange(size, dtype="float32")
        distance = positions[:, None] - positions[None, :]  # (size, size)
        weights = np_.exp(-(distance[None] ** 2) / (2.0 * np_.reshape(sigma, (-1, 1, 1)) ** 2))  # (B, size, size)
        if self.kernel_size is not None:
            weights = np_.where(np_.abs(distance) <= self.kernel_size // 2, weights, 0.0)
        return weights / np_.sum(weights, axis=-1, keepdims=True)

    def augment(self, images):
        np_ = self.backend.numpy
        batch = self.backend.shape(images)[0]
        seed = self._get_seed_generator(self.backend._backend)
        u = self.backend.random.uniform((batch, 2), seed=seed)
        sigma = self.sigma[0] + (self.sigma[1] - self.sigma[0]) * u[:, 0]  # (B,)
        rows = self._matrices(sigma, images.shape[1])  # (B, H, H)
        cols = self._matrices(sigma, images.shape[2])  # (B, W, W)
        x = self.backend.cast(images, "float32")
        blurred = np_.einsum("bij,bjwc->biwc", rows, x)  # blur along the height
        blurred = np_.einsum("bkw,biwc->bikc", cols, blurred)  # then along the width
        apply = np_.reshape(u[:, 1] < self.probability, (-1, 1, 1, 1))
        return self.backend.cast(np_.where(apply, blurred, x), self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update({"sigma": list(self.sigma), "probability": self.probability,
                       "kernel_size": self.kernel_size, "seed": self.seed})
        return config


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class RandomSolarization(_RandomLayer):
    """Solarise each image with probability `probability`: values at or above the threshold are inverted.

    BYOL (Grill et al. 2020, Table 6; `solarize` in the authors' augmentations.py):
    x -> x if x < 0.5 else 1 - x for images in [0, 1], applied with p = 0.2 to
    the second view only. In `value_range` (low, high) the threshold is low +
    `threshold` * (high - low) and the inversion x -> low + high - x. Keras's
    `Solarization` has no per-image probability (it solarises every image).

    Args:
        probability: chance that an image is solarised.
        threshold: float in [0, 1], a fraction of the value range (0.5 in BYOL).
        value_range: (low, high) of the pixel values.
        seed: int or None.

    Example:

    ```python
    solarize = RandomSolarization(probability=0.2)
    ```
    """

    def __init__(self, probability=0.2, threshold=0.5, value_range=(0.0, 1.0), seed=None, **kwargs):
        super().__init__(**kwargs)
        check_range("probability", probability, 0.0, 1.0)
        check_range("threshold", threshold, 0.0, 1.0)
        self.probability, self.threshold = float(probability), float(threshold)
        self.value_range = _check_value_range(value_range)
        self.seed = seed
        self.generator = keras.random.SeedGenerator(seed)

    def augment(self, images):
        np_ = self.backend.numpy
        low, high = self.value_range
        batch = self.backend.shape(images)[0]
        seed = self._get_seed_generator(self.backend._backend)
        apply = np_.reshape(self.backend.random.uniform((batch,), seed=seed) < self.probability, (-1, 1, 1, 1))
        solarised = np_.where(images < low + self.threshold * (high - low), images, low + high - images)
        return np_.where(apply, solarised, images)

    def get_config(self):
        config = super().get_config()
        config.update({"probability": self.probability, "threshold": self.threshold,
                       "value_range": list(self.value_range), "seed": self.seed})
        return config


class ViewPipeline(DataLayer):
    """Base of the one-view pipelines (MoCoAugmentation, view_recipes.ViewAugmentation).

    Its output is `image_size`; it holds no weights, only its steps' seeds; and
    (x - mean) / std per channel, if given, is its last step (`normalize`).
    """

    def __init__(self, image_size, mean=None, std=None, **kwargs):
        kwargs.setdefault("dtype", "float32")  # float32 under a mixed-precision policy
        super().__init__(**kwargs)
        self.image_size = _check_image_size(image_size)
        self.mean, self.std = _check_mean_std(mean, std)

    def build(self, input_shape):
        self.built = True  # the steps hold no weights (only seeds); they build on their first call

    def normalize(self, x):
        if self.mean is None:
            return x
        mean = self.backend.convert_to_tensor(self.mean, dtype=x.dtype)
        std = self.backend.convert_to_tensor(self.std, dtype=x.dtype)
        return (x - mean) / std

    def compute_output_shape(self, input_shape):
        return (*input_shape[:-3], *self.image_size, input_shape[-1])

    def get_config(self):
        config = super().get_config()
        config.update({"image_size": list(self.image_size), "mean": self.mean, "std": self.std})
        return config


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
