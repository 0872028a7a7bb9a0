"""`NCENormalizer`: InstDisc's constant Z, estimated once on the first batch and kept.

InstDisc (Wu et al. 2018, Sec. 3.2) treats the partition function of its
non-parametric softmax as a constant, "estimated from the first batch" by Monte
Carlo: Z ~ n E_j [exp(v_j . f / tau)] = n x the mean of the first batch's
exponentiated scores (the authors' code averages over the positive and the
noise columns of every image), then divides every later batch's scores by the
same Z. Z lives in a variable: 0 until the first call sets it, then fixed; saved
in `.keras` files and checkpoints, so a resumed run keeps the first run's Z. No
gradient flows through Z. CMC keeps one per direction.

Example:

```python
normalizer = NCENormalizer(num_data=50_000)
probabilities = normalizer(ops.exp(scores))   # scores (B, 1 + m); P(i | v) = exp(s) / Z
```
"""

import numbers

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class NCENormalizer(keras.layers.Layer):
    """Divides exponentiated scores by Z = n x mean(first batch's exp scores), fixed after one call.

    Args:
        num_data: n, the number of training images (an int >= 1).
    """

    def __init__(self, num_data, **kwargs):
        kwargs.setdefault("autocast", False)
        super().__init__(**kwargs)
        if isinstance(num_data, bool) or not isinstance(num_data, numbers.Integral) or num_data < 1:
            raise ValueError(f"NCENormalizer num_data (n) must be an int >= 1; got {num_data!r}.")
        self.num_data = int(num_data)
        self.z = self.add_weight(shape=(), initializer="zeros", dtype="float32", trainable=False, autocast=False,
                                 name="z")  # 0: not estimated yet
        self.built = True

    def call(self, exp_scores):
        exp_scores = ops.cast(exp_scores, "float32")
        estimate = ops.stop_gradient(ops.mean(exp_scores)) * self.num_data
        stored = ops.convert_to_tensor(self.z)
        z = ops.where(stored > 0, stored, estimate)  # the first batch's estimate, then the same Z
        self.z.assign(z)
        return exp_scores / z

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "num_data": self.num_data}
