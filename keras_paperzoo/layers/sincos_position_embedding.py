"""Fixed 2-D sine-cosine position embeddings (MAE, He et al. 2022, App. A.1).

MAE adds fixed (not learned) sin-cos position embeddings in both its encoder and its
decoder. For a patch at (row r, column c) of an (h, w) grid and width D (divisible by
4), half of the D values encode the column and half the row, each with the
Transformer's 1-D sinusoids over D/4 frequencies:

    omega_i = 1 / 10000^(i / (D/4)),  i = 0 .. D/4 - 1
    e(p)    = [sin(p omega_0) ... sin(p omega_{D/4-1}), cos(p omega_0) ... cos(p omega_{D/4-1})]
    E(r, c) = [e(c); e(r)]                                   (column half first)

Rows are in raster order; prefix tokens (the class token) get a zero vector. The
column-first order matches `FactorizedPositionEmbedding2D`'s [X_c; Y_r].
"""

import numpy as np

import keras
from keras import ops

from keras_paperzoo.layers.position_embedding import grid_shape


def sincos_1d(positions, dim):
    """(P,) positions -> (P, dim) [sin(p omega); cos(p omega)], dim even."""
    if dim % 2:
        raise ValueError(f"1-D sin-cos embeddings need an even width; got {dim}.")
    omega = 1.0 / 10000.0 ** (np.arange(dim // 2, dtype="float64") / (dim / 2.0))  # (dim/2,)
    angles = np.asarray(positions, dtype="float64")[:, None] * omega[None, :]  # (P, dim/2)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)


def sincos_position_table_2d(grid_size, dim, num_prefix_tokens=1):
    """The (num_prefix_tokens + h*w, dim) float32 table described in the module docstring.

    Example:

    ```python
    sincos_position_table_2d(14, 768).shape  # (197, 768); row 0 (class token) is zeros
    ```
    """
    h, w = grid_shape(grid_size, "grid_size")
    if not isinstance(dim, (int, np.integer)) or dim < 4 or dim % 4:
        raise ValueError(f"2-D sin-cos position embeddings need a width divisible by 4; got {dim!r}.")
    rows, cols = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")  # (h, w) each
    table = np.concatenate(
        [sincos_1d(cols.reshape(-1), dim // 2), sincos_1d(rows.reshape(-1), dim // 2)], axis=1
    )  # (h*w, dim): column half, then row half
    prefix = np.zeros((int(num_prefix_tokens), dim))
    return np.concatenate([prefix, table], axis=0).astype("float32")


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class SinCosPositionEmbedding2D(keras.layers.Layer):
    """Add the fixed 2-D sin-cos table to (B, num_prefix_tokens + h*w, D) tokens (no weights).

    Args:
        grid_size: int or (int, int), the patch grid (h, w).
        num_prefix_tokens: int, tokens before the patches (1 for a class token), given zeros.

    Example:

    ```python
    layer = SinCosPositionEmbedding2D(grid_size=14, num_prefix_tokens=1)
    layer(keras.ops.zeros((2, 197, 512))).shape  # (2, 197, 512)
    ```
    """

    def __init__(self, grid_size, num_prefix_tokens=1, **kwargs):
        super().__init__(**kwargs)
        self.grid_size = grid_shape(grid_size, "grid_size")
        self.num_prefix_tokens = int(num_prefix_tokens)
        self.table = None

    def build(self, input_shape):
        h, w = self.grid_size
        if input_shape[1] is not None and input_shape[1] != self.num_prefix_tokens + h * w:
            raise ValueError(
                f"Sequence length {input_shape[1]} should be {self.num_prefix_tokens} prefix tokens "
                f"+ {h}x{w} patches."
            )
        self.table = sincos_position_table_2d(self.grid_size, input_shape[-1], self.num_prefix_tokens)

    def call(self, tokens):
        return tokens + ops.convert_to_tensor(self.table, dtype=tokens.dtype)[None]  # (B, T, D)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({"grid_size": self.grid_size, "num_prefix_tokens": self.num_prefix_tokens})
        return config
