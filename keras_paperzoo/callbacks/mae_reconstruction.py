"""Pictures of an MAE's progress: input, masked input, reconstruction, side by side (He et al. 2022, Figs. 2-3)."""

import pathlib

import numpy as np

import keras

from keras_paperzoo.callbacks.image_grid import image_grid, save_png

COLUMNS = ("images", "masked", "reconstruction", "pasted")


def reconstruction_grid(pictures, value_range=(0.0, 1.0)):
    """One uint8 picture from `MAE.reconstruct` output: a row per image, columns
    input | masked input | reconstruction | reconstruction with the visible patches pasted back.
    """
    low, high = value_range
    if not high > low:
        raise ValueError(f"value_range must be (low, high) with high > low; got {value_range!r}.")
    tiles = np.stack([pictures[name] for name in COLUMNS], axis=1)  # (B, 4, H, W, C)
    tiles = tiles.reshape((-1,) + tiles.shape[2:])  # (4B, H, W, C), row by row
    return image_grid((tiles - low) / (high - low), columns=len(COLUMNS))


class MAEReconstruction(keras.callbacks.Callback):
    """Save reconstructions of the same images under the same masks at the end of every epoch.

    Writes `directory/reconstruction_epoch_001.png`, ...: one row per image, four
    columns (input, masked input, reconstruction, reconstruction with the visible
    patches pasted back), as in the paper's figures. The masks are fixed (uniform
    noise from `seed`), so successive pictures differ only by what the model learned.

    Args:
        images: (B, H, W, C) array of a few images the model takes.
        directory: folder for the PNGs.
        seed: seed of the fixed masks.
        value_range: (low, high) pixel range of `images`, mapped to black..white; masked
            patches are drawn mid-grey.
        scale: integer enlargement of the saved picture.

    Example:

    ```python
    mae.fit(images, epochs=10, callbacks=[MAEReconstruction(images[:8], "out/mae")])
    ```
    """

    def __init__(self, images, directory, seed=0, value_range=(0.0, 1.0), scale=2):
        super().__init__()
        self.images = np.asarray(images, dtype="float32")
        if self.images.ndim != 4:
            raise ValueError(f"MAEReconstruction needs (B, H, W, C) images; got shape {self.images.shape}.")
        self.directory = pathlib.Path(directory)
        self.seed = seed
        self.value_range = tuple(value_range)
        self.scale = scale
        self.noise = None
        self.last_path = None

    def on_train_begin(self, logs=None):
        num_patches = self.model.num_patches
        self.noise = np.random.default_rng(self.seed).random((len(self.images), num_patches)).astype("float32")

    def save(self, path):
        """Write the picture for the model as it is now; returns the path."""
        if self.noise is None:
            self.on_train_begin()
        low, high = self.value_range
        pictures = self.model.reconstruct(self.images, noise=self.noise, fill_value=(low + high) / 2)
        self.last_path = save_png(reconstruction_grid(pictures, self.value_range), path, scale=self.scale)
        return self.last_path

    def on_epoch_end(self, epoch, logs=None):
        self.save(self.directory / f"reconstruction_epoch_{epoch + 1:03d}.png")
