"""Sinkhorn-Knopp codes (SwAV Algorithm 1) and the swapped prediction loss, against NumPy."""

import math

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.losses import sinkhorn, swav_loss


def _numpy_sinkhorn(scores, epsilon=0.05, iterations=3):
    """The authors' `distributed_sinkhorn` on one worker, in float64."""
    q = np.exp(np.asarray(scores, "float64") / epsilon).T  # (K, B)
    k, b = q.shape
    q /= q.sum()
    for _ in range(iterations):
        q /= q.sum(axis=1, keepdims=True)
        q /= k
        q /= q.sum(axis=0, keepdims=True)
        q /= b
    return (q * b).T


def _scores(b=12, k=7, seed=0, scale=0.5):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((b, k)) * scale).astype("float32")


def test_sinkhorn_matches_the_authors_algorithm():
    scores = _scores()
    got = ops.convert_to_numpy(sinkhorn(scores, epsilon=0.05, iterations=3))
    np.testing.assert_allclose(got, _numpy_sinkhorn(scores), rtol=2e-4, atol=1e-6)
    assert not np.allclose(got, 1 / 7)  # the scores matter


def test_marginals_before_the_final_scaling():
    b, k = 12, 6
    scores = _scores(b, k, seed=1, scale=0.1)  # cosines of random 128-d unit vectors are about this size
    q = ops.convert_to_numpy(sinkhorn(scores, iterations=3)) / b  # undo the final x B: (B, K)
    np.testing.assert_allclose(q.sum(axis=1), np.full(b, 1 / b), rtol=1e-5)  # each sample: 1 / B (exact)
    # each prototype: 1 / K, approximate after 3 iterations and exact in the limit
    assert np.abs(q.sum(axis=0) - 1 / k).max() < 0.2 / k
    q = ops.convert_to_numpy(sinkhorn(scores, iterations=200)) / b
    np.testing.assert_allclose(q.sum(axis=0), np.full(k, 1 / k), rtol=1e-4)


def test_invariant_to_a_constant_shift_and_large_scores_do_not_overflow():
    scores = _scores(seed=2)
    base = ops.convert_to_numpy(sinkhorn(scores))
    np.testing.assert_allclose(ops.convert_to_numpy(sinkhorn(scores + 30.0)), base, rtol=1e-4, atol=1e-6)
    near_one = 0.95 + 0.05 * np.abs(np.tanh(scores))  # cosines in [0.95, 1]: exp(1 / 0.01) = inf in float32
    got = ops.convert_to_numpy(sinkhorn(near_one, epsilon=0.01))
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_float32_inside_under_half_precision_inputs(dtype):
    scores = _scores(seed=3, scale=1.0)
    half = ops.cast(scores, dtype)
    got = sinkhorn(half)
    assert keras.backend.standardize_dtype(got.dtype) == "float32"
    same_values = np.asarray(ops.convert_to_numpy(ops.cast(half, "float32")))
    np.testing.assert_allclose(ops.convert_to_numpy(got), _numpy_sinkhorn(same_values), rtol=2e-4, atol=1e-6)
    assert np.isfinite(ops.convert_to_numpy(got)).all()  # exp(1 / 0.05) = 4.9e8 overflows float16


def test_sinkhorn_under_a_mixed_float16_policy():
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_float16")
    try:
        scores = ops.convert_to_tensor(_scores(seed=4, scale=1.0), dtype="float16")
        got = sinkhorn(scores)
    finally:
        keras.config.set_dtype_policy(previous)
    assert keras.backend.standardize_dtype(got.dtype) == "float32"
    assert np.isfinite(ops.convert_to_numpy(got)).all()


@pytest.mark.parametrize("epsilon", [0.0, -0.05, "0.05", True])
def test_bad_epsilon_is_one_clear_error(epsilon):
    with pytest.raises(ValueError, match=r"epsilon .*must be a number > 0; got epsilon="):
        sinkhorn(_scores(), epsilon=epsilon)


def test_bad_iterations_and_shape():
    with pytest.raises(ValueError, match="iterations must be an int >= 1; got iterations=0"):
        sinkhorn(_scores(), iterations=0)
    with pytest.raises(ValueError, match=r"shape \(B, K\)"):
        sinkhorn(np.zeros((2, 3, 4), "float32"))


def _numpy_swav_loss(scores, codes, crops_for_assign, temperature):
    total = 0.0
    for q, s in zip(codes, crops_for_assign):
        others = [t for t in range(len(scores)) if t != s]
        sub = 0.0
        for t in others:
            x = scores[t] / temperature
            log_p = x - np.log(np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True)) - x.max(1, keepdims=True)
            sub -= np.mean(np.sum(q * log_p, axis=1))
        total += sub / len(others)
    return total / len(crops_for_assign)


def test_swav_loss_matches_numpy_over_every_pair():
    scores = [_scores(8, 5, seed=s) for s in range(4)]
    codes = [_numpy_sinkhorn(scores[0]), _numpy_sinkhorn(scores[1])]
    got = float(swav_loss(scores, [c.astype("float32") for c in codes], crops_for_assign=(0, 1), temperature=0.1))
    np.testing.assert_allclose(got, _numpy_swav_loss(scores, codes, (0, 1), 0.1), rtol=1e-5)
    # the pair (0, 0) is not in the sum: making crop 0's own prediction perfect changes nothing
    sharp = list(scores)
    sharp_codes = [np.eye(5)[np.argmax(scores[0], 1)].astype("float32"), codes[1].astype("float32")]
    a = float(swav_loss(sharp, sharp_codes, (0, 1)))
    sharp[0] = sharp_codes[0] * 100.0
    sharp_codes_b = [sharp_codes[0], codes[1].astype("float32")]
    b = float(swav_loss(sharp, sharp_codes_b, (0, 1)))
    assert a != b  # crop 0 still predicts crop 1's code


def test_swav_loss_is_ln_k_for_uniform_predictions():
    k = 30
    scores = [np.zeros((4, k), "float32") for _ in range(3)]  # collapsed: every prototype scores alike
    codes = [ops.convert_to_numpy(sinkhorn(scores[0])), ops.convert_to_numpy(sinkhorn(scores[1]))]
    assert float(swav_loss(scores, codes)) == pytest.approx(math.log(k), rel=1e-6)
