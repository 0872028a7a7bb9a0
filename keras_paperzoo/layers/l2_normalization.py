"""L2 normalisation with a finite gradient at the zero vector (MoCo's normalize(f(x)))."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class L2Normalization(keras.layers.Layer):
    """x / max(||x||_2, epsilon) along `axis`: the `normalize` of MoCo's Algorithm 1.

    The same function as PyTorch's `F.normalize`, used by the contrastive papers' code.
    Why not `keras.layers.UnitNormalization`: it computes `min(rsqrt(sum x^2), 1 / eps)`,
    whose gradient at x = 0 is 0 * inf = NaN on JAX and PyTorch. A feature vector that is exactly
    zero (every ReLU unit before a zero-bias projection off, as happens at
    initialisation) then turns the projection weights into NaN in one step. Here the
    clamp sits under the square root, so that gradient is finite (x / epsilon, as in
    PyTorch).

    Args:
        axis: the axis to normalise (-1).
        epsilon: the smallest norm divided by (1e-12, PyTorch's default), in [1e-18, 1)
            (its square must stay a normal float32). The norm is computed in float32.

    Example:

    ```python
    L2Normalization()(keras.ops.convert_to_tensor([[3.0, 4.0], [0.0, 0.0]]))
    # [[0.6, 0.8], [0.0, 0.0]]
    ```
    """

    def __init__(self, axis=-1, epsilon=1e-12, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axis, int) or isinstance(axis, bool):
            raise ValueError(f"L2Normalization axis must be an int; got {axis!r}.")
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 1e-18 <= epsilon < 1:
            raise ValueError(f"L2Normalization epsilon must be a number in [1e-18, 1); got {epsilon!r}.")
        self.axis = axis
        self.epsilon = float(epsilon)
        self.supports_masking = True

    def call(self, inputs):
        x = ops.cast(inputs, "float32")  # epsilon^2 (1e-24) would underflow to 0 in float16
        square_sum = ops.sum(ops.square(x), axis=self.axis, keepdims=True)  # (..., 1, ...)
        return ops.cast(x * ops.rsqrt(ops.maximum(square_sum, self.epsilon**2)), inputs.dtype)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon}
