"""Position information for token sequences (ViT, Dosovitskiy et al. 2021; reused by MAE, BEiT).

The four options of the ViT paper's Appendix D.4 (Table 8):

- no position information (nothing to add);
- `LearnedPositionEmbedding`: the default, a learned table E_pos in R^{(N+1) x D}
  added to the tokens (eq. 1), 1-D in raster order;
- `FactorizedPositionEmbedding2D`: two learned tables of D/2, one per axis, the
  patch at (row, col) gets [X_col; Y_row];
- `RelativePositionMultiHeadAttention`: relative attention, an extra attention of
  each query against learned embeddings of the query-key offset, whose logits are
  added to the content logits before the softmax.

and the resolution change of Sec. 3.2, `resize_position_embeddings`: 2-D
interpolation of a learned table to a new patch grid, prefix (class) tokens kept.
"""

import math

import numpy as np

import keras
from keras import ops


def grid_shape(value, name):
    """(h, w) from an int or a pair of positive ints; `name` is the argument named in the error."""
    grid = (value, value) if isinstance(value, int) and not isinstance(value, bool) else tuple(value)
    if len(grid) != 2 or any(not isinstance(v, (int, np.integer)) or v < 1 for v in grid):
        raise ValueError(f"{name} must be a positive int or a pair of positive ints; got {value!r}.")
    return tuple(int(v) for v in grid)


