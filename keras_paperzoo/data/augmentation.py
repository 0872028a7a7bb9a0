"""The papers' image augmentations as Keras preprocessing layers.

They run inside a model or in `tf.data` on every backend (Keras's preprocessing
layers switch to TensorFlow ops inside `tf.data`). Each call draws new randomness
from the layer's `SeedGenerator`; at inference (`training=False`) the random
layers pass images through.

- `cifar_augmentation`: ResNet's CIFAR-10 recipe (He et al. 2016, Sec. 4.2):
  4-pixel zero padding, a random 32x32 crop, horizontal flip.
- `PCAColorNoise`: AlexNet's colour augmentation (Krizhevsky et al. 2012,
  Sec. 4.1): add sum_i alpha_i lambda_i p_i, alpha_i ~ N(0, 0.1), using the
  eigenvalues and eigenvectors of the training set's RGB covariance.
- `imagenet_augmentation`: random-size crop and flip (ResNet/VGG style) plus
  optional PCA colour noise.
- `center_crop`, `ten_crop`: the evaluation crops (AlexNet's 10-crop: the four
  corners and the centre, and their mirrors).
"""

import numpy as np

import keras
from keras import ops
from keras.src.layers.preprocessing.data_layer import DataLayer  # Keras's base for tf.data-safe layers


def crop_and_flip(images, top, left, flip, padding, size, xp=ops):
    """Zero-pad, crop each image at its own offset, mirror the chosen ones.

    The arithmetic of ResNet's CIFAR augmentation, written once for NumPy (`xp=np`,
    the data loader's fast path) and `keras.ops` (inside a model or a step).

    Args:
        images: (B, H, W, C).
        top, left: (B,) int offsets into the padded image, in [0, H + 2 padding - size].
        flip: (B,) bool, mirror left-right.
        padding, size: ints.

    Returns:
        (B, size, size, C).

    Example:

    ```python
    crops = crop_and_flip(images, top, left, flip, padding=4, size=32, xp=np)
    ```
    """
    padded = xp.pad(images, ((0, 0), (padding, padding), (padding, padding), (0, 0)))  # (B, H+2p, W+2p, C)
    if xp is np:  # a slice per image: 10x faster than a fancy-indexing gather or take_along_axis
        crops = np.empty((len(padded), size, size, *padded.shape[3:]), padded.dtype)  # (B, size, size, C)
        for b, (t, l, f) in enumerate(zip(top, left, flip)):
            window = padded[b, t : t + size, l : l + size]
            crops[b] = window[:, ::-1] if f else window
        return crops
    rows = ops.cast(top, "int32")[:, None] + ops.arange(size, dtype="int32")  # (B, size)
    cols = ops.cast(left, "int32")[:, None] + ops.arange(size, dtype="int32")  # (B, size)
    crops = ops.take_along_axis(padded, rows[:, :, None, None], axis=1)  # (B, size, W+2p, C)
    crops = ops.take_along_axis(crops, cols[:, None, :, None], axis=2)  # (B, size, size, C)
    return ops.where(flip[:, None, None, None], ops.flip(crops, axis=2), crops)


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


def per_channel_statistics(images):
    """(mean, variance) per channel of (N, H, W, C) images: for `keras.layers.Normalization`."""
    images = np.asarray(images, "float64")
    return images.mean(axis=(0, 1, 2)), images.var(axis=(0, 1, 2))


