"""`GaussianBlur`: a blur of random sigma per image (MoCo v2, SimCLR, BYOL, SwAV).

Keras 3.15's `RandomGaussianBlur` draws one (sigma_x, sigma_y) pair per *batch*;
the papers draw one isotropic sigma per image.
"""

import keras

from keras_paperzoo.data.views.base import RandomLayer
from keras_paperzoo.data.views.checks import check_interval, check_range


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class GaussianBlur(RandomLayer):
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
