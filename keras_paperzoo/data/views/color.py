"""Colour augmentations and the per-channel statistics of a training set.

Written here because Keras 3.15's layers differ from the papers' (torchvision's):

- `ColorJitter`: Keras's `RandomBrightness` *adds* a delta where torchvision
  multiplies by b in [1 - 0.4, 1 + 0.4]; its `RandomSaturation` takes
  f / (1 - f) factors; and `RandomColorJitter` has no apply probability (MoCo
  v2's p = 0.8). Ours uses torchvision's formulas.
- `RandomSolarization` (BYOL): Keras's `Solarization` has no per-image
  probability.
- `PCAColorNoise`: AlexNet's colour augmentation (Krizhevsky et al. 2012,
  Sec. 4.1): add sum_i alpha_i lambda_i p_i, alpha_i ~ N(0, 0.1), using the
  eigenvalues and eigenvectors of the training set's RGB covariance (`rgb_pca`).

`per_channel_statistics` gives the (mean, variance) per channel that
`keras.layers.Normalization` and the pipelines' `mean` and `std` take.
Keras's `RandomGrayscale` is used as it is.
"""

import numpy as np

import keras

from keras_paperzoo.data.views.base import DataLayer, RandomLayer
from keras_paperzoo.data.views.checks import check_range, check_value_range


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class ColorJitter(RandomLayer):
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
        self.value_range = check_value_range(value_range)
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
class RandomSolarization(RandomLayer):
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
        self.value_range = check_value_range(value_range)
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


def per_channel_statistics(images):
    """(mean, variance) per channel of (N, H, W, C) images: for `keras.layers.Normalization`."""
    images = np.asarray(images, "float64")
    return images.mean(axis=(0, 1, 2)), images.var(axis=(0, 1, 2))


def rgb_pca(images, max_pixels=1_000_000, seed=0):
    """Eigenvalues and eigenvectors of the RGB covariance of (N, H, W, 3) images."""
    pixels = np.asarray(images, "float64").reshape(-1, 3)
    if len(pixels) > max_pixels:
        pixels = pixels[np.random.default_rng(seed).choice(len(pixels), max_pixels, replace=False)]
    eigenvalues, eigenvectors = np.linalg.eigh(np.cov(pixels, rowvar=False))
    return eigenvalues.astype("float32"), eigenvectors.astype("float32")


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class PCAColorNoise(DataLayer):
    """AlexNet's "fancy PCA" colour augmentation (Krizhevsky et al. 2012, Sec. 4.1).

    To each image's every RGB pixel add [p1 p2 p3] [alpha1 lambda1, alpha2 lambda2,
    alpha3 lambda3]^T with one alpha ~ N(0, std^2) per image and component.

    Args:
        eigenvalues: (3,) the lambda_i of the training set's RGB covariance.
        eigenvectors: (3, 3) with the p_i as columns (as `numpy.linalg.eigh` returns).
        std: standard deviation of alpha (0.1 in the paper).

    Example:

    ```python
    values, vectors = rgb_pca(train_images)
    layer = PCAColorNoise(values, vectors)
    dataset.map(lambda x, y: (layer(x), y))  # in tf.data on any backend (a Keras DataLayer)
    ```
    """

    def __init__(self, eigenvalues, eigenvectors, std=0.1, seed=None, **kwargs):
        kwargs.setdefault("dtype", "float32")  # float32 under a mixed-precision policy
        super().__init__(**kwargs)
        self.eigenvalues = np.asarray(eigenvalues, "float32").reshape(3)
        self.eigenvectors = np.asarray(eigenvectors, "float32").reshape(3, 3)
        if std < 0:
            raise ValueError(f"std must be >= 0; got {std}.")
        self.std = float(std)
        self.seed = seed
        self.generator = keras.random.SeedGenerator(seed)  # DataLayer's name for it

    def call(self, images, training=True):
        if not training:
            return images
        backend = self.backend  # TensorFlow ops inside tf.data, the Keras backend elsewhere
        batch = backend.shape(images)[0]
        seed = self._get_seed_generator(backend._backend)
        alpha = backend.random.normal((batch, 3), stddev=self.std, seed=seed)  # (B, 3)
        eigenvalues = backend.convert_to_tensor(self.eigenvalues)  # (3,)
        eigenvectors = backend.convert_to_tensor(self.eigenvectors)  # (3, 3), p_i as columns
        shift = backend.numpy.matmul(alpha * eigenvalues, backend.numpy.transpose(eigenvectors))  # (B, 3)
        return images + backend.numpy.reshape(shift, (-1, 1, 1, 3))

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "eigenvalues": self.eigenvalues.tolist(),
                "eigenvectors": self.eigenvectors.tolist(),
                "std": self.std,
                "seed": self.seed,
            }
        )
        return config
