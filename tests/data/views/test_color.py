"""The colour layers (data/views/color.py): ColorJitter, RandomSolarization, PCAColorNoise."""

import colorsys

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.data.views import ColorJitter, PCAColorNoise, RandomSolarization, rgb_pca
from tests.model_checks import check_config_roundtrip


LUMA = np.array([0.2989, 0.587, 0.114])
# Few distinct shapes: JAX compiles each eager op once per shape (seconds each for the crop and the jitter).
N_STAT, SIZE_STAT = 400, 24  # the statistical tests: 400 images of 24 x 24 (blur kernel 2 taps, radius 1)


def _binomial_tolerance(p, n=N_STAT):
    return 4 * np.sqrt(p * (1 - p) / n)  # 4 standard deviations


def _images(n=8, size=16, channels=3, seed=0):
    return np.random.default_rng(seed).random((n, size, size, channels)).astype("float32")


def _np(x):
    return np.asarray(ops.convert_to_numpy(x))


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


def _jitter_reference(x, u, u_order, strengths, hue):
    """torchvision's ColorJitter on one image at a time, in the order argsort(u_order[b])."""
    out = x.astype("float64").copy()
    for b in range(len(x)):
        factors = [max(0.0, 1 - s) + (1 + s - max(0.0, 1 - s)) * u[b, i] for i, s in enumerate(strengths)]
        y = out[b]
        for operation in np.argsort(u_order[b]):
            gray = y @ LUMA
            if operation == 0:
                y = y * factors[0]
            elif operation == 1:
                y = factors[1] * y + (1 - factors[1]) * gray.mean()
            elif operation == 2:
                y = factors[2] * y + (1 - factors[2]) * gray[..., None]
            else:
                shift = (2 * u[b, 3] - 1) * hue
                hsv = [colorsys.rgb_to_hsv(*pixel) for pixel in y.reshape(-1, 3)]
                y = np.array([colorsys.hsv_to_rgb((h + shift) % 1.0, s, v) for h, s, v in hsv]).reshape(y.shape)
            y = np.clip(y, 0.0, 1.0)
        out[b] = y
    return out


def test_color_jitter_random_order_matches_a_per_image_reference():
    x = _images(8, seed=6)
    jitter = ColorJitter(0.8, 0.8, 0.8, 0.2, random_order=True, seed=7)
    # The layer's draws, repeated from a generator in the same state: (B, 5) factors, then (B, 4) for the order.
    generator = keras.random.SeedGenerator(7)
    u = _np(keras.random.uniform((8, 5), seed=generator))
    u_order = _np(keras.random.uniform((8, 4), seed=generator))
    out = _np(jitter(x))
    np.testing.assert_allclose(out, _jitter_reference(x, u, u_order, (0.8, 0.8, 0.8), 0.2), atol=2e-4)
    fixed = _jitter_reference(x, u, np.tile(np.arange(4.0), (8, 1)), (0.8, 0.8, 0.8), 0.2)
    differs = np.abs(out - fixed).reshape(8, -1).max(axis=1) > 1e-3
    assert differs.sum() >= 3  # the order matters (through clipping and the hue rotation)
    clone = check_config_roundtrip(jitter)
    assert clone.random_order


def test_random_solarization_formula_and_probability():
    x = _images(8)
    np.testing.assert_allclose(_np(RandomSolarization(probability=1.0)(x)), np.where(x < 0.5, x, 1.0 - x))
    np.testing.assert_array_equal(_np(RandomSolarization(probability=0.0)(x)), x)
    wide = _np(RandomSolarization(probability=1.0, threshold=0.3, value_range=(0, 255))(x * 255))
    np.testing.assert_allclose(wide, np.where(x * 255 < 76.5, x * 255, 255 - x * 255), rtol=1e-6)
    flat = np.full((N_STAT, SIZE_STAT, SIZE_STAT, 3), 0.8, "float32")
    solarised = _np(RandomSolarization(probability=0.2, seed=0)(flat))[:, 0, 0, 0]
    assert np.all(np.isclose(solarised, 0.2) | np.isclose(solarised, 0.8))
    assert abs((solarised < 0.5).mean() - 0.2) < _binomial_tolerance(0.2)


def test_pca_color_noise_moves_pixels_along_the_principal_components():
    values, vectors = rgb_pca(_images(8, size=32))
    np.testing.assert_allclose(vectors @ np.diag(values) @ vectors.T, np.cov(_images(8, size=32).reshape(-1, 3), rowvar=False), atol=1e-5)
    layer = PCAColorNoise(values, vectors, std=0.1, seed=3)
    images = _images(2, size=32)
    shift = keras.ops.convert_to_numpy(layer(images)) - images
    per_image = shift.reshape(2, -1, 3)
    np.testing.assert_allclose(per_image, per_image[:, :1, :].repeat(per_image.shape[1], axis=1), atol=1e-6)  # one shift per image
    coefficients = per_image[:, 0, :] @ vectors  # alpha_i * lambda_i
    assert np.all(np.abs(coefficients) <= 5 * 0.1 * values + 1e-7)
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(layer(images, training=False)), images)
    check_config_roundtrip(layer)
    with pytest.raises(ValueError, match="std"):
        PCAColorNoise(values, vectors, std=-1)


@pytest.mark.needs_tensorflow
def test_pca_color_noise_runs_inside_tf_data_on_every_backend():
    import tensorflow as tf

    values, vectors = rgb_pca(_images(8, size=32))
    layer = PCAColorNoise(values, vectors, std=0.1, seed=5)
    images = _images(4, size=32)
    dataset = tf.data.Dataset.from_tensor_slices(images).batch(2).map(layer)
    out = np.concatenate([np.asarray(batch) for batch in dataset])
    assert out.shape == images.shape
    shift = (out - images).reshape(4, -1, 3)
    np.testing.assert_allclose(shift, shift[:, :1, :].repeat(shift.shape[1], axis=1), atol=1e-6)  # one shift per image
    assert np.all(np.abs(shift[:, 0, :]) > 0)  # every image moved
