"""BYOL's per-view augmentation pipelines, and their asymmetric two-view wrapper.

Each view is a `keras_paperzoo.data.views.ViewAugmentation`, the chain SimCLR
uses too (models/simclr/simclr_augmentation.py says where the authors' code
differs from the torchvision formulas used here), with BYOL's parameters:

BYOL (Grill et al. 2020, Table 6 in Appendix B; verified against `augment_config`
in the authors' deepmind-research `byol/utils/augmentations.py`): both views
jitter (0.4, 0.4, 0.2, 0.1) with p 0.8, grayscale p 0.2, blur sigma ~ U[0.1,
2.0] with kernel image side / 10 (23 taps at 224); view 1 blurs with p 1.0 and
never solarises, view 2 blurs with p 0.1 and solarises with p 0.2 (x -> x if
x < 0.5 else 1 - x). Our notes (contrastive-learning.md Sec. 7.5, 13, 18.6)
give the same values, marked "from memory"; the code above confirms them.

Example:

```python
imagenet = {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}
view_1, view_2 = byol_views(224, seed=0, **imagenet)(images, training=True)   # view 2 may be solarised
```
"""

from keras_paperzoo.data.views import MultiViewAugmentation, ViewAugmentation, derived_seed

BYOL_VIEWS = {
    # view: ViewAugmentation arguments, BYOL Table 6 (Appendix B) = the authors' augment_config.
    1: {"jitter": (0.4, 0.4, 0.2, 0.1), "jitter_probability": 0.8, "grayscale_probability": 0.2,
        "blur_probability": 1.0, "solarize_probability": 0.0},
    2: {"jitter": (0.4, 0.4, 0.2, 0.1), "jitter_probability": 0.8, "grayscale_probability": 0.2,
        "blur_probability": 0.1, "solarize_probability": 0.2},
}


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