def rgb_pca(images, max_pixels=1_000_000, seed=0):
    """Eigenvalues and eigenvectors of the RGB covariance of (N, H, W, 3) images."""
    pixels = np.asarray(images, "float64").reshape(-1, 3)
    if len(pixels) > max_pixels:
        pixels = pixels[np.random.default_rng(seed).choice(len(pixels), max_pixels, replace=False)]
    eigenvalues, eigenvectors = np.linalg.eigh(np.cov(pixels, rowvar=False))
    return eigenvalues.astype("float32"), eigenvectors.astype("float32")


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class PCAColorNoise(DataLayer):
    """AlexNet's "fancy PCA" colour augmentation (Krizhevsky et al. 2012, Sec. 4.1).

    To each image's every RGB pixel add [p1 p2 p3] [alpha1 lambda1, alpha2 lambda2,
    alpha3 lambda3]^T with one alpha ~ N(0, std^2) per image and component.

    Args:
        eigenvalues: (3,) the lambda_i of the training set's RGB covariance.
        eigenvectors: (3, 3) with the p_i as columns (as `numpy.linalg.eigh` returns).
        std: standard deviation of alpha (0.1 in the paper).

    Example:

    ```python
    values, vectors = rgb_pca(train_images)
    layer = PCAColorNoise(values, vectors)
    dataset.map(lambda x, y: (layer(x), y))  # in tf.data on any backend (a Keras DataLayer)
    ```
    """

    def __init__(self, eigenvalues, eigenvectors, std=0.1, seed=None, **kwargs):
        kwargs.setdefault("dtype", "float32")  # float32 under a mixed-precision policy
        super().__init__(**kwargs)
        self.eigenvalues = np.asarray(eigenvalues, "float32").reshape(3)
        self.eigenvectors = np.asarray(eigenvectors, "float32").reshape(3, 3)
        if std < 0:
            raise ValueError(f"std must be >= 0; got {std}.")
        self.std = float(std)
        self.seed = seed
        self.generator = keras.random.SeedGenerator(seed)  # DataLayer's name for it

    def call(self, images, training=True):
        if not training:
            return images
        backend = self.backend  # TensorFlow ops inside tf.data, the Keras backend elsewhere
        batch = backend.shape(images)[0]
        seed = self._get_seed_generator(backend._backend)
        alpha = backend.random.normal((batch, 3), stddev=self.std, seed=seed)  # (B, 3)
        eigenvalues = backend.convert_to_tensor(self.eigenvalues)  # (3,)
        eigenvectors = backend.convert_to_tensor(self.eigenvectors)  # (3, 3), p_i as columns
        shift = backend.numpy.matmul(alpha * eigenvalues, backend.numpy.transpose(eigenvectors))  # (B, 3)
        return images + backend.numpy.reshape(shift, (-1, 1, 1, 3))

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "eigenvalues": self.eigenvalues.tolist(),
                "eigenvectors": self.eigenvectors.tolist(),
                "std": self.std,
                "seed": self.seed,
            }
        )
        return config


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


def center_crop(images, size):
    """The central (size x size) crop of (B, H, W, C) images."""
    height, width = images.shape[1], images.shape[2]
    if height < size or width < size:
        raise ValueError(f"center_crop: images of {height}x{width} are smaller than the crop {size}.")
    top, left = (height - size) // 2, (width - size) // 2
    return images[:, top : top + size, left : left + size]


def ten_crop(images, size):
    """AlexNet's test-time crops: 4 corners + centre, and their mirrors -> (10, B, size, size, C)."""
    height, width = images.shape[1], images.shape[2]
    if height < size or width < size:
        raise ValueError(f"ten_crop: images of {height}x{width} are smaller than the crop {size}.")
    crops = [
        images[:, :size, :size],
        images[:, :size, width - size :],
        images[:, height - size :, :size],
        images[:, height - size :, width - size :],
        center_crop(images, size),
    ]
    crops += [ops.flip(crop, axis=2) for crop in crops]
    return ops.stack(crops, axis=0)


def ten_crop_predict(model, images, size, batch_size=64):
    """Average the softmax of `model` over the ten crops (AlexNet Sec. 4.1). NumPy out."""
    crops = ops.convert_to_numpy(ten_crop(ops.convert_to_tensor(images), size))
    probabilities = [
        ops.convert_to_numpy(ops.softmax(ops.convert_to_tensor(model.predict(c, batch_size=batch_size, verbose=0))))
        for c in crops
    ]
    return np.mean(probabilities, axis=0)
