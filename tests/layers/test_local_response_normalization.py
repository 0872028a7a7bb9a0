"""Local response normalization (Krizhevsky et al. 2012, Sec. 3.3)."""

import numpy as np
import pytest

import keras

from keras_paperzoo.layers.local_response_normalization import LocalResponseNormalization
from tests.model_checks import check_config_roundtrip, check_saved_model


def _paper_lrn(a, n=5, k=2.0, alpha=1e-4, beta=0.75):
    """The paper's formula, one channel at a time (channels last)."""
    a = np.asarray(a, "float64")
    channels = a.shape[-1]
    b = np.empty_like(a)
    for i in range(channels):
        lo, hi = max(0, i - n // 2), min(channels - 1, i + n // 2)
        total = np.sum(a[..., lo : hi + 1] ** 2, axis=-1)
        b[..., i] = a[..., i] / (k + alpha * total) ** beta
    return b


def _activations(shape=(2, 5, 4, 12), scale=30.0, seed=0):
    # ReLU-like magnitudes of tens, so alpha * sum is of order 1 and the normalization bites.
    return (scale * np.random.default_rng(seed).normal(size=shape)).astype("float32")


@pytest.mark.parametrize(
    "size,k,alpha,beta", [(5, 2.0, 1e-4, 0.75), (3, 1.0, 1e-3, 0.5), (1, 2.0, 1e-2, 1.0)]
)
def test_matches_the_papers_formula(size, k, alpha, beta):
    x = _activations()
    y = keras.ops.convert_to_numpy(LocalResponseNormalization(size, k, alpha, beta)(x))
    np.testing.assert_allclose(y, _paper_lrn(x, size, k, alpha, beta), rtol=1e-5, atol=1e-6)
    # With these magnitudes the normalization is far from the identity-up-to-scale.
    ratio = y / np.where(x == 0, 1, x)
    assert ratio.max() / ratio.min() > 1.2


def test_channels_fewer_than_the_window_and_symbolic_shapes():
    x = _activations((3, 2, 2, 2))
    y = keras.ops.convert_to_numpy(LocalResponseNormalization()(x))
    np.testing.assert_allclose(y, _paper_lrn(x), rtol=1e-5, atol=1e-6)
    layer = LocalResponseNormalization()
    assert layer(keras.Input((55, 55, 96))).shape == (None, 55, 55, 96)
    assert layer.compute_output_shape((None, 13, 13, 256)) == (None, 13, 13, 256)
    assert layer.count_params() == 0


@pytest.mark.needs_tensorflow
def test_matches_tensorflow_local_response_normalization():
    tf = pytest.importorskip("tensorflow")
    x = _activations((2, 6, 6, 16), seed=1)
    expected = tf.nn.local_response_normalization(x, depth_radius=2, bias=2.0, alpha=1e-4, beta=0.75)
    y = keras.ops.convert_to_numpy(LocalResponseNormalization()(x))
    np.testing.assert_allclose(y, expected.numpy(), rtol=1e-5, atol=1e-5)


def test_matches_torch_local_response_norm_with_alpha_times_n():
    torch = pytest.importorskip("torch")
    x = _activations((2, 6, 6, 16), seed=2)
    # PyTorch divides alpha by n; NCHW.
    torch_lrn = torch.nn.LocalResponseNorm(size=5, alpha=5 * 1e-4, beta=0.75, k=2.0)
    expected = torch_lrn(torch.from_numpy(x).permute(0, 3, 1, 2)).permute(0, 2, 3, 1).numpy()
    y = keras.ops.convert_to_numpy(LocalResponseNormalization()(x))
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


def test_bad_arguments_name_the_value_and_rule():
    with pytest.raises(ValueError, match="size .* odd positive int.*got 4"):
        LocalResponseNormalization(size=4)
    with pytest.raises(ValueError, match="size .* got 0"):
        LocalResponseNormalization(size=0)
    with pytest.raises(ValueError, match="beta must be a non-negative number; got -1"):
        LocalResponseNormalization(beta=-1)
    with pytest.raises(ValueError, match="k > 0 or alpha > 0"):
        LocalResponseNormalization(k=0, alpha=0)
    with pytest.raises(ValueError, match="known number of channels"):
        LocalResponseNormalization()(keras.Input((4, 4, None)))


def test_config_roundtrip_and_save(tmp_path):
    clone = check_config_roundtrip(LocalResponseNormalization(3, k=1.0, alpha=2e-4, beta=0.5, name="norm"))
    assert (clone.size, clone.k, clone.alpha, clone.beta) == (3, 1.0, 2e-4, 0.5)
    model = keras.Sequential(
        [keras.Input((4, 4, 8)), keras.layers.Conv2D(8, 3), LocalResponseNormalization()]
    )
    check_saved_model(model, _activations((2, 4, 4, 8)), tmp_path)
