"""Tests for the Parzen-window log-likelihood (Goodfellow et al. 2014, Table 1)."""

import doctest
import math

import keras
import numpy as np
import pytest
from scipy.special import logsumexp

from keras_paperzoo.evaluation import parzen
from keras_paperzoo.evaluation import parzen_evaluation, parzen_log_likelihood, select_sigma


@pytest.fixture(autouse=True)
def _clear_keras_session():
    """Override the suite-wide Keras reset (its gc.collect() costs ~0.5 s per test on
    a loaded CPU): only the generator tests build models, and they reset themselves."""
    yield


def reference_ll(samples, x, sigma):
    """Float64 brute force with explicit differences (no norm expansion)."""
    samples = np.asarray(samples, np.float64).reshape(len(samples), -1)
    x = np.asarray(x, np.float64).reshape(len(x), -1)
    n, d = samples.shape
    out = []
    for row in x:
        sq = np.sum((row[None, :] - samples) ** 2, axis=1)  # (n,)
        out.append(logsumexp(-sq / (2 * sigma**2)))
    return np.array(out) - math.log(n) - 0.5 * d * math.log(2 * math.pi * sigma**2)


def mnist_like(rng, n, d=784):
    """Sparse [0, 1] vectors with MNIST-like norms (about 19% bright pixels)."""
    return (rng.random((n, d)) < 0.19) * rng.uniform(0.5, 1.0, size=(n, d))


@pytest.mark.parametrize("sigma", [0.1, 0.3, 1.0])
def test_matches_float64_reference_on_mnist_sized_data(sigma):
    rng = np.random.default_rng(0)
    samples = mnist_like(rng, 300)
    x = np.concatenate([mnist_like(rng, 30), samples[:10] + 0.01 * rng.normal(size=(10, 784))])
    got = parzen_log_likelihood(samples.reshape(-1, 28, 28), x.reshape(-1, 28, 28), sigma)
    want = reference_ll(samples, x, sigma)
    assert got.dtype == np.float64 and got.shape == (40,)
    np.testing.assert_allclose(got, want, rtol=1e-4)
    # float32 error in nats is negligible next to the paper's standard error (~2 nats).
    assert np.max(np.abs(got - want)) < 0.05


def test_matches_reference_on_random_low_dimensional_data():
    rng = np.random.default_rng(1)
    samples = rng.normal(loc=5.0, size=(257, 3))
    x = rng.normal(loc=5.0, size=(33, 3))
    np.testing.assert_allclose(parzen_log_likelihood(samples, x, 0.2), reference_ll(samples, x, 0.2), rtol=1e-4)


def test_hand_computed_single_sample():
    # one centre at the origin, a point at distance 5 in d=3, sigma=2:
    # log p = -25 / (2 * 4) - log 1 - (3/2) log(2 pi 4)
    ll = parzen_log_likelihood(np.zeros((1, 3)), np.array([[3.0, 4.0, 0.0]]), sigma=2.0)
    assert ll[0] == pytest.approx(-25.0 / 8.0 - 1.5 * math.log(8.0 * math.pi), rel=1e-7)


def test_hand_computed_two_symmetric_samples():
    # centres at 0 and 2, x = 1, sigma = 1: the mixture equals N(1; 0, 1).
    ll = parzen_log_likelihood(np.array([[0.0], [2.0]]), np.array([[1.0]]), sigma=1.0)
    assert ll[0] == pytest.approx(-0.5 - 0.5 * math.log(2 * math.pi), rel=1e-7)


def test_one_dimensional_inputs_are_single_features():
    ll = parzen_log_likelihood(np.array([0.0, 2.0]), np.array([1.0]), sigma=1.0)
    assert ll.shape == (1,) and ll[0] == pytest.approx(-0.5 - 0.5 * math.log(2 * math.pi), rel=1e-7)


def test_select_sigma_matches_brute_force_loop():
    rng = np.random.default_rng(2)
    samples = rng.normal(scale=0.5, size=(300, 5))
    x_valid = rng.normal(scale=0.5, size=(60, 5))
    grid = np.logspace(-1, 0, 10)
    brute = [np.mean(reference_ll(samples, x_valid, s)) for s in grid]
    best, scores = select_sigma(samples, x_valid)
    assert best == pytest.approx(grid[int(np.argmax(brute))])
    assert 0 < int(np.argmax(brute)) < 9  # interior optimum: the choice is informative
    np.testing.assert_allclose(list(scores.keys()), grid)
    np.testing.assert_allclose(list(scores.values()), brute, rtol=1e-4)


def test_select_sigma_custom_grid():
    rng = np.random.default_rng(3)
    samples, x_valid = rng.normal(size=(100, 2)), rng.normal(size=(20, 2))
    best, scores = select_sigma(samples, x_valid, sigmas=[0.01, 0.5, 50.0])
    assert best == 0.5 and list(scores) == [0.01, 0.5, 50.0]


