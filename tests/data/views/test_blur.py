"""GaussianBlur (data/views/blur.py): an isotropic blur of random sigma per image."""

import numpy as np

from keras import ops

from keras_paperzoo.data.views import GaussianBlur


def _np(x):
    return np.asarray(ops.convert_to_numpy(x))


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


def test_gaussian_blur_kernel_size_truncates_the_gaussian():
    impulse = np.zeros((8, 16, 16, 3), "float32")
    impulse[:, 8, 8] = 1.0
    out = _np(GaussianBlur(sigma=(2.0, 2.0), probability=1.0, kernel_size=3)(impulse))
    taps = np.exp(-np.arange(-1, 2) ** 2 / 8.0)  # 3 taps of sigma 2, renormalised
    taps /= taps.sum()
    expected = np.zeros((16, 16))
    expected[7:10, 7:10] = np.outer(taps, taps)
    np.testing.assert_allclose(out, np.broadcast_to(expected[None, :, :, None], out.shape), atol=1e-6)
