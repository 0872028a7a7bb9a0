"""`ProjectionHead`: the MLP between an encoder's representation h and the contrastive space z.

One configurable layer builds the heads of the contrastive family:

| paper | `widths` | `batch_norm` | `output_batch_norm` |
|---|---|---|---|
| InstDisc, MoCo v1 (linear) | (128,) | - | False |
| MoCo v2 (Chen et al. 2020) | (2048, 128) | False | False |
| SimCLR v1 (Chen et al. 2020a, Sec. 2.1: z = W2 relu(W1 h)) | (2048, 128) | True | True |
| SimCLR v2 (Chen et al. 2020b, Sec. 2: 3 layers) | (2048, 2048, 128) | True | True |
| BYOL projector and predictor (Grill et al. 2020, Sec. 3.3) | (4096, 256) | True | False |
| SwAV projector (Caron et al. 2020) | (2048, 128) | True | False |

A hidden layer is Dense -> BatchNormalization (when `batch_norm`) -> activation; the
Dense drops its bias when batch norm follows (the norm's beta replaces it). The last
layer is Dense, with batch norm without beta (center=False) when
`output_batch_norm`, as the SimCLR authors' code has it (`LinearLayer(use_bias=False,
use_bn=True)`; the paper's equation shows no norm). `call(h, depth=k)` stops after
the first k layers: SimCLR v2 fine-tunes from the head's first layer.

Example:

```python
head = ProjectionHead((2048, 2048, 128), batch_norm=True, output_batch_norm=True)
z = head(keras.ops.ones((8, 2048)), training=True)     # (8, 128)
h1 = head(keras.ops.ones((8, 2048)), depth=1)          # (8, 2048): after layer 1's ReLU
```
"""

import keras


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class ProjectionHead(keras.layers.Layer):
    """An MLP head: hidden Dense (-> BN) -> activation layers, then a Dense output (-> BN).

    Args:
        widths: the output widths of each layer, the last one the head's output
            (a non-empty sequence of ints >= 1).
        batch_norm: batch normalisation after each hidden Dense.
        output_batch_norm: batch normalisation (without beta) after the last Dense.
        activation: the hidden layers' activation ("relu").
        kernel_initializer: the Dense layers' initialiser.
        momentum, epsilon: the batch norms' (Keras's defaults, 0.99 and 1e-3;
            PyTorch's 0.9 / 1e-5 in the PyTorch papers' terms).
    """

    def __init__(self, widths, batch_norm=False, output_batch_norm=False, activation="relu",
                 kernel_initializer="glorot_uniform", momentum=0.99, epsilon=1e-3, **kwargs):
        super().__init__(**kwargs)
        if isinstance(widths, int) and not isinstance(widths, bool):
            widths = (widths,)
        if (not isinstance(widths, (list, tuple)) or not widths
                or any(isinstance(w, bool) or not isinstance(w, int) or w < 1 for w in widths)):
            raise ValueError(f"ProjectionHead widths must be a non-empty list of ints >= 1; got widths={widths!r}.")
        for name, value in (("batch_norm", batch_norm), ("output_batch_norm", output_batch_norm)):
            if not isinstance(value, bool):
                raise ValueError(f"ProjectionHead {name} must be True or False; got {value!r}.")
        self.widths = tuple(int(w) for w in widths)
        self.batch_norm = batch_norm
        self.output_batch_norm = output_batch_norm
        self.activation = activation
        self.kernel_initializer = keras.initializers.serialize(keras.initializers.get(kernel_initializer))
        self.momentum = momentum
        self.epsilon = epsilon
        self.blocks = []  # one list of layers per Dense
        for i, width in enumerate(self.widths):
            last = i == len(self.widths) - 1
            norm = self.output_batch_norm if last else self.batch_norm
            block = [keras.layers.Dense(width, use_bias=not norm, name=f"dense_{i}", dtype=self.dtype_policy,
                                        kernel_initializer=keras.initializers.get(kernel_initializer))]
            if norm:
                block.append(keras.layers.BatchNormalization(
                    center=not last, momentum=momentum, epsilon=epsilon, name=f"batch_norm_{i}",
                    dtype=self.dtype_policy))
            if not last:
                block.append(keras.layers.Activation(activation, name=f"activation_{i}", dtype=self.dtype_policy))
            self.blocks.append(block)

    @property
    def depth(self):
        """The number of Dense layers."""
        return len(self.widths)

    def build(self, input_shape):
        shape = tuple(input_shape)
        for block in self.blocks:
            for layer in block:
                layer.build(shape)
                shape = layer.compute_output_shape(shape)
        self.built = True

    def call(self, inputs, training=None, depth=None):
        """(B, D) -> (B, widths[-1]); with `depth=k`, the output of layer k (its activation)."""
        depth = self.depth if depth is None else depth
        if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= self.depth:
            raise ValueError(f"ProjectionHead depth must be an int in [1, {self.depth}]; got depth={depth!r}.")
        x = inputs
        for block in self.blocks[:depth]:
            for layer in block:
                x = layer(x, training=training) if isinstance(layer, keras.layers.BatchNormalization) else layer(x)
        return x

    def get_config(self):
        return {
            **super().get_config(),
            "widths": list(self.widths),
            "batch_norm": self.batch_norm,
            "output_batch_norm": self.output_batch_norm,
            "activation": self.activation,
            "kernel_initializer": self.kernel_initializer,
            "momentum": self.momentum,
            "epsilon": self.epsilon,
        }
