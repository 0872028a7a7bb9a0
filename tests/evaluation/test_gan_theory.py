"""Tests for Section 4 of Goodfellow et al. (2014) and the classifier two-sample test."""

import doctest
import math

import numpy as np
import pytest
from scipy import stats

from keras_paperzoo.evaluation import gan_theory
from keras_paperzoo.evaluation import (
    classifier_two_sample_test,
    js_divergence,
    kl_divergence,
    optimal_discriminator,
    value_function,
    virtual_training_criterion,
)

# backend_free (tests/conftest.py): NumPy, SciPy and scikit-learn only (the classifier two-sample tests are
# scikit-learn's): no Keras backend is involved (see `_clear_keras_session` below), so every leg would compute the
# same numbers.
pytestmark = pytest.mark.backend_free("tensorflow")

LOG4 = math.log(4.0)


@pytest.fixture(autouse=True)
def _clear_keras_session():
    """Override the suite-wide Keras reset: these NumPy/scikit-learn tests build no
    Keras state, and its gc.collect() costs ~0.5 s per test on a loaded CPU."""
    yield
GRID, DX = np.linspace(-20.0, 20.0, 8001, retstep=True)


def gauss(mu, sd, floor=0.0):
    p = stats.norm.pdf(GRID, mu, sd)
    p = np.where(p < floor, 0.0, p)
    return p / (p.sum() * DX)  # integrate to 1 on the grid


def tgauss(mu, sd):
    # Tails below 1e-12 are cut to 0, so any ratio of positive densities is far
    # below 1e16 and float64 D* = p/(p+q) never rounds to exactly 0 or 1 where
    # the other density is positive (which would make log(1 - D*) = -inf).
    return gauss(mu, sd, floor=1e-12)


def mixture(w, a, b):
    return w * a + (1 - w) * b


PAIRS = [
    (tgauss(0, 1), tgauss(1, 1)),
    (tgauss(0, 1), tgauss(0, 3)),
    (tgauss(-2, 0.5), tgauss(4, 1)),
    (tgauss(0, 1), mixture(0.5, tgauss(-2, 0.5), tgauss(2, 0.5))),
    (np.array([0.1, 0.2, 0.7]), np.array([0.3, 0.3, 0.4])),
]


def pair_dx(p):
    return DX if p.shape == GRID.shape else 1.0


def test_optimal_discriminator_is_half_when_pg_equals_pdata():
    p = gauss(0.5, 2.0)
    np.testing.assert_array_equal(optimal_discriminator(p, p), 0.5)


def test_optimal_discriminator_matches_analytic_ratio_for_two_gaussians():
    # For N(m1, s^2) vs N(m2, s^2): D*(x) = sigmoid((m1 - m2)(2x - m1 - m2) / (2 s^2)).
    m1, m2, s = 0.0, 1.5, 1.2
    x = GRID[np.abs(GRID) < 8]
    d = optimal_discriminator(stats.norm.pdf(x, m1, s), stats.norm.pdf(x, m2, s))
    want = 1.0 / (1.0 + np.exp(-(m1 - m2) * (2 * x - m1 - m2) / (2 * s**2)))
    np.testing.assert_allclose(d, want, rtol=1e-10, atol=1e-12)


def test_optimal_discriminator_outside_both_supports_is_half():
    np.testing.assert_array_equal(optimal_discriminator([0.0, 2.0, 0.0], [0.0, 0.0, 1.0]), [0.5, 1.0, 0.0])


def test_criterion_at_pg_equals_pdata_is_minus_log4():
    for p in [gauss(0, 1), gauss(3, 0.2), np.array([0.2, 0.5, 0.3])]:
        assert virtual_training_criterion(p, p, pair_dx(p)) == pytest.approx(-LOG4, abs=1e-6)


@pytest.mark.parametrize("index", range(len(PAIRS)))
def test_criterion_is_minus_log4_plus_two_jsd(index):
    p_data, p_g = PAIRS[index]
    dx = pair_dx(p_data)
    c = virtual_training_criterion(p_data, p_g, dx)
    assert c == pytest.approx(-LOG4 + 2 * js_divergence(p_data, p_g, dx), abs=1e-9)
    assert c > -LOG4 + 1e-3  # strictly above the minimum when p_g != p_data
    assert c <= 1e-9  # and at most 0 (JSD <= log 2)


def test_well_separated_gaussians_reach_criterion_upper_bound():
    assert virtual_training_criterion(gauss(-8, 0.5), gauss(8, 0.5), DX) == pytest.approx(0.0, abs=1e-9)


def test_kl_matches_gaussian_closed_form_and_is_asymmetric():
    def kl_gauss(m1, s1, m2, s2):
        return math.log(s2 / s1) + (s1**2 + (m1 - m2) ** 2) / (2 * s2**2) - 0.5

    p, q = gauss(0, 1), gauss(1, 2)
    assert kl_divergence(p, q, DX) == pytest.approx(kl_gauss(0, 1, 1, 2), abs=1e-6)
    assert kl_divergence(q, p, DX) == pytest.approx(kl_gauss(1, 2, 0, 1), abs=1e-6)
    assert abs(kl_divergence(p, q, DX) - kl_divergence(q, p, DX)) > 0.1
    assert kl_divergence(p, p, DX) == pytest.approx(0.0, abs=1e-12)


def test_kl_zero_log_zero_and_infinite_cases():
    assert kl_divergence([0.0, 1.0], [0.5, 0.5]) == pytest.approx(math.log(2.0))
    assert kl_divergence([0.5, 0.5], [0.0, 1.0]) == math.inf


