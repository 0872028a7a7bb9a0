"""Pictures of a GAN's progress: a sample grid per epoch and a latent interpolation."""

import pathlib

import numpy as np

import keras

from keras_paperzoo.callbacks.image_grid import image_grid, save_png


class SampleGrid(keras.callbacks.Callback):
    """Save G(z) for the same fixed noise z at the end of some epochs: a bounded set of pictures.

    Writes `directory/samples_epoch_001.png`, ... at every `every`-th epoch and the
    last one: by default about ten pictures whatever the number of epochs (every
    ceil(epochs / 10)-th). With fixed z, the grids show how one set of samples
    evolves; `gap` white pixels separate the samples.

    Args:
        directory: folder for the PNGs.
        num_samples: number of samples in the grid.
        seed: seed of the fixed noise.
        scale: integer enlargement of the saved picture.
        every: save every this many epochs (and the last); default ceil(epochs / 10).
        gap: pixels between samples.

    Example:

    ```python
    gan.fit(images, epochs=100, callbacks=[SampleGrid("out/samples")])  # epochs 10, 20, ..., 100
    ```
    """

    def __init__(self, directory, num_samples=64, seed=0, scale=2, every=None, gap=2):
        super().__init__()
        if every is not None and (isinstance(every, bool) or not isinstance(every, int) or every < 1):
            raise ValueError(f"every must be None or an int >= 1; got {every!r}.")
        self.directory = pathlib.Path(directory)
        self.num_samples = num_samples
        self.seed = seed
        self.scale = scale
        self.every = every
        self.gap = gap
        self.noise = None
        self.last_path = None

    def _due(self, epoch):
        epochs = (self.params or {}).get("epochs") or epoch + 1
        every = self.every or max(1, -(-epochs // 10))
        return (epoch + 1) % every == 0 or epoch + 1 == epochs

    def on_train_begin(self, logs=None):
        rng = np.random.default_rng(self.seed)
        self.noise = rng.standard_normal((self.num_samples, self.model.latent_dim)).astype("float32")

    def on_epoch_end(self, epoch, logs=None):
        if not self._due(epoch):
            return
        samples = self.model.generator.predict(self.noise, verbose=0)
        path = self.directory / f"samples_epoch_{epoch + 1:03d}.png"
        self.last_path = save_png(image_grid(samples, gap=self.gap), path, scale=self.scale)


def latent_interpolation(generator, latent_dim, path, rows=8, steps=10, seed=0, scale=2, gap=2):
    """Save a picture whose rows walk linearly from one z to another (paper Fig. 3).

    Returns the path. Each row starts at z_a and ends at z_b; the columns are
    G((1 - t) z_a + t z_b) for `steps` evenly spaced t in [0, 1], `gap` pixels apart.
    """
    rng = np.random.default_rng(seed)
    z_a = rng.standard_normal((rows, 1, latent_dim))
    z_b = rng.standard_normal((rows, 1, latent_dim))
    t = np.linspace(0.0, 1.0, steps)[None, :, None]
    z = ((1.0 - t) * z_a + t * z_b).reshape(rows * steps, latent_dim).astype("float32")
    samples = generator.predict(z, verbose=0)
    return save_png(image_grid(samples, columns=steps, gap=gap), path, scale=scale)
