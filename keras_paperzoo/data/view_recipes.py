"""SimCLR's and BYOL's per-view augmentation pipelines, and their two-view wrappers.

Both papers draw each view through the same chain, with their own parameters:

    random resized crop (area 0.08-1, aspect 3/4-4/3) -> horizontal flip (p 0.5)
    -> colour jitter (p_jitter) -> grayscale (p_gray) -> Gaussian blur (p_blur)
    -> solarisation (p_solarize) -> clip to [0, 1] -> optional (x - mean) / std

SimCLR (Chen et al. 2020, Appendix A; authors' code google-research/simclr
`data_util.py`): colour distortion of strength s: jitter (brightness 0.8 s,
contrast 0.8 s, saturation 0.8 s, hue 0.2 s) with p 0.8, then grayscale with
p 0.2; blur with p 0.5, sigma ~ U[0.1, 2.0], kernel 10 % of the image side
(`height // 10`); no solarisation. ImageNet: s = 1 with blur. CIFAR-10
(Appendix B.9; the README's CIFAR command `--color_jitter_strength=0.5
--use_blur=False`): s = 0.5, no blur. The two views are two independent draws of
this one pipeline.

BYOL (Grill et al. 2020, Table 6 in Appendix B; verified against `augment_config`
in the authors' deepmind-research `byol/utils/augmentations.py`): both views
jitter (0.4, 0.4, 0.2, 0.1) with p 0.8, grayscale p 0.2, blur sigma ~ U[0.1,
2.0] with kernel image side / 10 (23 taps at 224); view 1 blurs with p 1.0 and
never solarises, view 2 blurs with p 0.1 and solarises with p 0.2 (x -> x if
x < 0.5 else 1 - x). Our notes (contrastive-learning.md Sec. 7.5, 13, 18.6)
give the same values, marked "from memory"; the code above confirms them.

The colour jitter uses torchvision's formulas (`ssl_augmentation.ColorJitter`)
with a random order of the four operations per image, as SimCLR's released
`color_jitter` (`random_order=True` -> `color_jitter_rand`), BYOL's
`shuffle=True` and torchvision do, each step clipped to [0, 1]. (SimCLR's paper
pseudo-code in Appendix A writes the four in a fixed order, brightness,
contrast, saturation, hue, with one clip at the end.) Where the authors'
TensorFlow / JAX code differs from torchvision's formulas:

- brightness: SimCLR's paper pseudo-code calls `tf.image.random_brightness(x,
  max_delta=0.8 s)`, an *added* delta in [-0.8 s, 0.8 s], and so does BYOL's
  code (delta in [-0.4, 0.4]); SimCLR's released code (`impl='simclrv2'`, the
  default) *multiplies* by U[max(0, 1 - 0.8 s), 1 + 0.8 s], as torchvision and
  this module do.
- contrast: `tf.image.random_contrast` (SimCLR, lower 1 - 0.8 s, upper
  1 + 0.8 s) and BYOL blend each channel with its own spatial mean; torchvision
  and this module blend with the mean of the grayscale image (all channels
  alike). The lower bound here is max(0, 1 - 0.8 s) (torchvision's).
- saturation: TensorFlow scales S in HSV (clipped to [0, 1]); torchvision and
  this module blend with the grayscale image, s x + (1 - s) gray(x).
- hue: the same in all (a shift of the colour wheel by U[-0.2 s, 0.2 s]).
- crop: SimCLR and BYOL use `tf.image.sample_distorted_bounding_box` (100
  attempts) and bicubic resizing; `RandomResizedCrop` is torchvision's (10
  attempts, then the centre) with bilinear resampling.
- blur: the papers convolve with zero 'SAME' padding (darker borders); ours
  renormalises the truncated Gaussian at the borders. SimCLR applies the blur to
  the batch in the training step (`batch_random_blur`), after the colour
  distortion, as here.

Example:

```python
views = simclr_views(32, color_strength=0.5, blur=False, seed=0)   # CIFAR-10
view_1, view_2 = views(images, training=True)
imagenet = {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}
view_1, view_2 = byol_views(224, seed=0, **imagenet)(images, training=True)   # view 2 may be solarised
```
"""

