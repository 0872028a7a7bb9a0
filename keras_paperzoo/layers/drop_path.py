"""Stochastic depth ("drop path", Huang et al. 2016), per sample, as BEiT, DeiT and timm use it.

In training each sample's residual branch is dropped with probability `rate` and the
kept ones are scaled by 1 / (1 - rate), so the expected output equals the input;
at inference the layer is the identity (Huang et al. 2016, eq. 5, with the scaling
moved into training as timm's `drop_path`). BEiT (Bao et al. 2022, App. "Hyperparameters")
pre-trains and fine-tunes ViT-B with drop path 0.1, the rate rising linearly with depth
from 0 at the first block.
"""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class DropPath(keras.layers.Layer):
    """Zero a whole sample's input with probability `rate` in training, scale the rest by 1 / (1 - rate).

    One Bernoulli(1 - rate) draw per sample (axis 0), shared by all its other axes:
    x (B, ...) -> x * keep / (1 - rate), keep (B, 1, ..., 1). Draws come from the
    layer's `keras.random.SeedGenerator`, so `EpochSeeds` can make a resumed run
    repeat them.

    Args:
        rate: float in [0, 1), the drop probability.
        seed: int or None.

    Example:

    ```python
    DropPath(0.1, seed=0)(keras.ops.ones((4, 197, 768)), training=True)  # each sample all 0 or all 1/0.9
    ```
    """

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0.0 <= rate < 1.0:
            raise ValueError(f"DropPath rate must be in [0, 1); got rate={rate!r}.")
        self.rate = float(rate)
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed, name="drop_path_seed")

    def call(self, inputs, training=None):
        if not training or self.rate == 0.0:
            return inputs
        keep_prob = 1.0 - self.rate
        shape = (ops.shape(inputs)[0],) + (1,) * (len(inputs.shape) - 1)
        uniform = keras.random.uniform(shape, seed=self.seed_generator, dtype=inputs.dtype)
        keep = ops.floor(keep_prob + uniform)  # (B, 1, ..., 1): 1 with probability keep_prob
        return inputs * (keep / keep_prob)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({"rate": self.rate, "seed": self.seed})
        return config