class AddedTable(keras.layers.Layer):
    """Base of the layers that add a learned table to their input, broadcast over the batch: x + T.

    A subclass creates its weights (from `self.initializer`) in `build` and returns T from
    `added_table()`, shaped as one example of the input: position embeddings (T, D) added
    to tokens (B, T, D), an attention bias (heads, T, T) added to logits (B, heads, T, T).
    The output has the input's shape; the config holds the initializer.
    """

    def __init__(self, initializer=None, **kwargs):
        super().__init__(**kwargs)
        self.initializer = keras.initializers.get(initializer or keras.initializers.RandomNormal(stddev=0.02))

    def added_table(self):
        raise NotImplementedError

    def call(self, inputs):
        return inputs + ops.cast(self.added_table(), inputs.dtype)[None]

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config["initializer"] = keras.initializers.serialize(self.initializer)
        return config


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class LearnedPositionEmbedding(AddedTable):
    """Add a learned table E_pos of shape (sequence_length, D) to (B, sequence_length, D) tokens.

    ViT's default (eq. 1): one vector per position in raster order, the class token's
    at index 0. Initialised N(0, 0.02^2) as in the official code. The table's
    length is fixed by the input; a model at another resolution gets its table from
    `resize_position_embeddings`.

    Example:

    ```python
    LearnedPositionEmbedding()(keras.ops.ones((2, 197, 768))).shape  # (2, 197, 768)
    ```
    """

    def build(self, input_shape):
        if input_shape[1] is None:
            raise ValueError(f"LearnedPositionEmbedding needs a known sequence length; got {input_shape}.")
        self.embeddings = self.add_weight(
            shape=(input_shape[1], input_shape[2]), initializer=self.initializer, name="embeddings"
        )

    def added_table(self):
        return self.embeddings  # E_pos, (T, D)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class FactorizedPositionEmbedding2D(AddedTable):
    """The ViT paper's 2-D position embedding (App. D.4): X and Y tables of D/2, concatenated.

    The patch at (row r, column c) of a `grid_size` = (h, w) grid gets [X_c; Y_r]
    (X, the column/x-coordinate table, first). Prefix tokens (the class token) get no
    position vector: the class token is itself a learned vector, so a learned
    position for it would add nothing. Parameters: (h + w) * D/2, against
    (1 + h*w) * D for the 1-D table.

    Args:
        grid_size: int or (int, int), the patch grid (h, w).
        num_prefix_tokens: int, tokens before the h*w patch tokens (1 for the class token).
        initializer: for both tables; default N(0, 0.02^2) like the 1-D table.

    Example:

    ```python
    layer = FactorizedPositionEmbedding2D(grid_size=14, num_prefix_tokens=1)
    layer(keras.ops.ones((2, 197, 768))).shape  # (2, 197, 768)
    ```
    """

    def __init__(self, grid_size, num_prefix_tokens=1, initializer=None, **kwargs):
        super().__init__(initializer, **kwargs)
        self.grid_size = grid_shape(grid_size, "grid_size")
        self.num_prefix_tokens = int(num_prefix_tokens)

    def build(self, input_shape):
        dim = input_shape[-1]
        if dim % 2:
            raise ValueError(f"hidden_dim {dim} should be even for 2-D position embeddings (two halves of D/2).")
        h, w = self.grid_size
        if input_shape[1] is not None and input_shape[1] != self.num_prefix_tokens + h * w:
            raise ValueError(
                f"Sequence length {input_shape[1]} should be {self.num_prefix_tokens} prefix tokens "
                f"+ {h}x{w} patches."
            )
        self.column_embeddings = self.add_weight(
            shape=(w, dim // 2), initializer=self.initializer, name="column_embeddings"
        )  # X
        self.row_embeddings = self.add_weight(
            shape=(h, dim // 2), initializer=self.initializer, name="row_embeddings"
        )  # Y

    def position_table(self):
        """The (num_prefix_tokens + h*w, D) table this layer adds (zeros for prefix tokens)."""
        h, w = self.grid_size
        half = self.column_embeddings.shape[-1]
        x = ops.broadcast_to(self.column_embeddings[None, :, :], (h, w, half))  # X_c
        y = ops.broadcast_to(self.row_embeddings[:, None, :], (h, w, half))  # Y_r
        grid = ops.reshape(ops.concatenate([x, y], axis=-1), (h * w, 2 * half))
        prefix = ops.zeros((self.num_prefix_tokens, 2 * half), dtype=grid.dtype)
        return ops.concatenate([prefix, grid], axis=0)

    added_table = position_table

    def get_config(self):
        return {**super().get_config(), "grid_size": self.grid_size, "num_prefix_tokens": self.num_prefix_tokens}


def relative_position_index(grid_size, num_prefix_tokens=1, offsets="2d"):
    """Index of the offset embedding for every (query, key) pair: int array (T, T).

    T = num_prefix_tokens + h*w. With `num_prefix_tokens` = 1 (a class token), indices
    0, 1, 2 are reserved: 0 class->class, 1 class->patch, 2 patch->class (BEiT's
    convention); patches follow from 3. Without a prefix there are no reserved indices.

    - `offsets="2d"`: (dr, dc) = (r_q - r_k, c_q - c_k), (2h-1)(2w-1) embeddings, in
      row-major order of (dr + h-1, dc + w-1).
    - `offsets="1d"`: the raster-order offset n_q - n_k, 2hw - 1 embeddings (the paper's
      literal "1-dimensional relative attention").

    Returns (index, num_embeddings).
    """
    h, w = grid_shape(grid_size, "grid_size")
    if num_prefix_tokens not in (0, 1):
        raise ValueError(f"num_prefix_tokens must be 0 or 1 for relative positions; got {num_prefix_tokens!r}.")
    rows, cols = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    rows, cols = rows.reshape(-1), cols.reshape(-1)
    special = 3 if num_prefix_tokens else 0
    if offsets == "2d":
        dr = rows[:, None] - rows[None, :] + h - 1
        dc = cols[:, None] - cols[None, :] + w - 1
        patch_index = dr * (2 * w - 1) + dc
        num_offsets = (2 * h - 1) * (2 * w - 1)
    elif offsets == "1d":
        n = np.arange(h * w)
        patch_index = n[:, None] - n[None, :] + h * w - 1
        num_offsets = 2 * h * w - 1
    else:
        raise ValueError(f"Unknown relative offsets {offsets!r}; expected '2d' or '1d'.")
    t = num_prefix_tokens + h * w
    index = np.zeros((t, t), dtype="int32")
    index[num_prefix_tokens:, num_prefix_tokens:] = patch_index + special
    if num_prefix_tokens:
        index[0, 0], index[0, 1:], index[1:, 0] = 0, 1, 2
    return index, num_offsets + special


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class RelativePositionMultiHeadAttention(keras.layers.MultiHeadAttention):
    """Self-attention with the ViT paper's relative position term (App. D.4).

    The paper: "for every given pair (one as query, and the other as key/value) we
    have an offset p_q - p_k, where each offset is associated with an embedding. Then,
    we simply run extra attention, where we use the original query, but use relative
    positional embeddings as keys. We then use the logits from the relative attention
    as a bias term and add it to the logits of the main attention before applying
    softmax." Per head h:

        logits[h, i, j] = q_i^h . k_j^h / sqrt(d_h)  +  q_i^h . r^h_{offset(i, j)} / sqrt(d_h)

    r is a learned (num_embeddings, heads, d_h) table per layer (one D-vector per
    offset, split into heads like the keys), initialised N(0, 0.02^2). Offsets are
    2-D (dr, dc) by default; `offsets="1d"` uses raster-order offsets, the paper's
    literal wording. The class token has three extra embeddings (class->class,
    class->patch, patch->class). `keras.layers.MultiHeadAttention` with its documented
    `_compute_attention` hook overridden; everything else (projections, masks,
    dropout, `return_attention_scores`) is unchanged.

    Args:
        grid_size: int or (int, int), the patch grid.
        num_prefix_tokens: 0 or 1, tokens before the patches.
        offsets: "2d" or "1d".
        relative_initializer: for the offset table.
        Other arguments as for `keras.layers.MultiHeadAttention`.
    """

    def __init__(
        self,
        num_heads,
        key_dim,
        grid_size,
        num_prefix_tokens=1,
        offsets="2d",
        relative_initializer=None,
        **kwargs,
    ):
        super().__init__(num_heads, key_dim, **kwargs)
        self.grid_size = grid_shape(grid_size, "grid_size")
        self.num_prefix_tokens = int(num_prefix_tokens)
        self.offsets = offsets
        self.relative_initializer = keras.initializers.get(
            relative_initializer or keras.initializers.RandomNormal(stddev=0.02)
        )
        index, self.num_embeddings = relative_position_index(self.grid_size, self.num_prefix_tokens, offsets)
        t = index.shape[0]
        # Flat index into the (T * num_embeddings) query-offset logits, row t: t * E + index[t, s].
        self._flat_index = (np.arange(t)[:, None] * self.num_embeddings + index).reshape(-1).astype("int32")
        self.sequence_length = t

    def build(self, query_shape, value_shape, key_shape=None):
        if query_shape[1] is not None and query_shape[1] != self.sequence_length:
            raise ValueError(
                f"Sequence length {query_shape[1]} should be {self.num_prefix_tokens} prefix tokens + "
                f"{self.grid_size[0]}x{self.grid_size[1]} patches = {self.sequence_length}."
            )
        super().build(query_shape, value_shape, key_shape)
        self.relative_embeddings = self.add_weight(
            shape=(self.num_embeddings, self.num_heads, self.key_dim),
            initializer=self.relative_initializer,
            name="relative_embeddings",
        )

    def relative_logits(self, query):
        """(B, T, heads, d_h) query (already scaled) -> (B, heads, T, T) relative-position logits."""
        t = self.sequence_length
        table = ops.cast(self.relative_embeddings, query.dtype)
        logits = ops.einsum("bthd,ehd->bhte", query, table)  # (B, H, T, E)
        logits = ops.reshape(logits, (-1, self.num_heads, t * self.num_embeddings))
        logits = ops.take(logits, self._flat_index, axis=2)  # (B, H, T*T)
        return ops.reshape(logits, (-1, self.num_heads, t, t))

    def _compute_attention(
        self,
        query,
        key,
        value,
        attention_mask=None,
        training=None,
        return_attention_scores=False,
        use_causal_mask=False,
    ):
        if use_causal_mask:
            causal = self._compute_causal_mask(query, value)
            attention_mask = causal if attention_mask is None else ops.logical_and(
                ops.cast(attention_mask, "bool"), causal
            )
        query = query * ops.cast(1.0 / math.sqrt(self.key_dim), query.dtype)  # (B, T, H, d_h)
        logits = ops.einsum("bthd,bshd->bhts", query, key)  # content, (B, H, T, S)
        logits = logits + self.relative_logits(query)  # + position, the paper's bias term
        scores = self._masked_softmax(logits, attention_mask)
        dropped = self._dropout_layer(scores, training=training) if self.dropout > 0 else scores
        output = ops.einsum("bhts,bshd->bthd", dropped, value)
        return output, scores

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "grid_size": self.grid_size,
                "num_prefix_tokens": self.num_prefix_tokens,
                "offsets": self.offsets,
                "relative_initializer": keras.initializers.serialize(self.relative_initializer),
            }
        )
        return config


