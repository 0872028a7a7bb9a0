"""`ViewAugmentation`: the one-view chain of SimCLR, BYOL and SwAV (and InvaSpread's, DeepCluster's), with its parameters.

SimCLR and BYOL (and SwAV's crops, which are SimCLR views) draw each view
through the same chain, with their own parameters:

    random resized crop (area 0.08-1, aspect 3/4-4/3) -> horizontal flip (p 0.5)
    -> colour jitter (p_jitter) -> grayscale (p_gray) -> Gaussian blur (p_blur)
    -> solarisation (p_solarize) -> clip to [0, 1] -> optional (x - mean) / std

The papers' parameters are their recipes, beside their models:
models/simclr/simclr_augmentation.py (which also says where the authors'
TensorFlow / JAX code differs from the torchvision formulas used here),
models/byol/byol_augmentation.py and models/swav/swav_augmentation.py.
"""

import keras

from keras_paperzoo.data.views.base import ViewPipeline
from keras_paperzoo.data.views.blur import GaussianBlur
from keras_paperzoo.data.views.checks import check_interval, check_range
from keras_paperzoo.data.views.color import ColorJitter, RandomSolarization
from keras_paperzoo.data.views.crops import RandomResizedCrop
from keras_paperzoo.data.views.seeds import derived_seed

BLUR_SIGMA = (0.1, 2.0)  # SimCLR, BYOL (and MoCo v2, SwAV)
BLUR_KERNEL_FRACTION = 0.1  # kernel size / image side: SimCLR `height // 10`, BYOL `blur_divider=10`


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class ViewAugmentation(ViewPipeline):
    """One random view of each image: crop, flip, colour jitter, grayscale, blur, solarisation, normalisation.

    The chain shared by SimCLR and BYOL (see the module docstring): torchvision's
    random resized crop to `image_size`, a horizontal flip with p 0.5, colour
    jitter in random order applied with `jitter_probability`, grayscale with
    `grayscale_probability` (colour images only), a Gaussian blur of sigma ~
    U[0.1, 2.0] with kernel 10 % of the view's height applied with
    `blur_probability`, solarisation (threshold 0.5) with `solarize_probability`,
    a clip to [0, 1], then (x - mean) / std if given. Images are expected in
    [0, 1]. At inference (`training=False`) the images are only resized to
    `image_size` and normalised. The defaults are SimCLR's ImageNet view.

    Args:
        image_size: int or (height, width), the view's size.
        crop_scale: (min, max) area fraction of the random resized crop.
        jitter: (brightness, contrast, saturation, hue) strengths.
        jitter_probability, grayscale_probability, blur_probability,
            solarize_probability: floats in [0, 1]; a step with probability 0 is
            left out.
        mean, std: optional per-channel normalisation applied last.
        seed: int or None; the steps' generators are seeded from (seed, step).

    Example:

    ```python
    view = ViewAugmentation(32, jitter=(0.4, 0.4, 0.4, 0.1), blur_probability=0.0, seed=0)
    view(images).shape  # (B, 32, 32, 3)
    ```
    """

    def __init__(self, image_size, crop_scale=(0.08, 1.0), jitter=(0.8, 0.8, 0.8, 0.2), jitter_probability=0.8,
                 grayscale_probability=0.2, blur_probability=0.5, solarize_probability=0.0, mean=None, std=None,
                 seed=None, **kwargs):
        kwargs.setdefault("name", "view_augmentation")
        super().__init__(image_size, mean, std, **kwargs)
        self.crop_scale = check_interval("crop_scale", crop_scale)
        if not isinstance(jitter, (list, tuple)) or len(jitter) != 4:
            raise ValueError(f"jitter must be (brightness, contrast, saturation, hue); got {jitter!r}.")
        for name, value in (("jitter_probability", jitter_probability),
                            ("grayscale_probability", grayscale_probability),
                            ("blur_probability", blur_probability),
                            ("solarize_probability", solarize_probability)):
            check_range(name, value, 0.0, 1.0)
        self.jitter_strengths = tuple(float(v) for v in jitter)
        self.jitter_probability = float(jitter_probability)
        self.grayscale_probability = float(grayscale_probability)
        self.blur_probability = float(blur_probability)
        self.solarize_probability = float(solarize_probability)
        self.seed = seed

        def step_seed(step):
            return None if seed is None else derived_seed(seed, step)

        # === Layers ===
        height, width = self.image_size
        self.crop = RandomResizedCrop(height, width, scale=self.crop_scale, seed=step_seed(0))
        self.flip = keras.layers.RandomFlip("horizontal", seed=step_seed(1))
        self.jitter = ColorJitter(*self.jitter_strengths, probability=self.jitter_probability, random_order=True,
                                  seed=step_seed(2))
        self.grayscale = (
            keras.layers.RandomGrayscale(factor=self.grayscale_probability, seed=step_seed(3))
            if self.grayscale_probability > 0 else None
        )
        self.blur = (
            GaussianBlur(BLUR_SIGMA, probability=self.blur_probability,
                         kernel_size=max(1, int(BLUR_KERNEL_FRACTION * height)), seed=step_seed(4))
            if self.blur_probability > 0 else None
        )
        self.solarize = (
            RandomSolarization(probability=self.solarize_probability, seed=step_seed(5))
            if self.solarize_probability > 0 else None
        )

    def call(self, images, training=True):
        x = self.crop(images, training=training)  # (B, height, width, C)
        if training:
            x = self.flip(x, training=True)
            x = self.jitter(x, training=True)
            if self.grayscale is not None and x.shape[-1] == 3:
                x = self.grayscale(x, training=True)
            if self.blur is not None:
                x = self.blur(x, training=True)
            if self.solarize is not None:
                x = self.solarize(x, training=True)
            x = self.backend.numpy.clip(x, 0.0, 1.0)
        return self.normalize(x)

    def get_config(self):
        config = super().get_config()
        config.update(
            {"crop_scale": list(self.crop_scale),
             "jitter": list(self.jitter_strengths), "jitter_probability": self.jitter_probability,
             "grayscale_probability": self.grayscale_probability, "blur_probability": self.blur_probability,
             "solarize_probability": self.solarize_probability, "seed": self.seed}
        )
        return config
