import numpy as np
import pytest

import keras

from keras_paperzoo.data.augmentation import (
    PCAColorNoise,
    center_crop,
    cifar_augmentation,
    per_channel_statistics,
    rgb_pca,
    ten_crop,
)
from tests.model_checks import check_config_roundtrip


def _images(n=4, size=32, seed=0):
    return np.random.default_rng(seed).random((n, size, size, 3)).astype("float32")


def test_cifar_augmentation_is_a_shifted_and_maybe_mirrored_window_of_the_padded_image():
    images = _images()
    out = keras.ops.convert_to_numpy(cifar_augmentation(seed=1)(images, training=True))
    assert out.shape == images.shape
    padded = np.pad(images, ((0, 0), (4, 4), (4, 4), (0, 0)))
    for image, result in zip(padded, out):
        found = any(
            np.allclose(candidate[dy : dy + 32, dx : dx + 32], result, atol=1e-6)
            for dy in range(9) for dx in range(9) for candidate in (image, image[:, ::-1])
        )
        assert found, "output is not a 32x32 window of the padded (or mirrored) image"
    assert not np.allclose(out, images)  # something moved
    np.testing.assert_allclose(keras.ops.convert_to_numpy(cifar_augmentation()(images, training=False)), images)
    check_config_roundtrip(cifar_augmentation(seed=2))


def test_pca_color_noise_moves_pixels_along_the_principal_components():
    values, vectors = rgb_pca(_images(8))
    np.testing.assert_allclose(vectors @ np.diag(values) @ vectors.T, np.cov(_images(8).reshape(-1, 3), rowvar=False), atol=1e-5)
    layer = PCAColorNoise(values, vectors, std=0.1, seed=3)
    images = _images(2)
    shift = keras.ops.convert_to_numpy(layer(images)) - images
    per_image = shift.reshape(2, -1, 3)
    np.testing.assert_allclose(per_image, per_image[:, :1, :].repeat(per_image.shape[1], axis=1), atol=1e-6)  # one shift per image
    coefficients = per_image[:, 0, :] @ vectors  # alpha_i * lambda_i
    assert np.all(np.abs(coefficients) <= 5 * 0.1 * values + 1e-7)
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(layer(images, training=False)), images)
    check_config_roundtrip(layer)
    with pytest.raises(ValueError, match="std"):
        PCAColorNoise(values, vectors, std=-1)


def test_crops():
    images = np.arange(2 * 6 * 6 * 1, dtype="float32").reshape(2, 6, 6, 1)
    np.testing.assert_array_equal(center_crop(images, 4), images[:, 1:5, 1:5])
    crops = keras.ops.convert_to_numpy(ten_crop(keras.ops.convert_to_tensor(images), 4))
    assert crops.shape == (10, 2, 4, 4, 1)
    np.testing.assert_array_equal(crops[1], images[:, :4, 2:])
    np.testing.assert_array_equal(crops[5], crops[0][:, :, ::-1])
    with pytest.raises(ValueError, match="smaller than the crop"):
        ten_crop(images, 8)
    mean, var = per_channel_statistics(_images())
    assert mean.shape == (3,) and np.all(var > 0)


def test_augmented_batches_depend_only_on_seed_epoch_and_index():
    """What makes a resumed run see the batches of the uninterrupted one."""
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches

    images = np.random.default_rng(0).random((40, 8, 8, 3)).astype("float32")
    labels = np.arange(40)

    def batch(epoch, index, warm_up=0):
        batches = EpochShuffledBatches(images, labels, batch_size=10, seed=4,
                                       augment=cifar_augmentation(image_size=8, padding=2, seed=1))
        for i in range(warm_up):  # draws that a resumed run never made
            batches[i % 4]
        batches.set_epoch(epoch)
        return batches[index]

    x, y = batch(2, 1)
    x_resumed, y_resumed = batch(2, 1, warm_up=7)
    np.testing.assert_array_equal(y, y_resumed)
    np.testing.assert_array_equal(x, x_resumed)
    x_other, _ = batch(3, 1)
    assert not np.array_equal(x, x_other)  # epochs still differ
    x_again, _ = batch(2, 1)
    assert not np.array_equal(x, images[y])  # and the batch is augmented
    np.testing.assert_array_equal(x, x_again)


def test_pca_color_noise_runs_inside_tf_data_on_every_backend():
    import tensorflow as tf

    values, vectors = rgb_pca(_images(8))
    layer = PCAColorNoise(values, vectors, std=0.1, seed=5)
    images = _images(4)
    dataset = tf.data.Dataset.from_tensor_slices(images).batch(2).map(layer)
    out = np.concatenate([np.asarray(batch) for batch in dataset])
    assert out.shape == images.shape
    shift = (out - images).reshape(4, -1, 3)
    np.testing.assert_allclose(shift, shift[:, :1, :].repeat(shift.shape[1], axis=1), atol=1e-6)  # one shift per image
    assert np.all(np.abs(shift[:, 0, :]) > 0)  # every image moved