def test_converges_to_true_gaussian_log_density():
    # Samples s ~ N(0, tau^2 I). E_s[N(x; s, sigma^2 I)] = N(x; 0, (tau^2 + sigma^2) I)
    # exactly, so the Parzen density is an unbiased estimate of that Gaussian.
    # Its relative standard deviation is sqrt((E[K^2] / E[K]^2 - 1) / n) with
    # E[K^2] = (4 pi sigma^2)^(-d/2) N(x; 0, (tau^2 + sigma^2 / 2) I); the log
    # estimate's error is about that relative sd (delta method), so 5 sd is a
    # safe, still informative tolerance (about 0.05 nats here).
    d, tau, sigma, n = 2, 1.0, 0.5, 20_000
    rng = np.random.default_rng(4)
    samples = rng.normal(scale=tau, size=(n, d))
    x = np.array([[0.0, 0.0], [0.5, -0.3], [1.0, 1.0], [-1.5, 0.2]])

    def log_gauss(var):
        return -0.5 * np.sum(x**2, axis=1) / var - 0.5 * d * np.log(2 * np.pi * var)

    true_ll = log_gauss(tau**2 + sigma**2)
    log_ek2 = -0.5 * d * np.log(4 * np.pi * sigma**2) + log_gauss(tau**2 + sigma**2 / 2)
    rel_sd = np.sqrt((np.exp(log_ek2 - 2 * true_ll) - 1) / n)
    got = parzen_log_likelihood(samples, x, sigma)
    assert np.all(rel_sd < 0.02)
    assert np.all(np.abs(got - true_ll) < 5 * rel_sd), (got - true_ll, rel_sd)


def test_batch_size_does_not_change_result():
    rng = np.random.default_rng(5)
    samples, x = rng.normal(size=(120, 10)), rng.normal(size=(23, 10))
    base = reference_ll(samples, x, 0.7)
    for batch_size in [1, 7, 23, 10_000]:  # 7 leaves a padded remainder of 2 rows
        got = parzen_log_likelihood(samples, x, 0.7, batch_size=batch_size)
        np.testing.assert_allclose(got, base, rtol=1e-6)


@pytest.mark.parametrize("sigma", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_sigma_raises(sigma):
    with pytest.raises(ValueError, match=r"sigma must be a finite number > 0"):
        parzen_log_likelihood(np.zeros((2, 3)), np.zeros((1, 3)), sigma)


def test_bad_sigma_in_grid_raises():
    with pytest.raises(ValueError, match=r"sigma must be a finite number > 0; got \[0.0\]"):
        select_sigma(np.zeros((2, 3)), np.zeros((1, 3)), sigmas=[0.1, 0.0])
    with pytest.raises(ValueError, match="sigmas is empty"):
        select_sigma(np.zeros((2, 3)), np.zeros((1, 3)), sigmas=[])


def test_non_scalar_sigma_raises():
    with pytest.raises(ValueError, match="sigma must be a single positive number"):
        parzen_log_likelihood(np.zeros((2, 3)), np.zeros((1, 3)), [0.1, 0.2])


def test_feature_mismatch_raises():
    with pytest.raises(ValueError, match=r"feature sizes must match: samples have d=784 .* x has d=783"):
        parzen_log_likelihood(np.zeros((2, 28, 28)), np.zeros((1, 783)), 0.1)


@pytest.mark.parametrize("which", ["samples", "x"])
def test_empty_inputs_raise(which):
    arrays = {"samples": np.zeros((2, 3)), "x": np.zeros((2, 3))}
    arrays[which] = np.zeros((0, 3))
    with pytest.raises(ValueError, match=f"{which} is empty"):
        parzen_log_likelihood(arrays["samples"], arrays["x"], 0.1)


def test_bad_batch_size_raises():
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        parzen_log_likelihood(np.zeros((2, 3)), np.zeros((1, 3)), 0.1, batch_size=0)


def test_evaluation_on_arrays_reports_mean_and_standard_error():
    rng = np.random.default_rng(6)
    samples = rng.normal(size=(200, 4))
    x_valid, x_test = rng.normal(size=(40, 4)), rng.normal(size=(50, 4))
    out = parzen_evaluation(samples, x_valid, x_test)
    best, grid = select_sigma(samples, x_valid)
    ll = reference_ll(samples, x_test, best)
    assert out["sigma"] == best and out["sigma_grid"] == pytest.approx(grid)
    assert out["num_samples"] == 200
    assert out["log_likelihood"] == pytest.approx(np.mean(ll), rel=1e-5)
    assert out["standard_error"] == pytest.approx(np.std(ll) / math.sqrt(50), rel=1e-4)


def test_evaluation_with_generator_uses_num_samples_seeded_noise():
    keras.utils.clear_session()
    generator = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(6)])
    rng = np.random.default_rng(7)
    x_valid, x_test = rng.normal(size=(20, 6)), rng.normal(size=(30, 6))
    out = parzen_evaluation(generator, x_valid, x_test, num_samples=37, seed=3)
    assert set(out) == {"log_likelihood", "standard_error", "sigma", "num_samples", "sigma_grid"}
    assert out["num_samples"] == 37
    np.testing.assert_allclose(list(out["sigma_grid"]), np.logspace(-1, 0, 10))
    noise = np.random.default_rng(3).standard_normal((37, 4)).astype("float32")
    samples = keras.ops.convert_to_numpy(generator(noise))
    assert samples.shape == (37, 6)
    ll = parzen_log_likelihood(samples, x_test, out["sigma"])
    assert out["log_likelihood"] == pytest.approx(np.mean(ll), rel=1e-5)
    assert out["sigma"] == select_sigma(samples, x_valid)[0]


def test_evaluation_explicit_latent_dim_and_unknown_input_shape():
    keras.utils.clear_session()
    generator = keras.Sequential([keras.layers.Dense(3)])  # never built: no input_shape
    x = np.random.default_rng(8).normal(size=(10, 3))
    with pytest.raises(ValueError, match="pass latent_dim"):
        parzen_evaluation(generator, x, x, num_samples=5)
    out = parzen_evaluation(generator, x, x, num_samples=5, latent_dim=2)
    assert out["num_samples"] == 5


def test_docstring_examples_run():
    assert doctest.testmod(parzen, extraglobs={"np": np}).failed == 0
