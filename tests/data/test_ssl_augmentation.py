"""Contrastive-learning augmentations (MoCo v1 / v2) as Keras preprocessing layers."""

import numpy as np
import pytest

from keras import ops

from keras_paperzoo.data.ssl_augmentation import ColorJitter, GaussianBlur, MoCoAugmentation, RandomResizedCrop
from tests.model_checks import check_config_roundtrip


def _images(n=8, size=16, channels=3, seed=0):
    return np.random.default_rng(seed).random((n, size, size, channels)).astype("float32")


def _np(x):
    return np.asarray(ops.convert_to_numpy(x))


@pytest.mark.parametrize("version", [1, 2])
def test_two_views_differ_from_the_input_and_from_each_other(version):
    x = _images()
    augment = MoCoAugmentation(version=version, image_size=16, seed=1)
    view_q, view_k = _np(augment(x)), _np(augment(x))
    assert view_q.shape == view_k.shape == x.shape
    for i in range(len(x)):  # every image, not only on average
        assert np.abs(view_q[i] - x[i]).mean() > 0.01
        assert np.abs(view_k[i] - x[i]).mean() > 0.01
        assert np.abs(view_q[i] - view_k[i]).mean() > 0.01
    assert view_q.min() >= 0.0 and view_q.max() <= 1.0
    # Inference: no randomness, only resizing (here none) and normalisation.
    np.testing.assert_array_equal(_np(augment(x, training=False)), x)
    clone = check_config_roundtrip(augment)
    assert clone.version == version and clone.image_size == (16, 16)
    assert (clone.blur is None) == (version == 1)


@pytest.mark.needs_tensorflow
def test_views_in_tf_data_on_any_backend():
    import tensorflow as tf

    augment = MoCoAugmentation(version=2, image_size=12, mean=[0.5] * 3, std=[0.25] * 3, seed=0)
    dataset = tf.data.Dataset.from_tensor_slices(_images(6)).batch(3).map(lambda x: ((augment(x), augment(x)),))
    (view_q, view_k), = next(iter(dataset))
    assert tuple(view_q.shape) == (3, 12, 12, 3)
    assert float(tf.reduce_mean(tf.abs(view_q - view_k))) > 0.01
    assert float(tf.reduce_min(view_q)) >= -2.0 - 1e-6 and float(tf.reduce_max(view_q)) <= 2.0 + 1e-6


def _ramps(n, size):
    """(n, size, size, 2) images whose channels are the column and the row coordinates."""
    ys, xs = np.meshgrid(np.arange(float(size)), np.arange(float(size)), indexing="ij")
    return np.repeat(np.stack([xs, ys], -1)[None], n, axis=0).astype("float32")


def test_random_resized_crop_samples_the_crop_exactly():
    # On a linear ramp, bilinear resampling is exact: the output is the ramp seen through the crop.
    ramps = _ramps(6, 32)
    crop = RandomResizedCrop(16, 16, scale=(0.25, 0.25), ratio=(1.0, 1.0), seed=0)  # 16 x 16 crops
    out = _np(crop(ramps))
    assert out.shape == (6, 16, 16, 2)
    left, top = out[:, 0, 0, 0], out[:, 0, 0, 1]
    columns, rows = np.meshgrid(np.arange(16.0), np.arange(16.0))
    np.testing.assert_allclose(out[..., 0] - left[:, None, None], np.broadcast_to(columns, (6, 16, 16)), atol=1e-3)
    np.testing.assert_allclose(out[..., 1] - top[:, None, None], np.broadcast_to(rows, (6, 16, 16)), atol=1e-3)
    assert np.all((left >= 0) & (left <= 16) & (top >= 0) & (top <= 16))
    assert len(set(np.round(left, 3))) == 6  # one random crop per image
    # Scale 1 and ratio 1: the whole image.
    whole = RandomResizedCrop(32, 32, scale=(1.0, 1.0), ratio=(1.0, 1.0))
    np.testing.assert_array_equal(_np(whole(ramps)), ramps)


def test_random_resized_crop_area_and_ratio_follow_the_ranges():
    # The crop's size, read off the ramps: d(out)/dx = crop width / output width.
    crop = RandomResizedCrop(8, 8, scale=(0.2, 1.0), ratio=(3 / 4, 4 / 3), seed=3)
    both = _np(crop(_ramps(64, 32)))
    width = (both[:, 0, -1, 0] - both[:, 0, 0, 0]) * 8 / 7
    height = (both[:, -1, 0, 1] - both[:, 0, 0, 1]) * 8 / 7
    area = width * height / 32**2
    ratio = width / height
    assert area.min() >= 0.2 - 0.01 and area.max() <= 1.0 + 0.01
    assert ratio.min() >= 0.75 - 0.01 and ratio.max() <= 4 / 3 + 0.01
    assert area.std() > 0.15  # spread over the range, not one size


