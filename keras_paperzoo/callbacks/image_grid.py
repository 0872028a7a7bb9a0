"""Tiling images into one PNG."""

import pathlib

import numpy as np


def image_grid(images, columns=None, gap=0, gap_value=1.0):
    """(N, H, W, C) floats in [0, 1] -> one (rows*H + (rows-1)*gap, columns*W + (columns-1)*gap, C) uint8 array.

    `gap` pixels of `gap_value` (white) separate the images, so that samples do not
    run into each other; empty cells are white too.

    Example:

    ```python
    grid = image_grid(np.random.rand(16, 28, 28, 1))  # (112, 112, 1)
    grid = image_grid(np.random.rand(16, 28, 28, 1), gap=2)  # (118, 118, 1)
    ```
    """
    if isinstance(gap, bool) or not isinstance(gap, (int, np.integer)) or gap < 0:
        raise ValueError(f"gap must be an int >= 0 (pixels); got {gap!r}.")
    images = np.asarray(images, dtype="float32")
    if images.ndim == 3:
        images = images[..., None]
    if images.ndim != 4:
        raise ValueError(f"image_grid needs (N, H, W, C) images; got shape {images.shape}.")
    n, h, w, c = images.shape
    columns = columns or int(np.ceil(np.sqrt(n)))
    rows = int(np.ceil(n / columns))
    grid = np.full((rows * h + (rows - 1) * gap, columns * w + (columns - 1) * gap, c), gap_value, dtype="float32")
    for i, image in enumerate(images):
        r, col = divmod(i, columns)
        top, left = r * (h + gap), col * (w + gap)
        grid[top : top + h, left : left + w] = image
    return (np.clip(grid, 0.0, 1.0) * 255).round().astype("uint8")


def save_png(array, path, scale=1):
    """Write an (H, W, 1|3) uint8 array as PNG, optionally enlarged `scale` times."""
    from PIL import Image

    array = np.asarray(array)
    if array.ndim == 3 and array.shape[-1] == 1:
        array = array[..., 0]
    image = Image.fromarray(array)
    if scale > 1:
        image = image.resize((image.width * scale, image.height * scale), Image.NEAREST)
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)
    return path
