"""Several sequences per example through one network: (B, S, T) -> (B * S, T) and back.

GPT-1 Sec. 3.3 processes the two orderings of a similarity pair and each answer of a
multiple-choice question "independently" (S = 2, S = N); BERT Sec. 4.4 scores each
(context, ending) pair of SWAG the same way. `FoldSequences` makes the S sequences rows
of one batch for the backbone; `UnfoldSequences` puts its outputs back per example.

Example:

```python
ids = np.zeros((4, 3, 10), "int32")                        # 4 questions, 3 answers each
folded = FoldSequences()(ids)                              # (12, 10)
hidden = backbone(folded)                                  # (12, 10, D)
UnfoldSequences()(hidden, ids).shape                       # (4, 3, 10, D)
```
"""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class FoldSequences(keras.layers.Layer):
    """(B, S, T) -> (B * S, T): the S sequences of each example as rows of one batch."""

    def call(self, x):
        return ops.reshape(x, (-1, ops.shape(x)[-1]))  # (B*S, T)

    def compute_output_shape(self, shape):
        rows = None if shape[0] is None or shape[1] is None else shape[0] * shape[1]
        return (rows, shape[-1])


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class UnfoldSequences(keras.layers.Layer):
    """(B * S, ...) and the (B, S, T) input it came from -> (B, S, ...): `FoldSequences` undone."""

    def call(self, x, folded_from):
        sequences = ops.shape(folded_from)[1]
        return ops.reshape(x, (-1, sequences, *ops.shape(x)[1:]))  # (B, S, ...)

    def compute_output_shape(self, x_shape, folded_from_shape):
        return (*folded_from_shape[:2], *x_shape[1:])