import keras

from keras_paperzoo.data.multi_view import MultiViewAugmentation, derived_seed
from keras_paperzoo.data.ssl_augmentation import (
    ColorJitter,
    GaussianBlur,
    RandomResizedCrop,
    RandomSolarization,
    ViewPipeline,
    check_interval,
    check_range,
)

BLUR_SIGMA = (0.1, 2.0)  # SimCLR, BYOL (and MoCo v2, SwAV)
BLUR_KERNEL_FRACTION = 0.1  # kernel size / image side: SimCLR `height // 10`, BYOL `blur_divider=10`
SIMCLR_MAX_STRENGTH = 2.5  # hue 0.2 s is at most half the colour wheel

BYOL_VIEWS = {
    # view: ViewAugmentation arguments, BYOL Table 6 (Appendix B) = the authors' augment_config.
    1: {"jitter": (0.4, 0.4, 0.2, 0.1), "jitter_probability": 0.8, "grayscale_probability": 0.2,
        "blur_probability": 1.0, "solarize_probability": 0.0},
    2: {"jitter": (0.4, 0.4, 0.2, 0.1), "jitter_probability": 0.8, "grayscale_probability": 0.2,
        "blur_probability": 0.1, "solarize_probability": 0.2},
}


def simclr_jitter(color_strength):
    """SimCLR's colour jitter of strength s: (brightness, contrast, saturation, hue) = (0.8 s, 0.8 s, 0.8 s, 0.2 s)."""
    check_range("color_strength", color_strength, 0.0, SIMCLR_MAX_STRENGTH)
    s = float(color_strength)
    return (0.8 * s, 0.8 * s, 0.8 * s, 0.2 * s)


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


def simclr_augmentation(image_size, color_strength=1.0, blur=True, crop_scale=(0.08, 1.0), mean=None, std=None,
                        seed=None):
    """One SimCLR view (Chen et al. 2020, Appendix A) as a `ViewAugmentation`.

    Crop (area `crop_scale`) and flip, colour distortion of strength s =
    `color_strength`: jitter (0.8 s, 0.8 s, 0.8 s, 0.2 s) with p 0.8 then
    grayscale with p 0.2, and, with `blur=True`, a Gaussian blur with p 0.5.

    Args:
        image_size: int or (height, width) of the view (224 on ImageNet, 32 on CIFAR).
        color_strength: s in [0, 2.5]; 1.0 on ImageNet, 0.5 on CIFAR (B.9).
        blur: bool; True on ImageNet, False on CIFAR (B.9).
        crop_scale: (min, max) area fraction of the crop.
        mean, std: optional per-channel normalisation applied last.
        seed: int or None.

    Example:

    ```python
    cifar_view = simclr_augmentation(32, color_strength=0.5, blur=False)
    ```
    """
    return ViewAugmentation(
        image_size, crop_scale=crop_scale, jitter=simclr_jitter(color_strength), jitter_probability=0.8,
        grayscale_probability=0.2, blur_probability=0.5 if blur else 0.0, solarize_probability=0.0,
        mean=mean, std=std, seed=seed, name="simclr_view",
    )


def simclr_views(image_size, color_strength=1.0, blur=True, crop_scale=(0.08, 1.0), mean=None, std=None,
                 seed=None):
    """SimCLR's two views: two independent draws of `simclr_augmentation(...)`, as a `MultiViewAugmentation`.

    The arguments are `simclr_augmentation`'s. `views(images, training=True)`
    returns [x_i, x_j], each (B, height, width, C).
    """
    view = simclr_augmentation(image_size, color_strength, blur, crop_scale, mean, std, seed)
    return MultiViewAugmentation(view, views=2, seed=seed, name="simclr_views")


