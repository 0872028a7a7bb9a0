"""InfoNCE (MoCo eq. 1) against a NumPy reference."""

import math

import numpy as np
import pytest

from keras import ops

from keras_paperzoo.losses.contrastive import (
    contrastive_accuracy,
    contrastive_logits,
    info_nce,
    info_nce_from_logits,
)


def _unit(x):
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype("float32")


def _reference(q, k, negatives, tau):
    if negatives.ndim == 2:
        negative = q @ negatives.T
    else:
        negative = np.einsum("bc,bkc->bk", q, negatives)
    logits = np.concatenate([np.sum(q * k, -1, keepdims=True), negative], -1) / tau
    shifted = logits - logits.max(-1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return logits, -log_softmax[:, 0].mean()


@pytest.mark.parametrize("per_query", [False, True])
def test_info_nce_matches_numpy_with_positive_at_index_0(per_query):
    rng = np.random.default_rng(0)
    q, k = _unit(rng.normal(size=(6, 5))), _unit(rng.normal(size=(6, 5)))
    negatives = _unit(rng.normal(size=(6, 7, 5) if per_query else (7, 5)))
    logits = ops.convert_to_numpy(contrastive_logits(q, k, negatives, 0.2))
    expected_logits, expected_loss = _reference(q, k, negatives, 0.2)
    assert logits.shape == (6, 8)
    np.testing.assert_allclose(logits, expected_logits, rtol=1e-5, atol=1e-5)
    loss = float(ops.convert_to_numpy(info_nce(q, k, negatives, temperature=0.2)))
    assert loss == pytest.approx(expected_loss, rel=1e-5)
    # Swapping the roles of the positive and a negative changes the loss: index 0 is the target.
    swapped = float(ops.convert_to_numpy(info_nce_from_logits(expected_logits[:, ::-1].copy())))
    assert abs(swapped - expected_loss) > 1e-2


def test_uniform_logits_give_log_k_plus_1_and_matching_keys_give_a_small_loss():
    logits = np.zeros((4, 101), "float32")
    assert float(ops.convert_to_numpy(info_nce_from_logits(logits))) == pytest.approx(math.log(101), rel=1e-6)
    # q = k and a queue orthogonal to q: logits 1/tau and K zeros, loss log(1 + K exp(-1/tau)).
    q = np.eye(8, dtype="float32")[:4]
    queue = np.eye(8, dtype="float32")[4:]
    best = float(ops.convert_to_numpy(info_nce(q, q, queue, temperature=0.1)))
    assert best == pytest.approx(math.log(1 + 4 * math.exp(-10.0)), abs=2e-6)
    worse = float(ops.convert_to_numpy(info_nce(q, q, np.eye(8, dtype="float32")[:4], temperature=0.1)))
    assert worse > best + 0.5


def test_contrastive_accuracy_counts_top_logit_at_index_0():
    logits = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 1.0], [2.0, 2.5, -1.0], [9.0, 0.0, 0.0]], "float32")
    np.testing.assert_array_equal(ops.convert_to_numpy(contrastive_accuracy(logits)), [1, 0, 0, 1])


def test_bad_shapes_and_temperature_name_the_value():
    q = np.ones((2, 3), "float32")
    with pytest.raises(ValueError, match="temperature must be > 0; got 0"):
        contrastive_logits(q, q, q, 0)
    with pytest.raises(ValueError, match=r"\(K, C\) shared or \(B, K, C\)"):
        contrastive_logits(q, q, np.ones((3,), "float32"), 0.1)
