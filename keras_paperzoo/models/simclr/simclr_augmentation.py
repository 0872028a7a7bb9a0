"""SimCLR's per-view augmentation pipeline and its two-view wrapper.

SimCLR and BYOL (models/byol/byol_augmentation.py) draw each view through the same chain,
`keras_paperzoo.data.views.ViewAugmentation`, with their own parameters:

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

The colour jitter uses torchvision's formulas (`keras_paperzoo.data.views.ColorJitter`)
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
  `ColorJitter` do.
- contrast: `tf.image.random_contrast` (SimCLR, lower 1 - 0.8 s, upper
  1 + 0.8 s) and BYOL blend each channel with its own spatial mean; torchvision
  and `ColorJitter` blend with the mean of the grayscale image (all channels
  alike). The lower bound here is max(0, 1 - 0.8 s) (torchvision's).
- saturation: TensorFlow scales S in HSV (clipped to [0, 1]); torchvision and
  `ColorJitter` blend with the grayscale image, s x + (1 - s) gray(x).
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
```
"""

from keras_paperzoo.data.views import MultiViewAugmentation, ViewAugmentation, check_range

SIMCLR_MAX_STRENGTH = 2.5  # hue 0.2 s is at most half the colour wheel


def simclr_jitter(color_strength):
    """SimCLR's colour jitter of strength s: (brightness, contrast, saturation, hue) = (0.8 s, 0.8 s, 0.8 s, 0.2 s)."""
    check_range("color_strength", color_strength, 0.0, SIMCLR_MAX_STRENGTH)
    s = float(color_strength)
    return (0.8 * s, 0.8 * s, 0.8 * s, 0.2 * s)


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
