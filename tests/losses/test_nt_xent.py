"""NT-Xent (SimCLR eq. 1) against a NumPy reference written from the formula, one anchor at a time."""

import math

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.losses import nt_xent, nt_xent_accuracy
from tests.losses.loss_checks import (BAD_TEMPERATURES, check_bad_shapes_refused, check_bad_temperature_refused,
                                      finite_difference_gradient)
from tests.losses.loss_checks import gradient as _gradient
from tests.losses.loss_checks import views as _views


def _reference(z_a, z_b, tau):
    """1/(2N) sum_i -log [exp(sim(z_i, z_j)/tau) / sum_{k != i} exp(sim(z_i, z_k)/tau)], in float64."""
    z = np.concatenate([z_a, z_b]).astype("float64")
    z /= np.linalg.norm(z, axis=1, keepdims=True)
    two_n = len(z)
    total = 0.0
    for i in range(two_n):
        j = (i + two_n // 2) % two_n  # the other view of image i
        others = np.array([z[i] @ z[k] / tau for k in range(two_n) if k != i])
        log_denominator = others.max() + np.log(np.exp(others - others.max()).sum())
        total += log_denominator - z[i] @ z[j] / tau
    return total / two_n


def _reference_accuracy(z_a, z_b):
    z = np.concatenate([z_a, z_b]).astype("float64")
    z /= np.linalg.norm(z, axis=1, keepdims=True)
    two_n = len(z)
    hits = 0
    for i in range(two_n):
        similarity = z @ z[i]
        similarity[i] = -np.inf
        hits += int(np.argmax(similarity) == (i + two_n // 2) % two_n)
    return hits / two_n


def _loss(z_a, z_b, tau):
    return float(ops.convert_to_numpy(nt_xent(z_a, z_b, temperature=tau)))


@pytest.mark.parametrize("kind", ["random", "similar", "nearly_identical"])
@pytest.mark.parametrize("tau", [0.05, 0.1, 0.5, 1.0])
@pytest.mark.parametrize("n", [2, 7, 16])
def test_matches_numpy_reference(n, tau, kind):
    z_a, z_b = _views(n, kind=kind, seed=n)
    expected = _reference(z_a, z_b, tau)
    assert _loss(z_a, z_b, tau) == pytest.approx(expected, rel=1e-5, abs=1e-6)


def test_nearly_identical_views_give_a_small_loss_and_views_are_symmetric():
    z_a, z_b = _views(7, d=32, kind="nearly_identical")
    assert _loss(z_a, z_b, 0.1) < 0.05
    # Both orders of every pair are averaged: swapping the two views changes nothing.
    assert _loss(z_b, z_a, 0.1) == pytest.approx(_loss(z_a, z_b, 0.1), rel=1e-4)


def test_float16_inputs_at_temperature_0_05_stay_finite_and_match_float32():
    # Positive logits near 1 / 0.05 = 20: exp(20) overflows float16 (max 65504 ~ exp(11.1)), and
    # float16 logits near 20 are 0.016 apart: the loss (~0.1 here) needs float32 arithmetic.
    z_a, z_b = _views(8, kind="similar")
    half_a, half_b = z_a.astype("float16"), z_b.astype("float16")
    got = nt_xent(half_a, half_b, temperature=0.05)
    assert ops.convert_to_numpy(got).dtype == np.float32
    got = float(ops.convert_to_numpy(got))
    assert math.isfinite(got) and got > 0.01
    assert got == pytest.approx(_reference(half_a, half_b, 0.05), rel=1e-4, abs=2e-5)
    assert got == pytest.approx(_loss(z_a, z_b, 0.05), rel=2e-2)


def test_random_views_in_high_dimension_give_about_log_2n_minus_1():
    # Random unit vectors in 8192 dimensions have cosines ~ 0 +- 0.011: every logit ~ 0.
    n = 16
    z_a, z_b = _views(n, d=8192, seed=1)
    assert _loss(z_a, z_b, 0.1) == pytest.approx(math.log(2 * n - 1), abs=0.03)


def test_shuffling_the_images_in_both_views_together_leaves_the_loss_unchanged():
    z_a, z_b = _views(9, seed=2)
    permutation = np.random.default_rng(3).permutation(9)
    assert _loss(z_a[permutation], z_b[permutation], 0.2) == pytest.approx(_loss(z_a, z_b, 0.2), rel=1e-5)
    # Shuffling one view only breaks the pairs: the loss changes.
    assert abs(_loss(z_a, z_b[permutation], 0.2) - _loss(z_a, z_b, 0.2)) > 1e-2


def test_the_projections_are_normalised_inside():
    z_a, z_b = _views(5, seed=4)
    scales = np.arange(1, 6, dtype="float32")[:, None]
    assert _loss(z_a * scales, z_b * 3.0, 0.1) == pytest.approx(_loss(z_a, z_b, 0.1), rel=1e-5)


def test_accuracy_is_the_fraction_of_anchors_whose_positive_is_nearest():
    z_a, z_b = _views(8, seed=5)
    z_b[:4] = z_a[:4] + 0.01  # four images with matching views, four without
    expected = _reference_accuracy(z_a, z_b)
    assert 0.4 < expected < 1.0
    assert float(ops.convert_to_numpy(nt_xent_accuracy(z_a, z_b))) == pytest.approx(expected)
    assert float(ops.convert_to_numpy(nt_xent_accuracy(z_a, z_a + 1e-3))) == 1.0


def test_gradient_is_finite_and_matches_finite_differences():
    z_a, z_b = _views(3, d=4, seed=6)
    got = _gradient(lambda a: nt_xent(a, z_b, temperature=0.5), z_a)
    expected = finite_difference_gradient(lambda a: _reference(a, z_b, 0.5), z_a)
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-4)
    # Low temperature, float16, nearly identical views: still a finite gradient.
    z_a, z_b = _views(4, kind="nearly_identical", seed=7)
    half = _gradient(lambda a: nt_xent(a, z_b.astype("float16"), temperature=0.05), z_a.astype("float16"))
    assert np.all(np.isfinite(half.astype("float32")))


class TwoViewProjector(keras.Model):
    """The views of each image, (B, 2, 6), through one shared projection, trained with NT-Xent."""

    def __init__(self):
        super().__init__()
        self.projection = keras.layers.Dense(8)

    def call(self, views):
        return self.projection(views)  # (B, 2, 8)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        return nt_xent(y_pred[:, 0], y_pred[:, 1], temperature=0.1)


def test_inside_fit_the_loss_is_finite_and_falls():
    rng = np.random.default_rng(8)
    images = rng.normal(size=(20, 1, 6))
    views = (images + 0.3 * rng.normal(size=(20, 2, 6))).astype("float32")  # (20, 2, 6)
    keras.utils.set_random_seed(0)
    model = TwoViewProjector()
    model.compile(optimizer=keras.optimizers.SGD(0.1))
    # batch 8: the last batch holds 4 images, a second shape for the traced step.
    history = model.fit(views, epochs=6, batch_size=8, shuffle=False, verbose=0).history["loss"]
    assert all(math.isfinite(value) for value in history)
    assert history[-1] < history[0] - 0.05


@pytest.mark.parametrize("temperature", BAD_TEMPERATURES)
def test_a_temperature_that_is_not_a_positive_number_is_refused(temperature):
    check_bad_temperature_refused(nt_xent, temperature)


def test_bad_shapes_are_refused_by_value():
    check_bad_shapes_refused(nt_xent, "nt_xent", ("z_a", "z_b"))  # a batch of one, two shapes, rank 3
    z_a, z_b = _views(3)
    with pytest.raises(ValueError, match=r"one shape; got \(3, 8\) and \(2, 8\)"):
        nt_xent(z_a, z_b[:2])
    with pytest.raises(ValueError, match=r"got z_b of rank 1"):
        nt_xent(z_a, z_b[0])