def test_color_jitter_uses_torchvision_factors():
    x = _images(64) * 0.5  # below 1 / 1.4: no clipping
    brightness = _np(ColorJitter(0.4, 0.0, 0.0, 0.0, seed=0)(x))
    ratio = brightness / x
    per_image = ratio.reshape(64, -1)
    np.testing.assert_allclose(per_image, per_image[:, :1].repeat(per_image.shape[1], 1), rtol=1e-4)  # one b per image
    assert per_image.min() >= 0.6 - 1e-4 and per_image.max() <= 1.4 + 1e-4 and per_image[:, 0].std() > 0.15
    # Saturation s x + (1 - s) gray(x): the gray value (luma) of each pixel is unchanged.
    muted = 0.4 + 0.2 * _images(64)  # little chroma: no clipping at s = 1.4
    saturated = _np(ColorJitter(0.0, 0.0, 0.4, 0.0, seed=0)(muted))
    luma = np.array([0.2989, 0.587, 0.114], "float32")
    np.testing.assert_allclose(saturated @ luma, muted @ luma, atol=1e-4)
    assert np.abs(saturated - muted).max() > 0.02
    # probability 0: identity; grayscale (1 channel) images get brightness and contrast only.
    np.testing.assert_array_equal(_np(ColorJitter(probability=0.0)(x)), x)
    gray = _np(ColorJitter(0.4, 0.4, 0.4, 0.1, seed=0)(x[..., :1]))
    assert gray.shape == (64, 16, 16, 1) and np.abs(gray - x[..., :1]).max() > 0.01
    # v2's p = 0.8: about 80 % of the images change.
    changed = np.abs(_np(ColorJitter(0.4, 0.4, 0.4, 0.1, probability=0.8, seed=1)(x)) - x)
    fraction = (changed.reshape(64, -1).max(axis=1) > 1e-6).mean()
    assert 0.65 <= fraction <= 0.95  # 0.8 +- 3 standard deviations of 64 draws


def test_gaussian_blur_is_per_image_and_keeps_flat_images_flat():
    flat = np.full((4, 16, 16, 3), 0.3, "float32")
    np.testing.assert_allclose(_np(GaussianBlur(probability=1.0, seed=0)(flat)), flat, atol=1e-6)
    impulse = np.zeros((8, 33, 33, 1), "float32")
    impulse[:, 16, 16] = 1.0
    blurred = _np(GaussianBlur(sigma=(0.5, 3.0), probability=1.0, seed=0)(impulse))[..., 0]
    # Each image's blur is an isotropic Gaussian: its spread is the same along rows and columns,
    # and sigma differs between images (Keras's RandomGaussianBlur draws one per batch).
    profile_rows = blurred.sum(axis=2)  # (8, 33)
    profile_cols = blurred.sum(axis=1)
    positions = np.arange(33.0) - 16
    sigma_rows = np.sqrt((profile_rows * positions**2).sum(1) / profile_rows.sum(1))
    sigma_cols = np.sqrt((profile_cols * positions**2).sum(1) / profile_cols.sum(1))
    np.testing.assert_allclose(sigma_rows, sigma_cols, rtol=1e-4)
    assert sigma_rows.min() >= 0.45 and sigma_rows.max() <= 3.05 and sigma_rows.std() > 0.3
    np.testing.assert_allclose(blurred.sum(axis=(1, 2)), 1.0, atol=1e-3)
    np.testing.assert_array_equal(_np(GaussianBlur(probability=0.0)(impulse)), impulse)


def test_bad_arguments_name_the_value():
    with pytest.raises(ValueError, match="version must be 1 or 2; got 3"):
        MoCoAugmentation(version=3)
    with pytest.raises(ValueError, match="scale is a fraction of the image area"):
        RandomResizedCrop(8, 8, scale=(0.5, 2.0))
    with pytest.raises(ValueError, match="hue must be a number in"):
        ColorJitter(hue=0.7)
    with pytest.raises(ValueError, match="sigma must be"):
        GaussianBlur(sigma=(2.0, 1.0))
    with pytest.raises(ValueError, match="mean and std go together"):
        MoCoAugmentation(mean=[0.5, 0.5, 0.5])
