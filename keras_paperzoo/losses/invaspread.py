"""InvaSpread's objective, the instance-wise softmax embedding loss, on `keras.ops`.

Ye et al. 2019, "Unsupervised Embedding Learning via Invariant and Spreading Instance
Feature" (CVPR 2019, https://arxiv.org/abs/1904.03436), Sec. 3.1. The features f of the
batch's instances act as the weights of a softmax classifier over instances:

    P(i | x^_i) = exp(f_i . f^_i / tau) / sum_k exp(f_k . f^_i / tau)    (x^_i recognised as instance i)
    P(i | x_j)  = exp(f_i . f_j  / tau) / sum_k exp(f_k . f_j  / tau)    (x_j, j != i, recognised as i)
    J = - sum_i log P(i | x^_i) - sum_i sum_{j != i} log(1 - P(i | x_j))

the negative log-likelihood of "x^_i is instance i and no other x_j is" (the paper's
joint probability P_i, its instances assumed independent). The first term pulls the
augmentation invariant, the second spreads the instances out.

What the authors ran (mangye16/Unsupervised_Embedding_Learning, `BatchCriterion` in
`BatchAverage.py`, called with negM = 1 by `demo_seen.py`), and what this function
computes, with the 2N features of the batch (N images, two views each; Sec. 3.2: one
positive and 2(N - 1) negatives per sample):

- every one of the 2N features is an input x_a in turn; its "instance classes" are
  the other 2N - 1 features, P(. | x_a) a softmax over them (the feature itself left
  out);
- the positive of x_a is the other view of its image, and the negatives are the 2N - 2
  features of the other images, both views;
- the class weights are constants: `x.mm(x.t().data)` and `x * reordered_x.data`, so
  the gradient reaches each feature only as an input (here `ops.stop_gradient` on the
  weight side);
- the sum over the 2N inputs is divided by 2N (the mean of the per-input losses).

The paper's printed sums run over the N original images only, with the feature
itself among the classes (for P(i | x_j) the term exp(f_j . f_j / tau) = exp(1 / tau),
which the paper notes dominates the denominator); the code's form treats both views
alike.

log(1 - P) is computed without cancellation: for each input's most probable class
from the log-sum-exp of the other classes, for the rest (P <= 1/2) with `log1p`.
The features are L2-normalised here (the model's are already); all arithmetic is in
float32.

- `invaspread_loss(f, f_hat, temperature)`: the loss (a float32 scalar).
- The training metric, how often an input's most probable class is its positive,
  is `nt_xent_accuracy(f, f_hat)` (`losses/nt_xent.py`): the same 2N x (2N - 1)
  similarities.

Example:

```python
f, f_hat = keras.random.normal((8, 4096)), keras.random.normal((8, 4096))   # two views
loss = invaspread_loss(f, f_hat, temperature=0.1)
# random views: about log(15) + 14 log(15 / 14) = 3.67 (all 2N - 1 classes equally likely)
```
"""

import numbers

from keras import ops

from keras_paperzoo.losses.nt_xent import check_two_views

# A masked logit: exp(-1e9) is 0 in float32, and unlike -inf it keeps logsumexp's gradient finite.
_MASKED_LOGIT = -1e9


def invaspread_loss(f, f_hat, temperature=0.1):
    """J of InvaSpread (Ye et al. 2019, Sec. 3.1) as the authors' code computes it, averaged over 2N inputs.

    Args:
        f: (N, D) features of the first view of each image (the paper's f_i; any
            float dtype). L2-normalised here.
        f_hat: (N, D) features of the second view (the paper's f^_i), row i the
            same image as f's row i.
        temperature: tau > 0 (0.1, the paper's and the authors' `--batch-t`).

    Returns:
        Float32 scalar: the mean over the 2N features x_a of
        -log P(a+ | x_a) - sum_{b not in {a, a+}} log(1 - P(b | x_a)), where a+ is the
        other view of a's image and P(. | x_a) the softmax of x_a . x_b / tau over the
        2N - 1 other features, whose side is a constant (stop-gradient).

    Raises:
        ValueError: temperature not a number > 0; f, f_hat not (N, D) of one shape;
            N < 2 where the batch size is known.
    """
    if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real) or not temperature > 0:
        raise ValueError(f"temperature must be a number > 0; got {temperature!r}.")
    f, f_hat = ops.cast(f, "float32"), ops.cast(f_hat, "float32")
    check_two_views(f, f_hat, "invaspread_loss", names=("f", "f_hat"))
    if f.shape[0] is not None and f.shape[0] < 2:
        raise ValueError(
            "invaspread_loss needs a batch of N >= 2 images (the other images are the negatives); "
            f"got N = {f.shape[0]}."
        )
    n = ops.shape(f)[0]
    x = ops.normalize(ops.concatenate([f, f_hat], axis=0), axis=-1)  # (2N, D): inputs x_a, unit rows
    weights = ops.stop_gradient(x)  # (2N, D): the instance classes' weights, constants as in the authors' code
    logits = ops.matmul(x, ops.transpose(weights)) / temperature  # (2N, 2N): x_a . x_b / tau
    index = ops.arange(2 * n, dtype="int32")  # (2N,)
    is_self = ops.equal(ops.expand_dims(index, 1), ops.expand_dims(index, 0))  # (2N, 2N): b = a
    logits = ops.where(is_self, _MASKED_LOGIT, logits)  # a feature is not one of its own classes
    positive_index = ops.mod(index + n, 2 * n)  # (2N,): the other view of a's image
    is_positive = ops.equal(ops.expand_dims(positive_index, 1), ops.expand_dims(index, 0))  # (2N, 2N)

    log_normaliser = ops.logsumexp(logits, axis=1, keepdims=True)  # (2N, 1): log sum_{b != a} exp(logit)
    log_p = logits - log_normaliser  # (2N, 2N): log P(b | x_a)
    # Invariance: -log P(a+ | x_a).
    invariance = -ops.take_along_axis(log_p, ops.expand_dims(positive_index, 1), axis=1)[:, 0]  # (2N,)
    # Spreading: -sum over the 2N - 2 negatives of log(1 - P(b | x_a)). At most one class per row has
    # P > 1/2 (the row's largest logit): its log(1 - P) is the log-sum-exp of the row's other classes
    # minus the normaliser; every other class takes log1p(-P), accurate for P <= 1/2.
    top = ops.argmax(logits, axis=1)  # (2N,)
    is_top = ops.equal(ops.expand_dims(ops.cast(top, "int32"), 1), ops.expand_dims(index, 0))  # (2N, 2N)
    log_rest = ops.logsumexp(ops.where(is_top, _MASKED_LOGIT, logits), axis=1, keepdims=True) - log_normaliser
    p = ops.exp(log_p)  # (2N, 2N)
    log_not = ops.where(is_top, log_rest, ops.log1p(-ops.where(is_top, 0.0, p)))  # (2N, 2N): log(1 - P(b | x_a))
    is_negative = ops.logical_not(ops.logical_or(is_self, is_positive))  # (2N, 2N)
    spreading = -ops.sum(ops.where(is_negative, log_not, 0.0), axis=1)  # (2N,)
    return ops.mean(invariance + spreading)
