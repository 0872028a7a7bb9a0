"""Sinkhorn-Knopp codes: SwAV's equipartitioned soft assignment of samples to prototypes.

SwAV (Caron et al. 2020, https://arxiv.org/abs/2006.09882, Sec. 3.1, eq. 3 and
Algorithm 1 of the appendix; the authors' `distributed_sinkhorn`) turns the scores
s = z . C of a batch of B features against K prototypes into codes Q that solve

    max_Q  Tr(Q^T C^T Z) + eps H(Q)   subject to  Q 1_B = 1_K / K,  Q^T 1_K = 1_B / B

(every prototype gets the same share of the batch: the equipartition that stops
all samples from collapsing onto one prototype), with a few Sinkhorn-Knopp
iterations:

    Q = exp(s / eps)^T                     (K, B)
    Q /= sum(Q)
    repeat `iterations` times:
        Q /= row sums;    Q /= K           rows (prototypes) sum to 1 / K
        Q /= column sums; Q /= B           columns (samples) sum to 1 / B
    Q *= B                                 each sample's code sums to 1

No gradient flows through the codes (they are targets). The exponent is taken in
float32 whatever the inputs' dtype, and shifted by the largest score first
(exp(1 / 0.05) = 4.9e8 overflows float16; the shift cancels in the first
normalisation, so the result is the authors').

Example:

```python
scores = keras.random.normal((256, 3000)) * 0.1          # z . C for B = 256, K = 3000
codes = sinkhorn(scores, epsilon=0.05, iterations=3)      # (256, 3000), rows sum to 1
```
"""

import numbers

from keras import ops

EPSILON = 0.05  # SwAV's --epsilon (0.03 is the authors' remedy for collapse)
ITERATIONS = 3  # --sinkhorn_iterations


def check_sinkhorn_arguments(epsilon, iterations, owner="sinkhorn"):
    """One message naming the value and the rule: eps > 0, iterations an int >= 1."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not epsilon > 0:
        raise ValueError(f"{owner}'s epsilon (the entropy weight eps) must be a number > 0; got epsilon={epsilon!r}.")
    if isinstance(iterations, bool) or not isinstance(iterations, numbers.Integral) or iterations < 1:
        raise ValueError(f"{owner}'s iterations must be an int >= 1; got iterations={iterations!r}.")


def sinkhorn(scores, epsilon=EPSILON, iterations=ITERATIONS):
    """SwAV's codes Q (B, K) for scores (B, K), by Sinkhorn-Knopp (SwAV eq. 3, Algorithm 1), no gradient.

    Args:
        scores: (B, K) scores z . c_k of B samples against K prototypes (any float dtype).
        epsilon: eps > 0, the entropy weight: smaller gives harder codes (0.05; the
            authors lower it to 0.03 when training collapses).
        iterations: Sinkhorn-Knopp iterations, an int >= 1 (3).

    Returns:
        Float32 (B, K) codes under stop-gradient: each row sums to 1 (a sample's soft
        assignment) and, as the iterations grow, each column to B / K (equipartition).
    """
    check_sinkhorn_arguments(epsilon, iterations)
    scores = ops.stop_gradient(ops.cast(scores, "float32"))
    if len(scores.shape) != 2:
        raise ValueError(f"sinkhorn takes scores of shape (B, K); got shape {tuple(scores.shape)}.")
    batch = ops.cast(ops.shape(scores)[0], "float32")
    prototypes = ops.cast(ops.shape(scores)[1], "float32")
    q = ops.exp((scores - ops.max(scores)) / epsilon)  # (B, K): Q^T, shifted by the largest score
    q = q / ops.sum(q)
    for _ in range(int(iterations)):
        q = q / ops.sum(q, axis=0, keepdims=True) / prototypes  # each prototype (column here) sums to 1 / K
        q = q / ops.sum(q, axis=1, keepdims=True) / batch  # each sample (row here) sums to 1 / B
    return ops.stop_gradient(q * batch)  # (B, K): each sample's code sums to 1
