"""RGBToLab against scikit-image's rgb2lab (1e-3) and known colours; CMC's L / ab split."""

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.layers.rgb_to_lab import RGBToLab, split_lab
from tests.model_checks import check_config_roundtrip


def _lab(images):
    return np.asarray(ops.convert_to_numpy(RGBToLab()(images)))


def test_matches_scikit_image_rgb2lab():
    color = pytest.importorskip("skimage.color", reason="scikit-image is a test dependency")
    images = np.random.default_rng(0).random((3, 9, 7, 3)).astype("float32")
    images[0, 0, :3] = [[0, 0, 0], [1, 1, 1], [0.02, 0.03, 0.01]]  # black, white, the linear part of the gamma
    np.testing.assert_allclose(_lab(images), color.rgb2lab(images.astype("float64")), atol=1e-3)


def test_known_colours_and_the_split():
    pixels = np.array([[[[1, 1, 1], [0, 0, 0], [1, 0, 0], [0, 0, 1]]]], "float32")  # (1, 1, 4, 3)
    lab = _lab(pixels)[0, 0]
    np.testing.assert_allclose(lab[0], [100, 0, 0], atol=2e-2)       # D65 white
    np.testing.assert_allclose(lab[1], [0, 0, 0], atol=1e-4)         # black
    np.testing.assert_allclose(lab[2], [53.24, 80.09, 67.20], atol=2e-2)   # sRGB red
    np.testing.assert_allclose(lab[3], [32.30, 79.19, -107.86], atol=2e-2)  # sRGB blue
    luminance, chroma = split_lab(_lab(pixels))
    assert luminance.shape == (1, 1, 4, 1) and chroma.shape == (1, 1, 4, 2)


def test_inside_a_saved_model(tmp_path):
    check_config_roundtrip(RGBToLab())
    inputs = keras.Input((4, 4, 3))
    model = keras.Model(inputs, RGBToLab()(inputs))
    model.save(tmp_path / "lab.keras")
    loaded = keras.saving.load_model(tmp_path / "lab.keras", safe_mode=True)
    x = np.random.default_rng(1).random((2, 4, 4, 3)).astype("float32")
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_not_rgb_is_refused_naming_the_shape():
    with pytest.raises(ValueError, match=r"needs RGB images with 3 channels in the last axis; got shape \(2, 4, 4, 1\)"):
        RGBToLab()(np.zeros((2, 4, 4, 1), "float32"))
