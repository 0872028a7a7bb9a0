"""The supervised recipes (data/views/supervised.py): ResNet's CIFAR crop and flip, the ImageNet crop."""

import numpy as np

import keras

from keras_paperzoo.data.views import cifar_augmentation, imagenet_augmentation
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


def _offsets(images, out, padding=4):
    """(dy, dx, mirrored) of each output image in its padded input (None where no window matches)."""
    size = out.shape[1]
    padded = np.pad(images, ((0, 0), (padding, padding), (padding, padding), (0, 0)))
    found = []
    for image, result in zip(padded, out):
        match = [(dy, dx, m) for dy in range(2 * padding + 1) for dx in range(2 * padding + 1) for m in (0, 1)
                 if np.array_equal((image[:, ::-1] if m else image)[dy : dy + size, dx : dx + size], result)]
        found.append(match[0] if match else None)
    return found


def test_cifar_augmentation_draws_a_crop_and_flip_per_image_in_keras_and_numpy():
    # He et al. Sec. 4.2 samples the crop per image; Keras's RandomCrop draws one per batch,
    # under which every image of this batch would share one (dy, dx).
    images = _images(64)
    augment = cifar_augmentation(seed=3)
    for out in (keras.ops.convert_to_numpy(augment(images, training=True)),
                augment.augment_numpy(images, np.random.default_rng(0))):
        found = _offsets(images, out)
        assert None not in found
        assert len({(dy, dx) for dy, dx, _ in found}) > 20  # of 81 offsets, 64 images
        assert 10 < sum(m for _, _, m in found) < 54  # about half mirrored
    small = _images(300, size=8)
    found = _offsets(small, cifar_augmentation(image_size=8, seed=4).augment_numpy(small, np.random.default_rng(1)))
    assert {dy for dy, _, _ in found} == {dx for _, dx, _ in found} == set(range(9))  # 0..8, both ends included


def test_imagenet_augmentation_zooms_crops_and_flips_to_the_crop_size():
    images = _images(16, size=40)
    out = keras.ops.convert_to_numpy(imagenet_augmentation(32, seed=0)(images, training=True))
    assert out.shape == (16, 32, 32, 3)
    assert out.min() >= -1e-6 and out.max() <= 1 + 1e-6  # zoom interpolates inside the input's range
    assert not any(np.allclose(o, i[4:36, 4:36]) for o, i in zip(out, images))  # none is the plain centre


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
