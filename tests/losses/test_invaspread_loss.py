"""InvaSpread's loss (Ye et al. 2019, Sec. 3.1; the authors' BatchCriterion) against NumPy, analytic values, gradients."""

import math

import numpy as np
import pytest

from keras import ops

from keras_paperzoo.losses import invaspread_loss
from tests.losses.loss_checks import (BAD_TEMPERATURES, check_bad_shapes_refused, check_bad_temperature_refused,
                                      finite_difference_gradient)
from tests.losses.loss_checks import gradient as _gradient
from tests.losses.loss_checks import views as _views


def _reference(inputs_a, inputs_b, tau, weights_a=None, weights_b=None):
    """The authors' BatchCriterion (negM = 1) in float64, one input at a time.

    `inputs` are the features x_a scored, `weights` the instance classes' weights (the
    same features, detached in the authors' code; separate here so that a test can hold
    them fixed while moving the inputs).
    """
    x = np.concatenate([inputs_a, inputs_b]).astype("float64")
    w = np.concatenate([inputs_a if weights_a is None else weights_a,
                        inputs_b if weights_b is None else weights_b]).astype("float64")
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    two_n = len(x)
    total = 0.0
    for a in range(two_n):
        positive = (a + two_n // 2) % two_n
        scores = {b: math.exp(x[a] @ w[b] / tau) for b in range(two_n) if b != a}  # the 2N - 1 classes
        normaliser = sum(scores.values())
        total -= math.log(scores[positive] / normaliser)  # -log P(a+ | x_a)
        for b in scores:
            if b != positive:  # -log(1 - P(b | x_a)) over the 2N - 2 negatives, 1 - P as the other classes' share
                total -= math.log(sum(s for c, s in scores.items() if c != b) / normaliser)
    return total / two_n


def _loss(f, f_hat, tau=0.1):
    return float(ops.convert_to_numpy(invaspread_loss(f, f_hat, temperature=tau)))


def _uniform(n):
    """The loss when all 2N - 1 classes are equally likely: log(2N - 1) - (2N - 2) log(1 - 1 / (2N - 1))."""
    return math.log(2 * n - 1) + (2 * n - 2) * math.log((2 * n - 1) / (2 * n - 2))


@pytest.mark.parametrize("kind", ["random", "similar", "nearly_identical"])
@pytest.mark.parametrize("tau", [0.05, 0.1, 0.5])
@pytest.mark.parametrize("n", [2, 7])
def test_matches_the_authors_criterion_in_numpy(n, tau, kind):
    f, f_hat = _views(n, kind=kind, seed=n)
    assert _loss(f, f_hat, tau) == pytest.approx(_reference(f, f_hat, tau), rel=1e-5, abs=1e-6)


def test_orthogonal_features_give_the_uniform_value_and_identical_views_the_analytic_one():
    # 2N mutually orthogonal unit features: every logit 0, P = 1 / (2N - 1) for each class.
    n = 6
    q = np.linalg.qr(np.random.default_rng(1).normal(size=(16, 16)))[0].astype("float32")  # orthonormal rows
    assert _loss(q[:n], q[n:2 * n]) == pytest.approx(_uniform(n), rel=1e-6)  # 3.314 at N = 6
    # Identical views of N orthogonal images: positive logit 1 / tau = 10, the 2N - 2 negatives 0.
    positive = math.exp(10.0) / (math.exp(10.0) + 2 * n - 2)
    expected = -math.log(positive) - (2 * n - 2) * math.log(1.0 - 1.0 / (math.exp(10.0) + 2 * n - 2))
    assert _loss(q[:n], q[:n]) == pytest.approx(expected, rel=1e-4)  # 4.5e-4 + 4.5e-4
    # The masked self-similarity is not a class: counting it (logit 10) would give about 10.
    assert expected < 0.01


def test_random_features_in_high_dimension_give_about_the_uniform_value():
    # Random unit vectors in 8192 dimensions have cosines ~ 0 +- 0.011 (logits +- 0.11 at tau 0.1).
    n = 16
    f, f_hat = _views(n, d=8192, seed=2)
    assert _loss(f, f_hat) == pytest.approx(_uniform(n), abs=0.03)  # log(31) + 30 log(31 / 30) = 4.42


def _duplicate_negative(n=4):
    """2N orthogonal features but image 1's second view equal to image 0's first.

    At tau 0.01, for x_0 the negative x_{N+1} has logit 100 and every other class 0: P = 1 - 6e-44, so
    1 - P in float32 (and float64) is 0 and log(1 - P) from it is -inf.
    """
    q = np.linalg.qr(np.random.default_rng(3).normal(size=(2 * n, 2 * n)))[0].astype("float32")
    f, f_hat = q[:n].copy(), q[n:].copy()
    f_hat[1] = f[0]
    return f, f_hat


def test_a_confident_wrong_class_stays_finite_where_the_direct_formula_overflows():
    f, f_hat = _duplicate_negative()
    got = _loss(f, f_hat, tau=0.01)
    # x_0 and x_{N+1} each: -log P(positive) = 100 and -log(1 - P) = 100 - log 6; the 6 other inputs see
    # all-zero logits (the uniform value); the mean over 2N = 8 inputs.
    assert math.isfinite(got) and got == pytest.approx((2 * (200 - math.log(6)) + 6 * _uniform(4)) / 8, rel=1e-5)
    assert got == pytest.approx(_reference(f, f_hat, 0.01), rel=1e-5)


def test_swapping_views_and_shuffling_images_together_leave_the_loss_unchanged():
    f, f_hat = _views(9, seed=4)
    assert _loss(f_hat, f) == pytest.approx(_loss(f, f_hat), rel=1e-5)  # both views are inputs alike
    permutation = np.random.default_rng(5).permutation(9)
    assert _loss(f[permutation], f_hat[permutation]) == pytest.approx(_loss(f, f_hat), rel=1e-5)
    assert abs(_loss(f, f_hat[permutation]) - _loss(f, f_hat)) > 1e-2  # broken pairs: another loss
    scales = np.arange(1, 10, dtype="float32")[:, None]
    assert _loss(f * scales, f_hat * 3.0) == pytest.approx(_loss(f, f_hat), rel=1e-5)  # normalised inside


def test_float16_inputs_stay_finite_and_match_float32():
    f, f_hat = _views(8, kind="similar", seed=6)
    got = invaspread_loss(f.astype("float16"), f_hat.astype("float16"), temperature=0.05)
    assert ops.convert_to_numpy(got).dtype == np.float32
    got = float(ops.convert_to_numpy(got))
    assert got == pytest.approx(_reference(f.astype("float16"), f_hat.astype("float16"), 0.05), rel=1e-4)
    assert got == pytest.approx(_loss(f, f_hat, 0.05), rel=2e-2)


def test_gradient_reaches_the_features_as_inputs_only():
    # The authors detach the class weights (x.t().data, reordered_x.data): d loss / d f is the derivative
    # of the reference with the weights held at their values. Differentiating through both sides differs.
    f, f_hat = _views(3, d=4, kind="similar", seed=7)
    got = _gradient(lambda a: invaspread_loss(a, f_hat, temperature=0.5), f)
    inputs_only = finite_difference_gradient(lambda a: _reference(a, f_hat, 0.5, weights_a=f), f)
    both_sides = finite_difference_gradient(lambda a: _reference(a, f_hat, 0.5), f)
    np.testing.assert_allclose(got, inputs_only, rtol=1e-3, atol=1e-4)
    assert np.abs(both_sides - inputs_only).max() > 1e-2  # the test tells the two apart
    # A confident wrong class at tau 0.01: still a finite gradient.
    f, f_hat = _duplicate_negative()
    assert np.all(np.isfinite(_gradient(lambda a: invaspread_loss(a, f_hat, temperature=0.01), f)))


@pytest.mark.parametrize("temperature", BAD_TEMPERATURES)
def test_a_temperature_that_is_not_a_positive_number_is_refused(temperature):
    check_bad_temperature_refused(invaspread_loss, temperature)


def test_bad_shapes_are_refused_by_value():
    check_bad_shapes_refused(invaspread_loss, "invaspread_loss", ("f", "f_hat"))  # a batch of one, two shapes, rank 3


def test_the_benchmarks_pytorch_reference_computes_the_same_loss_and_gradient():
    # benchmarks/torch_reference/invaspread_cifar.py, written separately from the paper (log_softmax, -inf mask,
    # x.detach() as the weights): `python -m benchmarks ssl` compares our step with it, so it must be the same
    # objective.
    torch = pytest.importorskip("torch")
    from benchmarks.torch_reference import invaspread_cifar
    f, f_hat = _views(5, d=6, kind="similar", seed=9)
    inputs = torch.tensor(f, requires_grad=True)
    expected = invaspread_cifar.invaspread_loss(inputs, torch.tensor(f_hat), temperature=0.1)
    expected.backward()
    assert _loss(f, f_hat) == pytest.approx(float(expected.detach()), rel=1e-5)
    got = _gradient(lambda a: invaspread_loss(a, f_hat, temperature=0.1), f)
    np.testing.assert_allclose(got, inputs.grad.numpy(), rtol=1e-4, atol=1e-6)
