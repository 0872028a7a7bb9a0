"""InfoNCE, the contrastive objective of MoCo and its family, on `keras.ops`.

MoCo (He et al. 2020, eq. 1) writes it for one query q, its positive key k+ and
K negative keys k_i:

    L_q = -log [ exp(q . k+ / tau) / sum_{i=0..K} exp(q . k_i / tau) ]

that is, softmax cross-entropy of a (K+1)-way classification whose correct class
is the positive, placed at logit index 0. CPC (van den Oord et al. 2018) named it
InfoNCE; InstDisc, CMC, SimCLR and DenseCL use variants of the same logits.

- `contrastive_logits(query, positive_keys, negative_keys, temperature)`:
  (B, 1 + K) logits with the positive in column 0. `negative_keys` is one
  shared (K, C) dictionary (MoCo's queue) or per-query negatives (B, K, C)
  (InstDisc's samples from its memory bank).
- `info_nce_from_logits(logits, labels=None)`: the mean cross-entropy against
  index 0, or against each row's own positive column `labels` (CPC, whose
  candidates are every position of the batch, its positive among them).
- `info_nce(...)`: both in one call.
- `contrastive_accuracy(logits, labels=None)`: how often the positive has the
  top logit (MoCo's and CPC's training metric).

Example:

```python
q = keras.ops.normalize(query_features)          # (B, C)
k = keras.ops.normalize(key_features)            # (B, C)
loss = info_nce(q, k, queue, temperature=0.07)   # queue: (K, C)
```
"""

from keras import ops


def contrastive_logits(query, positive_keys, negative_keys, temperature):
    """[q . k+ | q . k_i] / tau: (B, 1 + K) logits with the positive at index 0.

    Args:
        query: (B, C) query features (L2-normalised for cosine similarity).
        positive_keys: (B, C) the positive key of each query.
        negative_keys: (K, C) negatives shared by every query, or (B, K, C)
            negatives per query.
        temperature: float tau > 0.

    Returns:
        (B, 1 + K) float32 logits.
    """
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0; got {temperature}.")
    query = ops.cast(query, "float32")
    positive_keys = ops.cast(positive_keys, "float32")
    negative_keys = ops.cast(negative_keys, "float32")
    if len(query.shape) != 2 or len(positive_keys.shape) != 2:
        raise ValueError(
            "contrastive_logits needs (B, C) queries and positive keys; got shapes "
            f"{tuple(query.shape)} and {tuple(positive_keys.shape)}."
        )
    positive = ops.sum(query * positive_keys, axis=-1, keepdims=True)  # (B, 1)
    if len(negative_keys.shape) == 2:
        negative = ops.matmul(query, ops.transpose(negative_keys))  # (B, K)
    elif len(negative_keys.shape) == 3:
        negative = ops.einsum("bc,bkc->bk", query, negative_keys)  # (B, K)
    else:
        raise ValueError(
            "negative_keys should be (K, C) shared or (B, K, C) per query; got shape "
            f"{tuple(negative_keys.shape)}."
        )
    return ops.concatenate([positive, negative], axis=-1) / temperature  # (B, 1 + K)


def _positive_logits(logits, labels):
    """(B,) the positive's logit: column 0, or column `labels[i]` of row i."""
    if labels is None:
        return logits[:, 0]
    labels = ops.reshape(ops.cast(labels, "int32"), (-1, 1))  # (B, 1)
    return ops.take_along_axis(logits, labels, axis=1)[:, 0]


def info_nce_from_logits(logits, labels=None):
    """Mean over the batch of -log softmax(logits)[i, positive_i] (MoCo eq. 1, CPC eq. 4).

    Args:
        logits: (B, N) scores of each query against N candidates.
        labels: None (the positive is column 0, as `contrastive_logits` places
            it) or (B,) ints, the positive's column in each row.
    """
    logits = ops.cast(logits, "float32")
    per_query = ops.logsumexp(logits, axis=-1) - _positive_logits(logits, labels)  # (B,)
    return ops.mean(per_query)


def info_nce(query, positive_keys, negative_keys, temperature=0.07):
    """InfoNCE (MoCo eq. 1): `info_nce_from_logits(contrastive_logits(...))`."""
    return info_nce_from_logits(contrastive_logits(query, positive_keys, negative_keys, temperature))


def contrastive_accuracy(logits, labels=None):
    """(B,) float: 1 where the positive (index 0, or `labels`) has the largest logit, else 0."""
    positive = 0 if labels is None else ops.cast(labels, "int32")
    return ops.cast(ops.equal(ops.cast(ops.argmax(logits, axis=-1), "int32"), positive), "float32")
