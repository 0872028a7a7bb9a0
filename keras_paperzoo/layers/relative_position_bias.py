"""BEiT's relative position bias (Bao et al. 2022, Sec. 2.6 / App. "relative position bias").

Each self-attention layer adds a learned scalar per head and per query-key offset to
its logits ("we use relative position bias (Raffel et al., 2020; Bao et al., 2020)"):

    logits[h, i, j] = q_i^h . k_j^h / sqrt(d_h) + B[h, i, j],   B[h, i, j] = table[index(i, j), h]

The table has (2h-1)(2w-1) + 3 rows, one per 2-D offset (dr, dc) between two patches
of the h x w grid and three for the class token (cls->cls, cls->patch, patch->cls),
and one column per head. `index` is `relative_position_index(grid, 1, "2d")`
(`layers/position_embedding.py`), the official code's patch-offset order
(dr + h-1) * (2w-1) + (dc + w-1); the three class-token rows come first there
(0 cls->cls, 1 cls->patch, 2 patch->cls) where the official code keeps them last
(E-3 cls->patch, E-2 patch->cls, E-1 cls->cls): a converted table moves its last
three rows [E-3, E-2, E-1] to rows [1, 2, 0] and the patch rows down by 3.

Unlike the ViT paper's relative attention (`RelativePositionMultiHeadAttention`,
query . r_offset), the bias does not depend on the content. The official code
initialises the table with zeros (its `trunc_normal_` line is commented out), so
attention starts exactly as without it; that is the default here.
"""

import keras
from keras import ops

from keras_paperzoo.layers.position_embedding import (
    AddedTable,
    RelativePositionMultiHeadAttention,
    grid_shape,
    relative_position_index,
)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class RelativePositionBias(AddedTable):
    """A learned ((2h-1)(2w-1) + 3, heads) table, gathered to the (heads, T, T) attention bias.

    `layer.bias()` is B, B[h, i, j] = table[index[i, j], h], T = num_prefix_tokens + h*w;
    calling the layer on (B, heads, T, T) attention logits adds B to them.

    Args:
        grid_size: int or (h, w), the patch grid.
        num_heads: int.
        num_prefix_tokens: 0 or 1 (the class token; 3 extra table rows).
        initializer: for the table; zeros (the official code's) by default.

    Example:

    ```python
    bias = RelativePositionBias((14, 14), num_heads=12)
    bias.build()
    bias.table.shape, bias.bias().shape              # (732, 12), (12, 197, 197)
    bias(keras.ops.zeros((2, 12, 197, 197))).shape   # (2, 12, 197, 197): logits + B
    ```
    """

    def __init__(self, grid_size, num_heads, num_prefix_tokens=1, initializer="zeros", **kwargs):
        super().__init__(initializer, **kwargs)
        if isinstance(num_heads, bool) or not isinstance(num_heads, int) or num_heads < 1:
            raise ValueError(f"RelativePositionBias num_heads must be a positive int; got {num_heads!r}.")
        self.grid_size = grid_shape(grid_size, "grid_size")
        self.num_heads = num_heads
        self.num_prefix_tokens = int(num_prefix_tokens)
        index, self.num_embeddings = relative_position_index(self.grid_size, self.num_prefix_tokens, "2d")
        self.index = index  # (T, T) int32, NumPy
        self.sequence_length = index.shape[0]

    def build(self, input_shape=None):
        self.table = self.add_weight(
            shape=(self.num_embeddings, self.num_heads), initializer=self.initializer,
            name="relative_position_bias_table",
        )

    def bias(self):
        """B: (heads, T, T), B[h, i, j] = table[index[i, j], h]."""
        t = self.sequence_length
        bias = ops.take(self.table, ops.convert_to_tensor(self.index.reshape(-1)), axis=0)  # (T*T, heads)
        return ops.transpose(ops.reshape(bias, (t, t, self.num_heads)), (2, 0, 1))  # (heads, T, T)

    added_table = bias  # called on (B, heads, T, T) logits: logits + B

    def get_config(self):
        return {**super().get_config(), "grid_size": self.grid_size, "num_heads": self.num_heads,
                "num_prefix_tokens": self.num_prefix_tokens}


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class RelativePositionBiasAttention(RelativePositionMultiHeadAttention):
    """Self-attention with BEiT's relative position bias added to the logits before the softmax.

    `RelativePositionMultiHeadAttention` (a `keras.layers.MultiHeadAttention` whose
    `_compute_attention` adds a position term to the content logits) with that term
    replaced: logits = q k^T / sqrt(d_h) + B, B the (heads, T, T) output of a
    `RelativePositionBias` owned by this layer, instead of the ViT paper's
    query . r_offset. Masks, dropout and `return_attention_scores` are unchanged.

    Deviation, without effect on the outputs: Keras's attention has a key bias, which
    the official code leaves out (it has q and v biases only). q . (k + b) adds
    q . b to every logit of a query's row, which the softmax removes; it adds
    D parameters per layer.

    Args:
        grid_size: int or (h, w), the patch grid.
        num_prefix_tokens: 0 or 1.
        table_initializer: initializer of the bias table (zeros).
        Other arguments as for `keras.layers.MultiHeadAttention`.

    Example:

    ```python
    attention = RelativePositionBiasAttention(num_heads=12, key_dim=64, grid_size=14)
    attention(keras.ops.ones((2, 197, 768)), keras.ops.ones((2, 197, 768))).shape  # (2, 197, 768)
    ```
    """

    def __init__(self, num_heads, key_dim, grid_size, num_prefix_tokens=1, table_initializer="zeros", **kwargs):
        for name in ("offsets", "relative_initializer"):  # the parent's, not used here
            kwargs.pop(name, None)
        super().__init__(num_heads, key_dim, grid_size, num_prefix_tokens, offsets="2d", **kwargs)
        self.table_initializer = keras.initializers.get(table_initializer)
        self.relative_position_bias = RelativePositionBias(
            self.grid_size, num_heads, self.num_prefix_tokens, initializer=self.table_initializer,
            dtype=self.dtype_policy, name="relative_position_bias",
        )

    def build(self, query_shape, value_shape, key_shape=None):
        if query_shape[1] is not None and query_shape[1] != self.sequence_length:
            raise ValueError(
                f"Sequence length {query_shape[1]} should be {self.num_prefix_tokens} prefix tokens + "
                f"{self.grid_size[0]}x{self.grid_size[1]} patches = {self.sequence_length}."
            )
        keras.layers.MultiHeadAttention.build(self, query_shape, value_shape, key_shape)  # no offset embeddings
        self.relative_position_bias.build()  # here, so that the table's path is under this layer's

    def relative_logits(self, query):
        """The position term of the logits: B[None], (1, heads, T, T), the same for every query."""
        return ops.cast(self.relative_position_bias.bias(), query.dtype)[None]

    def get_config(self):
        config = super().get_config()
        for name in ("offsets", "relative_initializer"):
            config.pop(name)
        config["table_initializer"] = keras.initializers.serialize(self.table_initializer)
        return config