def byol_augmentation(view, image_size, blur=True, crop_scale=(0.08, 1.0), mean=None, std=None, seed=None):
    """BYOL's view 1 or 2 (Grill et al. 2020, Table 6) as a `ViewAugmentation`.

    Both: crop (area `crop_scale`), flip, jitter (0.4, 0.4, 0.2, 0.1) with p 0.8,
    grayscale p 0.2. View 1: blur p 1.0, no solarisation. View 2: blur p 0.1,
    solarisation p 0.2. `blur=False` leaves the blur out of both (for small
    images, where a kernel of 10 % of the side is a tap or two).

    Args:
        view: 1 or 2.
        image_size: int or (height, width) of the view.
        blur: bool.
        crop_scale: (min, max) area fraction of the crop.
        mean, std: optional per-channel normalisation applied last.
        seed: int or None.
    """
    if view not in BYOL_VIEWS:
        raise ValueError(f"BYOL's view must be 1 or 2; got {view!r}.")
    recipe = dict(BYOL_VIEWS[view])
    if not blur:
        recipe["blur_probability"] = 0.0
    return ViewAugmentation(image_size, crop_scale=crop_scale, mean=mean, std=std, seed=seed,
                            name=f"byol_view_{view}", **recipe)


def byol_views(image_size, blur=True, crop_scale=(0.08, 1.0), mean=None, std=None, seed=None):
    """BYOL's asymmetric pair: [view 1, view 2] from their two pipelines, as a `MultiViewAugmentation`.

    The arguments are `byol_augmentation`'s. `views(images, training=True)`
    returns [v, v'], v from view 1's pipeline (always blurred, never solarised)
    and v' from view 2's (blur p 0.1, solarisation p 0.2). BYOL's symmetrised
    loss feeds each to both networks, so the order matters only for logging.
    """
    pipelines = [
        byol_augmentation(view, image_size, blur, crop_scale, mean, std, None if seed is None else derived_seed(seed, view))
        for view in (1, 2)
    ]
    return MultiViewAugmentation(pipelines, seed=seed, name="byol_views")


# SwAV (Caron et al. 2020, Sec. 3.2 "Multi-crop"; the authors' `main_swav.py` for the 75.3 % model):
# 2 x 224 + 6 x 96 crops, areas (0.14, 1) and (0.05, 0.14), SimCLR's colour distortion (s = 1) and blur.
SWAV_CROP_SIZES = (224, 96)
SWAV_CROP_COUNTS = (2, 6)
SWAV_CROP_SCALES = ((0.14, 1.0), (0.05, 0.14))


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class MultiCropAugmentation(MultiViewAugmentation):
    """`MultiViewAugmentation` of crops at set sizes (SwAV's multi-crop) that refuses images smaller than a crop.

    Its pipelines each have an `image_size` (the crop's); `call` raises when the
    images are smaller than a crop (a crop upsampled from a smaller image would be a
    blur, not a local view). Everything else is `MultiViewAugmentation`'s, in
    `tf.data` and in the model on every backend.
    """

    def call(self, images, training=True):
        height, width = images.shape[-3], images.shape[-2]  # (B, H, W, C) or one (H, W, C) image in tf.data
        for view, index in enumerate(self.view_pipeline):
            crop = tuple(self.view_augmentations[index].image_size)
            if (height is not None and height < crop[0]) or (width is not None and width < crop[1]):
                raise ValueError(
                    f"Multi-crop view {view} is a {crop[0]} x {crop[1]} crop, larger than the {height} x {width} "
                    "images: each crop must fit in the image (give smaller crop sizes or larger images)."
                )
        return super().call(images, training=training)