# --- resizing (ViT Sec. 3.2) -------------------------------------------------------------


def _cubic(x, a):
    x = abs(x)
    if x < 1:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    if x < 2:
        return (((x - 5) * x + 8) * x - 4) * a
    return 0.0


def _linear(x):
    return max(0.0, 1.0 - abs(x))


def interpolation_matrix(in_size, out_size, interpolation="bicubic", antialias=True, align_corners=False):
    """(out_size, in_size) matrix W with resized = W @ signal, PyTorch `F.interpolate` semantics.

    - `antialias=True` (timm's `resample_abs_pos_embed`): PIL-style separable filter,
      half-pixel centres, taps truncated at the borders and renormalised, bicubic with
      a = -0.5, the filter widened by the scale when downsampling.
    - `antialias=False`: the classic kernels, bicubic a = -0.75 with edge-clamped taps;
      `align_corners=True` maps corner to corner (with "bilinear" this is the official
      JAX code's `scipy.ndimage.zoom(order=1)`).
    """
    if interpolation not in ("bilinear", "bicubic"):
        raise ValueError(f"Unknown interpolation {interpolation!r}; expected 'bilinear' or 'bicubic'.")
    if align_corners and antialias:
        raise ValueError("align_corners=True needs antialias=False (timm's antialiased resize is half-pixel).")
    weights = np.zeros((out_size, in_size))
    if in_size == out_size:
        return np.eye(in_size)
    if antialias:
        scale = in_size / out_size
        support = (1.0 if interpolation == "bilinear" else 2.0) * max(scale, 1.0)
        inv = 1.0 / max(scale, 1.0)
        for i in range(out_size):
            center = scale * (i + 0.5)
            lo = max(int(center - support + 0.5), 0)
            hi = min(int(center + support + 0.5), in_size)
            taps = [
                _linear((j - center + 0.5) * inv) if interpolation == "bilinear"
                else _cubic((j - center + 0.5) * inv, -0.5)
                for j in range(lo, hi)
            ]
            weights[i, lo:hi] = np.asarray(taps) / np.sum(taps)
        return weights
    for i in range(out_size):
        if align_corners:
            src = i * (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
        else:
            src = in_size / out_size * (i + 0.5) - 0.5
        if interpolation == "bilinear":
            src = max(src, 0.0)
            x0 = min(int(math.floor(src)), in_size - 1)
            x1 = min(x0 + 1, in_size - 1)
            weights[i, x0] += 1 - (src - x0)
            weights[i, x1] += src - x0
        else:
            x0 = int(math.floor(src))
            for offset in (-1, 0, 1, 2):
                j = min(max(x0 + offset, 0), in_size - 1)
                weights[i, j] += _cubic(src - x0 - offset, -0.75)
    return weights


def resize_position_embeddings(
    embeddings,
    old_grid,
    new_grid,
    num_prefix_tokens=1,
    interpolation="bicubic",
    antialias=True,
    align_corners=False,
):
    """Resize a learned position table to a new patch grid (ViT Sec. 3.2), prefix rows kept.

    "We perform 2D interpolation of the pre-trained position embeddings, according to
    their location in the original image." The first `num_prefix_tokens` rows (the
    class token's) are kept as they are; the remaining h*w rows, a raster-order
    (h, w) grid, are interpolated to `new_grid`. The default is timm's
    (`resample_abs_pos_embed`: bicubic, antialiased, half-pixel centres, i.e.
    `align_corners=False`) and matches `torch.nn.functional.interpolate` to float
    precision; the official JAX code's `scipy.ndimage.zoom(order=1)` is
    `interpolation="bilinear", antialias=False, align_corners=True`. Runs in NumPy
    (weights are converted once, outside any graph), so every backend gives the same
    table.

    Args:
        embeddings: array (num_prefix_tokens + h*w, ...) or (1, num_prefix_tokens + h*w, ...);
            trailing axes (D, or heads x head_dim) are carried along.
        old_grid, new_grid: int or (int, int).
        num_prefix_tokens: rows before the grid rows, kept unchanged.

    Returns a NumPy array of the same rank, grid rows resized.

    Example:

    ```python
    table = np.random.normal(size=(197, 768))        # ViT-B/16 at 224
    resize_position_embeddings(table, 14, 24).shape  # (577, 768), for 384 x 384
    ```
    """
    old_h, old_w = grid_shape(old_grid, "old_grid")
    new_h, new_w = grid_shape(new_grid, "new_grid")
    table = np.asarray(keras.ops.convert_to_numpy(embeddings))
    batched = table.ndim >= 3 and table.shape[0] == 1 and table.shape[1] == num_prefix_tokens + old_h * old_w
    if batched:
        table = table[0]
    if table.shape[0] != num_prefix_tokens + old_h * old_w:
        raise ValueError(
            f"Position table has {table.shape[0]} rows; expected {num_prefix_tokens} prefix rows + "
            f"{old_h}x{old_w} grid rows = {num_prefix_tokens + old_h * old_w}."
        )
    prefix, grid = table[:num_prefix_tokens], table[num_prefix_tokens:]
    trailing = grid.shape[1:]
    grid = grid.reshape((old_h, old_w, -1)).astype("float64")
    rows = interpolation_matrix(old_h, new_h, interpolation, antialias, align_corners)  # (new_h, old_h)
    cols = interpolation_matrix(old_w, new_w, interpolation, antialias, align_corners)  # (new_w, old_w)
    resized = np.einsum("ih,hwd,jw->ijd", rows, grid, cols).reshape((new_h * new_w,) + trailing)
    out = np.concatenate([prefix, resized.astype(table.dtype)], axis=0)
    return out[None] if batched else out


def resize_embeddings_1d(table, new_length, interpolation="bicubic", antialias=True, align_corners=False):
    """Resize a (length, ...) table along its first axis (the 2-D embedding's X and Y tables)."""
    table = np.asarray(keras.ops.convert_to_numpy(table))
    weights = interpolation_matrix(table.shape[0], new_length, interpolation, antialias, align_corners)
    flat = table.reshape((table.shape[0], -1)).astype("float64")
    return (weights @ flat).reshape((new_length,) + table.shape[1:]).astype(table.dtype)
