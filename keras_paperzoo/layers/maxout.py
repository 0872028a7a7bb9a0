"""Maxout units (Goodfellow et al. 2013), the GAN paper's discriminator activation."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class Maxout(keras.layers.Layer):
    """Affine map to `units * pieces` features, then the max over each unit's pieces.

    h_i(x) = max_{j in 1..pieces} (x W_{:, i, j} + b_{i, j}). The GAN paper's MNIST
    discriminator uses two maxout layers of 240 units x 5 pieces (Goodfellow et
    al. 2014, Sec. 5; the authors' pylearn2 `Maxout(num_units=240, num_pieces=5)`).

    Args:
        units: int, number of output units.
        pieces: int, number of linear pieces each unit takes the max of.
        kernel_initializer, bias_initializer, kernel_regularizer: as for `Dense`.

    Example:

    ```python
    layer = Maxout(units=240, pieces=5)
    layer(keras.ops.ones((2, 784))).shape  # (2, 240)
    ```
    """

    def __init__(
        self,
        units,
        pieces,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        for name, value in (("units", units), ("pieces", pieces)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Maxout {name} must be a positive int; got {value!r}.")
        self.units = units
        self.pieces = pieces
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.kernel_regularizer = keras.regularizers.get(kernel_regularizer)

    def build(self, input_shape):
        input_dim = input_shape[-1]
        if input_dim is None:
            raise ValueError("Maxout needs a known last input dimension.")
        self.kernel = self.add_weight(
            shape=(input_dim, self.units * self.pieces),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            name="kernel",
        )
        self.bias = self.add_weight(
            shape=(self.units * self.pieces,), initializer=self.bias_initializer, name="bias"
        )

    def call(self, inputs):
        z = ops.matmul(inputs, self.kernel) + self.bias  # (..., units * pieces)
        leading = tuple(ops.shape(z)[:-1])
        if sum(d is None for d in leading) == 1:  # symbolic batch dimension
            leading = tuple(-1 if d is None else d for d in leading)
        z = ops.reshape(z, leading + (self.units, self.pieces))  # (..., units, pieces)
        return ops.max(z, axis=-1)  # (..., units)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "units": self.units,
                "pieces": self.pieces,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "bias_initializer": keras.initializers.serialize(self.bias_initializer),
                "kernel_regularizer": keras.regularizers.serialize(self.kernel_regularizer),
            }
        )
        return config
