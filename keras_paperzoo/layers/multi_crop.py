"""Multi-crop (SwAV, Caron et al. 2020, Sec. 3.2): crops of several sizes through one backbone.

A multi-crop step has V crops of each image: a few full-size ones, then several small
ones. The backbone sees each run of same-size crops as one batch (the authors'
`main_swav.py` groups them by `torch.unique_consecutive` of their sizes), so batch norm
normalises each size's crops together and a backbone of any input size serves all.
These helpers are that grouping and the checks around it, for any trainer with crops.
"""

from keras import ops


def same_size_runs(crops):
    """[(start, end)] of the runs of consecutive crops with the same (height, width)."""
    runs, start = [], 0
    while start < len(crops):
        end = start + 1
        while end < len(crops) and tuple(crops[end].shape[1:3]) == tuple(crops[start].shape[1:3]):
            end += 1
        runs.append((start, end))
        start = end
    return runs


def encode_crops(encode, crops):
    """`encode` once per run of same-size crops (each (B, h, w, C)), the features stacked in order: (V B, D)."""
    features = [encode(ops.concatenate(crops[start:end], axis=0))  # (n B, h, w, C) -> (n B, D)
                for start, end in same_size_runs(crops)]
    return ops.concatenate(features, axis=0)


def crop_sizes(augmentation):
    """The (height, width) of each crop a multi-crop augmentation draws (its `view_pipeline` order), or []."""
    layers = getattr(augmentation, "view_augmentations", None)
    if not layers or not all(hasattr(layer, "image_size") for layer in layers):
        return []
    return [tuple(layers[i].image_size) for i in augmentation.view_pipeline]


def check_crop_sizes(owner, backbone, sizes):
    """Refuse crops of a size the backbone's fixed input does not take, in one message naming both."""
    fixed = tuple(backbone.input_shape[1:3])
    wrong = sorted({tuple(s) for s in sizes if any(f is not None and d is not None and d != f
                                                   for d, f in zip(s, fixed))})
    if wrong:
        raise ValueError(
            f"{owner}'s crops of size {wrong} do not fit backbone {backbone.name}, whose input is fixed at "
            f"{fixed}: multi-crop needs a backbone that takes any size (e.g. image_shape=(None, None, 3))."
        )


def check_assignment_crops(owner, crop_counts, crops_for_assign):
    """At least 2 crops, and the crops whose codes are targets distinct indices among them."""
    total = sum(crop_counts)
    if total < 2 or max(crops_for_assign) >= total or len(set(crops_for_assign)) != len(crops_for_assign):
        raise ValueError(
            f"{owner} needs at least 2 crops and distinct crops_for_assign among them: crop_counts "
            f"{list(crop_counts)} ({total} crops), crops_for_assign {list(crops_for_assign)}."
        )


def full_size_crops(image_shape, augmentation):
    """The overrides that make `image_shape` (H, W, C) the full-size crops' size, the backbone taking any size.

    Multi-crop feeds the backbone crops of several sizes, so a preset's backbone takes
    (None, None, C) images; given the images' (H, W, C), the augmentation ("default",
    None or a dict of its arguments) gets `image_size` (H, W) and the backbone keeps any
    size. Nothing changes ({}) for a size left open or an augmentation given as a layer.
    """
    if None in tuple(image_shape)[:2] or not (augmentation in (None, "default") or isinstance(augmentation, dict)):
        return {}
    augmentation = {} if augmentation in (None, "default") else dict(augmentation)
    return {"augmentation": {**augmentation, "image_size": [int(d) for d in image_shape[:2]]},
            "image_shape": (None, None, image_shape[-1])}
