"""SwAV's multi-crop: full-size and small crops, each a SimCLR view, as one layer.

SwAV (Caron et al. 2020, Sec. 3.2 "Multi-crop"; the authors' `main_swav.py` for
the 75.3 % model) takes 2 x 224 + 6 x 96 crops of areas (0.14, 1) and (0.05,
0.14), each with SimCLR's colour distortion (s = 1) and blur
(`simclr_jitter`, models/simclr/simclr_augmentation.py). `swav_views` builds them
as a `keras_paperzoo.data.views.MultiCropAugmentation` of `ViewAugmentation`s.
"""

from keras_paperzoo.data.views import MultiCropAugmentation, ViewAugmentation, derived_seed
from keras_paperzoo.models.simclr.simclr_augmentation import simclr_jitter

# SwAV (Caron et al. 2020, Sec. 3.2 "Multi-crop"; the authors' `main_swav.py` for the 75.3 % model):
# 2 x 224 + 6 x 96 crops, areas (0.14, 1) and (0.05, 0.14), SimCLR's colour distortion (s = 1) and blur.
SWAV_CROP_SIZES = (224, 96)
SWAV_CROP_COUNTS = (2, 6)
SWAV_CROP_SCALES = ((0.14, 1.0), (0.05, 0.14))


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
