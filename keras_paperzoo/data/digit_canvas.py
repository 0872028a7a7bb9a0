"""Digits pasted on a larger canvas, with the class of every pixel: a dense-prediction task that fits a CPU.

DenseCL (Wang et al. 2021) is about dense prediction (detection, segmentation), whose
benchmarks (VOC, COCO, Cityscapes) are out of reach offline. This stands in for them:
each scene is a blank canvas with `per_scene` digits at random, non-overlapping places,
and the label map says which digit covers each pixel (its 10 classes) or that none does
(class 10, background). A dense probe classifies every location of a frozen backbone's
feature map (`evaluation/dense_probe.py`); `cell_labels` gives the label of each
location from the pixels it covers.

Example:

```python
from keras_paperzoo.data import load_dataset
digits, labels = load_dataset("digits", "train")            # (1500, 8, 8, 1) in [0, 1]
images, masks = digit_canvases(digits, labels, count=512, canvas_size=24, seed=0)
images.shape, masks.shape                                   # (512, 24, 24, 3), (512, 24, 24)
cells = cell_labels(masks, grid=6)                          # (512, 6, 6): 4 x 4 pixels each
```
"""

import numpy as np

BACKGROUND = 10  # the label of a pixel no digit covers (the digits are 0-9)


def digit_canvases(digits, labels, count, canvas_size=24, per_scene=2, seed=0):
    """`count` scenes of `per_scene` digits each and their per-pixel classes.

    Args:
        digits: (N, s, s) or (N, s, s, C) digit images in [0, 1] (dark background).
        labels: (N,) their classes, ints in [0, 10).
        count: the number of scenes.
        canvas_size: the canvas side H = W, at least the digit side.
        per_scene: digits per scene (placed without overlap; each drawn at random).
        seed: the NumPy seed of the digits drawn and their places.

    Returns:
        images: (count, H, W, 3) float32 in [0, 1], grey (three equal channels);
        masks: (count, H, W) int32: the class of the digit whose s x s box covers the
        pixel, or `BACKGROUND` (10).
    """
    digits = np.asarray(digits, "float32")
    if digits.ndim == 4:
        digits = digits.mean(axis=-1)
    labels = np.asarray(labels).astype("int32").reshape(-1)
    side = digits.shape[1]
    if digits.ndim != 3 or digits.shape[1] != digits.shape[2] or len(labels) != len(digits):
        raise ValueError(f"digit_canvases needs (N, s, s[, C]) square digits and (N,) labels; got {digits.shape} "
                         f"and {labels.shape}.")
    if canvas_size < side * per_scene and canvas_size < 2 * side:
        raise ValueError(f"canvas_size {canvas_size} must be at least twice the digit side {side} to hold "
                         f"{per_scene} digits without overlap.")
    rng = np.random.default_rng(seed)
    images = np.zeros((count, canvas_size, canvas_size), "float32")
    masks = np.full((count, canvas_size, canvas_size), BACKGROUND, "int32")
    for scene in range(count):
        placed = []
        for index in rng.integers(0, len(digits), per_scene):
            for _ in range(1000):  # rejection sampling of a free place
                top, left = rng.integers(0, canvas_size - side + 1, 2)
                if all(abs(top - t) >= side or abs(left - l) >= side for t, l in placed):
                    break
            else:
                raise ValueError(f"no room for {per_scene} digits of side {side} on a {canvas_size} canvas.")
            placed.append((top, left))
            box = (scene, slice(top, top + side), slice(left, left + side))
            images[box] = np.maximum(images[box], digits[index])
            masks[box] = labels[index]
    return np.repeat(images[..., None], 3, axis=-1), masks


def cell_labels(masks, grid):
    """(N, H, W) pixel classes -> (N, grid, grid): each cell's most frequent class (ties: the lower class).

    The cells are the H / grid x W / grid blocks a backbone location of stride H / grid covers.
    """
    masks = np.asarray(masks)
    count, height, width = masks.shape
    if height % grid or width % grid:
        raise ValueError(f"cell_labels: the mask size {height}x{width} must be divisible by grid {grid}.")
    blocks = masks.reshape(count, grid, height // grid, grid, width // grid).transpose(0, 1, 3, 2, 4)
    blocks = blocks.reshape(count, grid, grid, -1)  # (N, g, g, pixels per cell)
    votes = np.stack([(blocks == c).sum(-1) for c in range(BACKGROUND + 1)], axis=-1)  # (N, g, g, 11)
    return votes.argmax(-1).astype("int32")
