"""The supervised papers' training augmentations, shared by several papers (ResNet, VGG, AlexNet, ViT, MAE).

They run inside a model or in `tf.data` on every backend (Keras's preprocessing
layers switch to TensorFlow ops inside `tf.data`). Each call draws new randomness
from the layer's `SeedGenerator`; at inference (`training=False`) the random
layers pass images through.

- `cifar_augmentation`: ResNet's CIFAR-10 recipe (He et al. 2016, Sec. 4.2):
  4-pixel zero padding, a random 32x32 crop, horizontal flip.
- `imagenet_augmentation`: random-size crop and flip (ResNet/VGG style) plus
  optional PCA colour noise (AlexNet's `color.PCAColorNoise`).
"""

import numpy as np

import keras
from keras import ops

from keras_paperzoo.data.views.color import PCAColorNoise
from keras_paperzoo.data.views.crops import crop_and_flip


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class CifarAugmentation(keras.layers.Layer):
    """Pad by `padding` pixels, crop `image_size` at random, flip horizontally: per image.

    ResNet's CIFAR-10 recipe (He et al. 2016, Sec. 4.2: "4 pixels are padded on each
    side, and a 32x32 crop is randomly sampled from the padded image or its
    horizontal flip"). Every image draws its own offset and flip; Keras's
    `RandomCrop` (3.15) draws one offset per batch, so all 128 images of a batch
    would move together. The identity at inference.

    `augment_numpy(images, rng)` is the same augmentation in NumPy, which
    `EpochShuffledBatches` uses: about 2 ms for a batch of 128 of 32x32x3 on a CPU
    core, against about 10 ms of eager JAX ops, and identical on every backend.

    Example:

    ```python
    augment = CifarAugmentation()
    augment(images, training=True).shape  # (B, 32, 32, 3)
    augment.augment_numpy(images, np.random.default_rng(0)).shape  # (B, 32, 32, 3)
    ```
    """

    def __init__(self, image_size=32, padding=4, seed=None, **kwargs):
        kwargs.setdefault("dtype", "float32")  # float32 under a mixed-precision policy
        super().__init__(**kwargs)
        if padding < 0 or image_size < 1:
            raise ValueError(f"need padding >= 0 and image_size >= 1; got {padding}, {image_size}.")
        self.image_size, self.padding, self.seed = image_size, padding, seed
        self.seed_generator = keras.random.SeedGenerator(seed)

    def _check(self, shape):
        if shape[1] + 2 * self.padding < self.image_size or shape[2] + 2 * self.padding < self.image_size:
            raise ValueError(f"CifarAugmentation: images of {shape[1]}x{shape[2]} padded by {self.padding} are "
                             f"smaller than the {self.image_size}x{self.image_size} crop.")

    def call(self, images, training=True):
        if not training:
            return images
        self._check(images.shape)
        batch = ops.shape(images)[0]
        top = keras.random.randint((batch,), 0, images.shape[1] + 2 * self.padding - self.image_size + 1,
                                   seed=self.seed_generator)
        left = keras.random.randint((batch,), 0, images.shape[2] + 2 * self.padding - self.image_size + 1,
                                    seed=self.seed_generator)
        flip = keras.random.uniform((batch,), seed=self.seed_generator) < 0.5
        return crop_and_flip(images, top, left, flip, self.padding, self.image_size)

    def augment_numpy(self, images, rng):
        """The augmentation of `images` (NumPy, (B, H, W, C)) with the draws of `rng`, a NumPy Generator."""
        images = np.asarray(images)
        self._check(images.shape)
        batch = len(images)
        top = rng.integers(0, images.shape[1] + 2 * self.padding - self.image_size + 1, size=batch)
        left = rng.integers(0, images.shape[2] + 2 * self.padding - self.image_size + 1, size=batch)
        flip = rng.random(batch) < 0.5
        return crop_and_flip(images, top, left, flip, self.padding, self.image_size, xp=np)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.image_size, self.image_size, *input_shape[3:])

    def get_config(self):
        config = super().get_config()
        config.update({"image_size": self.image_size, "padding": self.padding, "seed": self.seed})
        return config


def cifar_augmentation(image_size=32, padding=4, seed=None):
    """`CifarAugmentation(image_size, padding, seed)`."""
    return CifarAugmentation(image_size, padding, seed)


def imagenet_augmentation(image_size=224, pca=None, seed=None, name="imagenet_augmentation"):
    """Random-size crop (Keras's RandomZoom, then a random crop per image) and horizontal flip, plus PCA noise.

    Images should be larger than `image_size` (e.g. resized so the short side is
    256, as AlexNet and VGG did). `pca=(eigenvalues, eigenvectors)` adds AlexNet's
    colour noise.
    """
    layers = [
        keras.layers.RandomZoom((-0.25, 0.0), seed=seed),  # crops covering 75-100 % of each side
        # a crop and flip per image (Keras's RandomCrop draws one offset per batch)
        CifarAugmentation(image_size, padding=0, seed=None if seed is None else seed + 1),
    ]
    if pca is not None:
        layers.append(PCAColorNoise(*pca, seed=None if seed is None else seed + 3))
    return keras.Sequential(layers, name=name)