@pytest.mark.parametrize("index", range(len(PAIRS)))
def test_jsd_is_symmetric_and_bounded(index):
    p, q = PAIRS[index]
    dx = pair_dx(p)
    jsd = js_divergence(p, q, dx)
    assert jsd == pytest.approx(js_divergence(q, p, dx), abs=1e-12)
    assert 0.0 < jsd <= math.log(2.0) + 1e-12


def test_jsd_of_disjoint_supports_is_log2():
    assert js_divergence([0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.3, 0.7]) == pytest.approx(math.log(2.0))


@pytest.mark.parametrize("a,b", [(1.0, 1.0), (0.3, 0.9), (2.0, 0.5), (0.05, 3.0)])
def test_pointwise_objective_is_concave_with_maximum_at_a_over_a_plus_b(a, b):
    # The proof of Proposition 1: y -> a log y + b log(1 - y) peaks at a / (a + b).
    y, step = np.linspace(1e-4, 1 - 1e-4, 9999, retstep=True)
    f = np.array([value_function(yi, a, b) for yi in y[::100]])  # spot-check the library
    np.testing.assert_allclose(f, a * np.log(y[::100]) + b * np.log(1 - y[::100]), rtol=1e-12)
    f = a * np.log(y) + b * np.log(1 - y)
    assert abs(y[np.argmax(f)] - optimal_discriminator(a, b)) <= step
    assert np.all(np.diff(f, 2) < 0)  # concave (not convex): second differences negative


@pytest.mark.parametrize("index", range(len(PAIRS)))
def test_value_function_at_optimal_discriminator_equals_criterion(index):
    p_data, p_g = PAIRS[index]
    dx = pair_dx(p_data)
    d_star = optimal_discriminator(p_data, p_g)
    c = virtual_training_criterion(p_data, p_g, dx)
    assert value_function(d_star, p_data, p_g, dx) == pytest.approx(c, abs=1e-9)
    for other in [np.full_like(d_star, 0.5), np.clip(d_star + 0.05, 0.0, 1.0), d_star**2]:
        assert value_function(other, p_data, p_g, dx) < c  # D* is the maximiser


def test_value_function_at_rounded_optimal_discriminator_in_far_tails_is_minus_inf():
    # Documented float64 trap: untruncated tails make D* round to 1 where p_g > 0.
    p_data, p_g = gauss(0, 1), mixture(0.5, gauss(-2, 0.5), gauss(2, 0.5))
    assert value_function(optimal_discriminator(p_data, p_g), p_data, p_g, DX) == -math.inf
    assert math.isfinite(virtual_training_criterion(p_data, p_g, DX))


def test_value_function_zero_log_zero_and_minus_inf():
    assert value_function([1.0, 0.0], [0.5, 0.0], [0.0, 0.5]) == 0.0  # perfect D on disjoint data
    assert value_function([0.0, 0.0], [0.5, 0.5], [0.5, 0.5]) == -math.inf


def test_invalid_inputs_raise():
    with pytest.raises(ValueError, match=r"d \(discriminator output\) must lie in \[0, 1\]"):
        value_function(1.5, 0.5, 0.5)
    with pytest.raises(ValueError, match="p_g must be non-negative"):
        optimal_discriminator([0.5], [-0.1])
    with pytest.raises(ValueError, match=r"dx \(grid spacing\) must be a finite number > 0"):
        kl_divergence([0.5, 0.5], [0.5, 0.5], dx=0.0)
    with pytest.raises(ValueError, match="densities must share a grid"):
        js_divergence([0.5, 0.5], [1.0])


def test_c2st_same_distribution_is_at_chance():
    rng = np.random.default_rng(0)
    out = classifier_two_sample_test(rng.normal(size=(400, 5)), rng.normal(size=(400, 5)), seed=0)
    assert out["num_test"] == 400 and out["num_train"] == 400
    assert 0.42 <= out["accuracy"] <= 0.58
    assert out["p_value"] > 0.05


def test_c2st_shifted_distribution_is_detected_with_exact_binomial_p_value():
    rng = np.random.default_rng(1)
    out = classifier_two_sample_test(rng.normal(size=(400, 5)), rng.normal(loc=1.0, size=(400, 5)), seed=0)
    assert out["accuracy"] > 0.8  # Bayes accuracy is Phi(sqrt(5) / 2) = 0.868
    assert out["p_value"] < 1e-20
    assert out["accuracy"] == out["num_correct"] / out["num_test"]
    assert out["p_value"] == pytest.approx(stats.binom.sf(out["num_correct"] - 1, out["num_test"], 0.5))


def test_c2st_mlp_detects_a_variance_change_that_logistic_misses():
    rng = np.random.default_rng(2)
    x_a, x_b = rng.normal(size=(300, 2)), rng.normal(scale=3.0, size=(300, 2))
    linear = classifier_two_sample_test(x_a, x_b, classifier="logistic", seed=0)
    mlp = classifier_two_sample_test(x_a, x_b, classifier="mlp", seed=0)
    assert linear["accuracy"] < 0.62
    assert mlp["accuracy"] > 0.75 and mlp["p_value"] < 1e-10


def test_c2st_balances_unequal_sizes_and_validates():
    rng = np.random.default_rng(3)
    out = classifier_two_sample_test(rng.normal(size=(100, 2, 2)), rng.normal(size=(60, 4)))
    assert out["num_train"] + out["num_test"] == 120
    with pytest.raises(ValueError, match="feature sizes must match"):
        classifier_two_sample_test(np.zeros((10, 3)), np.zeros((10, 4)))
    with pytest.raises(ValueError, match="classifier must be"):
        classifier_two_sample_test(np.zeros((10, 3)), np.ones((10, 3)), classifier="svm")


def test_docstring_examples_run():
    assert doctest.testmod(gan_theory, extraglobs={"np": np}).failed == 0
