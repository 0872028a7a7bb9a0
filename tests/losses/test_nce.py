"""InstDisc's NCE loss against a NumPy implementation and its value at initialisation; Z fixed after one batch."""

import math

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.layers.nce_normalizer import NCENormalizer
from keras_paperzoo.losses.nce import nce_loss


def _numpy_nce(p, n):
    """eq. 6 per image, literally: -log h(pos) - sum_j log(1 - h(noise_j)), h = P / (P + m / n)."""
    m = p.shape[1] - 1
    h = p / (p + m / n + 1e-7)
    return float(np.mean(-np.log(h[:, 0]) - np.sum(np.log(1.0 - h[:, 1:]), axis=1)))


def test_nce_loss_matches_numpy():
    rng = np.random.default_rng(0)
    p = rng.uniform(1e-5, 1e-3, size=(4, 9)).astype("float64")
    ours = float(ops.convert_to_numpy(nce_loss(p.astype("float32"), num_data=1000)))
    assert ours == pytest.approx(_numpy_nce(p, 1000), rel=1e-4)


def test_at_initialisation_the_loss_is_near_its_analytic_value():
    # Scores all alike (untrained features, tau large against their spread): after Z = n mean(exp s) every
    # P = 1/n = P_n, h = 1/(1 + m), and J = log(1 + m) + m log((1 + m) / m), about log(1 + m) + 1.
    n, m = 5000, 256
    analytic = math.log(1 + m) + m * math.log((1 + m) / m)
    assert analytic == pytest.approx(math.log(1 + m) + 1, abs=0.01)
    equal = NCENormalizer(num_data=n)(np.full((4, 1 + m), 3.0, "float32"))
    assert float(ops.convert_to_numpy(nce_loss(equal, n))) == pytest.approx(analytic, abs=1e-3)  # eps = 1e-7 in h
    rng = np.random.default_rng(1)
    unit = lambda x: x / np.linalg.norm(x, axis=-1, keepdims=True)  # noqa: E731
    f, rows = unit(rng.normal(size=(32, 128))), unit(rng.normal(size=(32, 1 + m, 128)))
    scores = np.einsum("bd,bkd->bk", f, rows) / 1.0  # random unit features: scores spread 1 / sqrt(128)
    probabilities = NCENormalizer(num_data=n)(np.exp(scores).astype("float32"))
    assert float(ops.convert_to_numpy(nce_loss(probabilities, n))) == pytest.approx(analytic, rel=0.01)


def test_z_is_estimated_on_the_first_batch_only_and_saved(tmp_path):
    normalizer = NCENormalizer(num_data=100)
    first = np.full((2, 3), 2.0, "float32")
    np.testing.assert_allclose(ops.convert_to_numpy(normalizer(first)), 1.0 / 100)  # Z = 100 x 2
    assert float(ops.convert_to_numpy(normalizer.z)) == pytest.approx(200.0)
    second = np.full((2, 3), 50.0, "float32")
    np.testing.assert_allclose(ops.convert_to_numpy(normalizer(second)), 50.0 / 200)  # the same Z
    inputs = keras.Input((3,))
    model = keras.Model(inputs, normalizer(inputs))
    model.save(tmp_path / "z.keras")
    loaded = keras.saving.load_model(tmp_path / "z.keras", safe_mode=True)
    assert float(ops.convert_to_numpy(loaded.layers[-1].z)) == pytest.approx(200.0)


def test_bad_arguments():
    with pytest.raises(ValueError, match="num_data .* must be an int >= 1; got 0"):
        NCENormalizer(0)
    with pytest.raises(ValueError, match="num_data .*as an int >= 1; got 2.5"):
        nce_loss(np.ones((2, 3), "float32"), 2.5)
    with pytest.raises(ValueError, match=r"needs \(B, 1 \+ m\) probabilities, positive first, m >= 1; got shape \(2, 1\)"):
        nce_loss(np.ones((2, 1), "float32"), 10)
