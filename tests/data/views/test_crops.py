"""The crops (data/views/crops.py): RandomResizedCrop, crop_and_flip, the evaluation crops."""

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.data.views import RandomResizedCrop, center_crop, crop_and_flip, per_channel_statistics, ten_crop


def _images(n=4, size=32, seed=0):
    return np.random.default_rng(seed).random((n, size, size, 3)).astype("float32")


def _np(x):
    return np.asarray(ops.convert_to_numpy(x))


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


def test_crop_and_flip_is_the_same_in_numpy_and_keras_ops():
    images = _images(3, size=6)
    top, left, flip = np.array([0, 2, 4]), np.array([4, 1, 0]), np.array([False, True, True])
    padded = np.pad(images, ((0, 0), (2, 2), (2, 2), (0, 0)))
    windows = [p[t : t + 6, l : l + 6] for p, t, l in zip(padded, top, left)]
    expected = np.stack([w[:, ::-1] if f else w for w, f in zip(windows, flip)])
    np.testing.assert_array_equal(crop_and_flip(images, top, left, flip, 2, 6, xp=np), expected)
    tensors = [keras.ops.convert_to_tensor(a) for a in (images, top, left, flip)]
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(crop_and_flip(*tensors, 2, 6)), expected)


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