def swav_crop_sizes(image_size, crop_counts=SWAV_CROP_COUNTS):
    """The crops' sides for images whose full-size crop is `image_size`: SwAV's 224 : 96 ratio.

    `swav_crop_sizes(224)` = [(224, 224), (96, 96)]; 32 (CIFAR) -> [(32, 32), (14, 14)];
    16 (digits) -> [(16, 16), (7, 7)]. One count: the full-size crops only.
    """
    height, width = (image_size, image_size) if isinstance(image_size, int) else tuple(image_size)
    ratio = SWAV_CROP_SIZES[1] / SWAV_CROP_SIZES[0]
    small = (max(1, round(height * ratio)), max(1, round(width * ratio)))
    return [(height, width), small][: len(crop_counts)]


def swav_views(image_size=224, crop_counts=SWAV_CROP_COUNTS, crop_sizes=None, crop_scale=SWAV_CROP_SCALES[0],
               small_crop_scale=None, color_strength=1.0, blur=True, mean=None, std=None, seed=None):
    """SwAV's multi-crop: `crop_counts[0]` full-size crops then `crop_counts[1]` small ones, as one layer.

    Each crop is a SimCLR view (crop, flip, colour distortion of strength
    `color_strength` with p 0.8, grayscale p 0.2, blur p 0.5), as in the authors'
    `MultiCropDataset`. `views(images, training=True)` returns the V =
    sum(crop_counts) crops, full-size first: [(B, H, W, C)] x 2 + [(B, h, w, C)] x 6.

    Args:
        image_size: int or (height, width): the full-size crops' side (224; 32 on CIFAR).
        crop_counts: views per size: (2, 6) (the 75.3 % model), (2, 4) with
            `crop_sizes` (160, 96) (the source's variant), or (2,) (no multi-crop).
        crop_sizes: each size's (height, width) or int; None: `swav_crop_sizes`
            (224 : 96).
        crop_scale: (min, max) area of the full-size crops ((0.14, 1)).
        small_crop_scale: (min, max) area of the small crops; None: SwAV's
            proportions below `crop_scale`, (crop_scale[0] x 0.05 / 0.14,
            crop_scale[0]), i.e. (0.05, 0.14) by default.
        color_strength, blur: the colour distortion's s (1.0; 0.5 on CIFAR) and the
            blur (True; False on small images).
        mean, std: optional per-channel normalisation applied last.
        seed: int or None.

    Example:

    ```python
    views = swav_views(32, color_strength=0.5, blur=False, seed=0)   # 2 x 32 + 6 x 14
    crops = views(images, training=True)                               # 8 tensors
    ```
    """
    if (not isinstance(crop_counts, (list, tuple)) or not 1 <= len(crop_counts) <= 2
            or any(isinstance(c, bool) or not isinstance(c, int) or c < 1 for c in crop_counts)):
        raise ValueError(f"crop_counts must be one or two ints >= 1 (full-size, small); got {crop_counts!r}.")
    sizes = swav_crop_sizes(image_size, crop_counts) if crop_sizes is None else list(crop_sizes)
    if len(sizes) != len(crop_counts):
        raise ValueError(f"crop_sizes gives one size per count in crop_counts {list(crop_counts)}; got {crop_sizes!r}.")
    crop_scale = tuple(crop_scale)
    if small_crop_scale is None:
        small_crop_scale = (crop_scale[0] * SWAV_CROP_SCALES[1][0] / SWAV_CROP_SCALES[1][1], crop_scale[0])
    scales = [crop_scale, tuple(small_crop_scale)]
    pipelines = [
        ViewAugmentation(size, crop_scale=scales[i], jitter=simclr_jitter(color_strength), jitter_probability=0.8,
                         grayscale_probability=0.2, blur_probability=0.5 if blur else 0.0, mean=mean, std=std,
                         seed=None if seed is None else derived_seed(seed, i), name=f"swav_crop_{i}")
        for i, size in enumerate(sizes)  # SimCLR's view (simclr_augmentation) at each size
    ]
    return MultiCropAugmentation(pipelines, views=list(crop_counts), seed=seed, name="swav_views")
