"""NT-Xent, SimCLR's contrastive objective over the 2N views of a batch, on `keras.ops`.

SimCLR (Chen et al. 2020, https://arxiv.org/abs/2002.05709, eq. 1 and Algorithm 1)
augments each of N images twice and asks every one of the 2N views to pick out the
other view of its image among the 2N - 1 others:

    l(i, j) = -log [ exp(sim(z_i, z_j) / tau) / sum_{k=1..2N} 1[k != i] exp(sim(z_i, z_k) / tau) ]
    L = 1/(2N) sum_{k=1..N} [ l(2k-1, 2k) + l(2k, 2k-1) ]

with sim the cosine similarity. Each anchor has one positive and 2N - 2 negatives; the
loss is averaged over all 2N anchors (both orders of each pair). SimCLR v2 (Chen et al.
2020b, Sec. 2) keeps this loss; SimCLR's default temperature is 0.1.

- `nt_xent(z_a, z_b, temperature)`: the loss (a float32 scalar).
- `nt_xent_logits(z_a, z_b, temperature)`: the (2N, 2N) similarity logits with the
  self-similarity masked out, and the index of each anchor's positive.
- `nt_xent_accuracy(z_a, z_b)`: the fraction of the 2N anchors whose positive has the
  top similarity (SimCLR's `contrast_acc`).

Example:

```python
z_a, z_b = keras.random.normal((8, 4096)), keras.random.normal((8, 4096))  # two views
loss = nt_xent(z_a, z_b, temperature=0.1)     # scalar, about log(2 * 8 - 1) = 2.7 for random views
accuracy = nt_xent_accuracy(z_a, z_b)         # scalar in [0, 1]
```
"""

import numbers

from keras import ops

# Added to the masked self-similarity logits: exp(-1e9) is 0 in float32, and unlike -inf it
# keeps logsumexp's gradient free of inf - inf.
_MASKED_LOGIT = -1e9


def _check_temperature(temperature):
    if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real) or not temperature > 0:
        raise ValueError(f"temperature must be a number > 0; got {temperature!r}.")


def check_two_views(a, b, what, names=("z_a", "z_b")):
    """Raises ValueError unless `a` and `b` are (N, D) tensors of one shape (unknown dims are not compared)."""
    shape_a, shape_b = tuple(a.shape), tuple(b.shape)
    for name, shape in zip(names, (shape_a, shape_b)):
        if len(shape) != 2:
            raise ValueError(f"{what} needs (N, D) inputs; got {name} of rank {len(shape)}, shape {shape}.")
    if any(x is not None and y is not None and x != y for x, y in zip(shape_a, shape_b)):
        raise ValueError(
            f"{what} needs {names[0]} and {names[1]} of one shape; got {shape_a} and {shape_b}."
        )


def nt_xent_logits(z_a, z_b, temperature=0.1):
    """Cosine-similarity logits of the 2N views, self-similarity masked (SimCLR eq. 1).

    Args:
        z_a: (N, D) projections of the first view of each image (any float dtype).
        z_b: (N, D) projections of the second view, row i the same image as z_a's row i.
        temperature: float tau > 0.

    Returns:
        `(logits, positive_index)`: (2N, 2N) float32 logits sim(z_i, z_k) / tau, with the
        diagonal (k = i) set to -1e9, rows 0..N-1 for z_a's views and N..2N-1 for z_b's;
        and the (2N,) int32 column of each row's positive, (i + N) mod 2N.
    """
    _check_temperature(temperature)
    z_a, z_b = ops.cast(z_a, "float32"), ops.cast(z_b, "float32")  # float32 before any arithmetic
    check_two_views(z_a, z_b, "nt_xent")
    if z_a.shape[0] is not None and z_a.shape[0] < 2:
        raise ValueError(
            f"nt_xent needs a batch of N >= 2 images (the other images are the negatives); got N = {z_a.shape[0]}."
        )
    n = ops.shape(z_a)[0]
    z_a = ops.normalize(z_a, axis=-1)  # (N, D), unit rows
    z_b = ops.normalize(z_b, axis=-1)  # (N, D)
    z = ops.concatenate([z_a, z_b], axis=0)  # (2N, D)
    logits = ops.matmul(z, ops.transpose(z)) / temperature  # (2N, 2N)
    index = ops.arange(2 * n, dtype="int32")  # (2N,)
    is_self = ops.equal(ops.expand_dims(index, 1), ops.expand_dims(index, 0))  # (2N, 2N), the diagonal
    logits = ops.where(is_self, _MASKED_LOGIT, logits)  # (2N, 2N)
    positive_index = ops.mod(index + n, 2 * n)  # (2N,): the other view of the same image
    return logits, positive_index


def nt_xent(z_a, z_b, temperature=0.1):
    """NT-Xent (SimCLR eq. 1), averaged over all 2N anchors, in float32.

    Computed as logsumexp over each row of `nt_xent_logits` minus the positive's logit, so
    float16 inputs and low temperatures (logits up to 1/tau) cannot overflow. Uses only
    `keras.ops` and no branch on tensor values: it runs inside a traced `fit` step and
    under `keras.distribution` (the 2N x 2N similarities span the global batch).

    Args:
        z_a: (N, D) projections of the first views; L2-normalised here (cosine similarity).
        z_b: (N, D) projections of the second views of the same N images.
        temperature: float tau > 0 (SimCLR: 0.1; 0.5 in its CIFAR-10 runs).

    Returns:
        Float32 scalar.

    Raises:
        ValueError: temperature not a number > 0; z_a, z_b not of rank 2 or of different
            shapes; N < 2 where the batch size is known.
    """
    logits, positive_index = nt_xent_logits(z_a, z_b, temperature)  # (2N, 2N), (2N,)
    positive = ops.take_along_axis(logits, ops.expand_dims(positive_index, 1), axis=1)[:, 0]  # (2N,)
    per_anchor = ops.logsumexp(logits, axis=1) - positive  # (2N,) = l(i, j) for each anchor i
    return ops.mean(per_anchor)


def nt_xent_accuracy(z_a, z_b):
    """Fraction of the 2N anchors whose positive is their most similar other view (float32 scalar)."""
    logits, positive_index = nt_xent_logits(z_a, z_b, temperature=1.0)  # (2N, 2N), (2N,)
    hits = ops.equal(ops.cast(ops.argmax(logits, axis=1), "int32"), positive_index)  # (2N,)
    return ops.mean(ops.cast(hits, "float32"))
