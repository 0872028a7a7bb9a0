"""Noise-contrastive estimation (NCE) of InstDisc's non-parametric softmax, on `keras.ops`.

InstDisc (Wu et al. 2018, Sec. 3.2) classifies each image as its own class among n
with P(i | v) = exp(v_i . v / tau) / Z_i, too costly to normalise over n = 1.28M
images, and trains it by NCE (Gutmann & Hyvarinen 2010) instead: the data sample
(the positive) is told apart from m noise samples drawn from P_n = 1/n. The
probability that a sample i with feature v came from the data is

    h(i, v) = P(i | v) / (P(i | v) + m P_n(i))                          (eq. 5)

and the loss over a batch is

    J = -E_{P_d} [log h(i, v)] - m E_{P_n} [log(1 - h(i, v'))]          (eq. 6)

that is, per image: -log h(positive) - sum_{j=1..m} log(1 - h(noise_j)). Z is
approximated by a constant, Z ~ n E_j [exp(v_j . f / tau)], estimated once on the
first batch and kept (`NCENormalizer`, a layer holding Z in a variable: saved and
resumed with the model). CMC (Tian et al. 2019) uses the same loss in each
direction between its two views.

`nce_loss(probabilities, num_data)` takes P(i | v) for the positive (column 0) and
the m noise samples (columns 1..m); eps = 1e-7 in both ratios, as the authors' code.

Example:

```python
scores = contrastive_logits(f, bank.read(index), bank.read(noise_index), temperature=0.07)  # (B, 1 + m)
probabilities = normalizer(ops.exp(scores))    # P(i | v) = exp(s) / Z, Z fixed after the first batch
loss = nce_loss(probabilities, num_data=n)
```
"""

from keras import ops

EPS = 1e-7  # the authors' NCECriterion


def nce_loss(probabilities, num_data):
    """InstDisc's NCE loss (eq. 6), averaged over the batch.

    Args:
        probabilities: (B, 1 + m) P(i | v) = exp(s) / Z: the positive in column 0,
            then the m noise samples.
        num_data: n, the number of training images (P_n = 1 / n).

    Returns:
        A scalar: mean over the batch of -log h(pos) - sum_j log(1 - h(noise_j)).
    """
    if isinstance(num_data, bool) or not isinstance(num_data, int) or num_data < 1:
        raise ValueError(f"nce_loss needs num_data (n, the number of training images) as an int >= 1; "
                         f"got {num_data!r}.")
    probabilities = ops.cast(probabilities, "float32")
    if len(probabilities.shape) != 2 or (probabilities.shape[-1] or 2) < 2:
        raise ValueError(f"nce_loss needs (B, 1 + m) probabilities, positive first, m >= 1; got shape "
                         f"{tuple(probabilities.shape)}.")
    m = probabilities.shape[-1] - 1
    noise = m / num_data  # m P_n
    positive, negatives = probabilities[:, 0], probabilities[:, 1:]  # (B,), (B, m)
    log_h_positive = ops.log(positive / (positive + noise + EPS))  # log h(i, v)
    log_not_h_noise = ops.log(noise / (negatives + noise + EPS))  # log(1 - h(i, v'))
    return -ops.mean(log_h_positive + ops.sum(log_not_h_noise, axis=-1))
