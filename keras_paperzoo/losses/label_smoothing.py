"""Cross-entropy against label-smoothed targets over padded sequences (the Transformer, Sec. 5.4).

Example:

```python
labels = np.array([[5, 7, 0]])                     # (B, T), 0 = padding
logits = np.random.normal(size=(1, 3, 10))         # (B, T, V)
label_smoothed_cross_entropy(labels, logits, 0.1)  # scalar, padding not counted
```
"""

from keras import ops


def label_smoothed_cross_entropy(labels, logits, smoothing=0.1, padding_id=0):
    """Mean over non-padding positions of the cross-entropy against smoothed targets.

    The target distribution is (1 - eps) on the label plus eps / V on every token
    (Szegedy et al. 2016, the paper's "label smoothing of value eps_ls = 0.1", Sec. 5.4):
    loss = (1 - eps) * (-log p_label) + eps * mean_v(-log p_v). Positions whose label is
    `padding_id` do not count.

    Args:
        labels: (B, T) int token ids.
        logits: (B, T, V) float.
    """
    log_probs = ops.log_softmax(ops.cast(logits, "float32"), axis=-1)  # (B, T, V)
    labels = ops.cast(labels, "int32")
    nll = -ops.squeeze(ops.take_along_axis(log_probs, labels[..., None], axis=-1), -1)  # (B, T)
    uniform = -ops.mean(log_probs, axis=-1)  # (B, T)
    loss = (1.0 - smoothing) * nll + smoothing * uniform
    mask = ops.cast(ops.not_equal(labels, padding_id), "float32")
    return ops.sum(loss * mask) / ops.maximum(ops.sum(mask), 1.0)
