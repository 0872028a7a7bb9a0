"""iGPT's colour palette: k-means over RGB pixel values (Chen et al. 2020, Sec. 3, "Context Reduction").

"we create our own 9-bit color palette by clustering (R, G, B) pixel values using
k-means with k = 512": every pixel becomes one of 512 palette ids, so a 32 x 32
image is a sequence of 1,024 tokens (not 3,072). Images are read in raster order
(Sec. 2.1, pi_i = i). The k-means is the package's (`keras_paperzoo.clustering.kmeans`).
"""

import numpy as np

from keras import ops

from keras_paperzoo.clustering.kmeans import kmeans, squared_distances

PAPER_PALETTE_SIZE = 512  # "9-bit color palette"


class ColorPalette:
    """k colours; images (B, H, W, C) <-> palette ids (B, H W) in raster order.

    Args:
        colors: (k, C) array, the palette (C = 3 for RGB, 1 for greyscale).

    Example:

    ```python
    images = np.random.default_rng(0).integers(0, 256, (8, 32, 32, 3))
    palette = ColorPalette.fit(images, num_colors=16, seed=0)
    ids = palette.encode(images)                     # (8, 1024) int32 in [0, 16)
    restored = palette.decode(ids, (32, 32))         # (8, 32, 32, 3): nearest palette colours
    ```
    """

    def __init__(self, colors):
        colors = np.asarray(colors, dtype="float32")
        if colors.ndim != 2 or colors.shape[0] < 1:
            raise ValueError(f"ColorPalette colors must be a (k, C) array with k >= 1; got shape {colors.shape}.")
        self.colors = colors

    @property
    def num_colors(self):
        return int(self.colors.shape[0])

    @classmethod
    def fit(cls, images, num_colors=PAPER_PALETTE_SIZE, max_pixels=1_000_000, seed=0, max_iterations=100):
        """k-means (k = `num_colors`) over the pixel values of `images` (..., C).

        Args:
            images: array (..., C), any value range (the palette keeps it).
            num_colors: k, 512 in the paper; at most the number of distinct pixel values.
            max_pixels: pixels sampled (uniformly, with `seed`) for the clustering when
                there are more, so that ImageNet-sized inputs stay tractable.
            seed: int, the sampling and the k-means++ seeding.
        """
        pixels = np.asarray(images, dtype="float32").reshape(-1, np.shape(images)[-1])  # (P, C)
        distinct = np.unique(pixels, axis=0).shape[0]
        if isinstance(num_colors, bool) or not isinstance(num_colors, (int, np.integer)) or not 1 <= num_colors <= distinct:
            raise ValueError(
                f"ColorPalette num_colors must be an int in [1, {distinct}], the number of distinct pixel values "
                f"in the images; got num_colors={num_colors!r}.")
        if max_pixels is not None and pixels.shape[0] > max_pixels:
            pixels = pixels[np.random.default_rng(seed).choice(pixels.shape[0], int(max_pixels), replace=False)]
        return cls(kmeans(pixels, int(num_colors), seed=seed, max_iterations=max_iterations).centroids)

    def encode(self, images, chunk_size=65536):
        """(B, H, W, C) -> (B, H W) int32 ids of the nearest palette colour, raster order."""
        images = np.asarray(images, dtype="float32")
        if images.ndim != 4 or images.shape[-1] != self.colors.shape[1]:
            raise ValueError(f"ColorPalette.encode needs (B, H, W, {self.colors.shape[1]}) images; got {images.shape}.")
        pixels = images.reshape(-1, images.shape[-1])  # (B H W, C)
        colors = ops.convert_to_tensor(self.colors)
        ids = [np.asarray(ops.convert_to_numpy(ops.argmin(squared_distances(
            ops.convert_to_tensor(pixels[i:i + chunk_size]), colors), axis=1)))
            for i in range(0, pixels.shape[0], chunk_size)]  # nearest colour per pixel
        return np.concatenate(ids).astype("int32").reshape(images.shape[0], -1)

    def decode(self, ids, image_shape):
        """(B, H W) ids -> (B, H, W, C) float32 images of palette colours; `image_shape` is (H, W)."""
        ids = np.asarray(ops.convert_to_numpy(ids), dtype="int64")
        height, width = image_shape
        if ids.ndim != 2 or ids.shape[1] != height * width:
            raise ValueError(f"ColorPalette.decode needs (B, {height * width}) ids for {image_shape}; got {ids.shape}.")
        if ids.size and not 0 <= ids.min() <= ids.max() < self.num_colors:
            raise ValueError(f"ColorPalette ids must be in [0, {self.num_colors}); got [{ids.min()}, {ids.max()}].")
        return self.colors[ids].reshape(ids.shape[0], height, width, -1)

    def get_config(self):
        return {"colors": self.colors.tolist()}

    @classmethod
    def from_config(cls, config):
        return cls(**config)
