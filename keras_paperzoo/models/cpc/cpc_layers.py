"""The pieces of Contrastive Predictive Coding (van den Oord et al. 2018; Henaff et al. 2019) as Keras layers.

- `grid_shape(...)` and `PatchGrid`: an image cut into an overlapping grid of
  patches (v1, Sec. 3.2: "from a 256x256 image we extract a 7x7 grid of 64x64
  crops with 32 pixels overlap"), (B, H, W, C) -> (B, rows, cols, p, p, C).
- `GridEncoder`: a patch encoder g_enc applied to every patch of the grid, its
  maps mean-pooled (v1: "spatially mean-pool to get a single 1024-d vector per
  64x64 patch"), (B, rows, cols, p, p, C) -> (B, rows, cols, D).
- `PixelCNNContext`: the autoregressive context network g_ar over the grid's
  rows, masked so that c at row r sees rows <= r only (v1: "a PixelCNN-style
  autoregressive model"; its residual blocks as the pseudo-code of Henaff et
  al., Appendix A.2).
- `ColumnGRUContext`: a GRU down each column (v1's audio g_ar, a GRU over time;
  an audio sequence is a grid with one column).
- `orient` / `unorient`: the grid turned so that "down" is the direction of
  prediction (v2 predicts from above, below, the left and the right).
- `prediction_networks` / `build_context`: a CPC trainer's context networks g_ar and its W_k.
- `cpc_encoder`: what CPC evaluates downstream, as a functional model.
"""

import keras
from keras import ops

from keras_paperzoo.models.self_supervised import pool_features

# The prediction directions: where the predicted patches lie from the context. v1 predicts
# "down" (context from the rows above); v2 "from below, the right and the left" as well.
DIRECTIONS = ("down", "up", "right", "left")


def _pair(value, name, owner):
    pair = (value, value) if isinstance(value, int) and not isinstance(value, bool) else value
    if (not isinstance(pair, (list, tuple)) or len(pair) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in pair)):
        raise ValueError(f"{owner} {name} must be an int >= 1 or (height, width) of ints >= 1; got {value!r}.")
    return (int(pair[0]), int(pair[1]))


def grid_shape(image_size, patch_size, stride, owner="PatchGrid"):
    """(rows, cols) of the patch grid, or one ValueError naming the value and the rule.

    A grid fits an image when (side - patch) is a non-negative multiple of the
    stride along both axes: patches at 0, s, 2s, ... cover the image exactly.
    v1: (256 - 64) / 32 + 1 = 7; CIFAR at the same proportions: (32 - 8) / 4 + 1 = 7.
    """
    patch = _pair(patch_size, "patch_size", owner)
    steps = _pair(stride, "stride", owner)
    counts = []
    for axis, side, p, s in zip(("height", "width"), image_size, patch, steps):
        if side is None:
            raise ValueError(f"{owner} needs a known image {axis} to cut a grid; got image size {tuple(image_size)}.")
        if side < p or (side - p) % s:
            fits = p + s * max(0, round((side - p) / s))
            raise ValueError(
                f"{owner}: image {axis} {side} does not fit {p}-pixel patches at stride {s}: (image {axis} - patch) "
                f"must be a non-negative multiple of the stride, here {side} - {p} = {side - p}; {fits} fits "
                f"({(fits - p) // s + 1} patches)."
            )
        counts.append((side - p) // s + 1)
    return tuple(counts)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class PatchGrid(keras.layers.Layer):
    """Cut images into an overlapping grid of patches: (B, H, W, C) -> (B, rows, cols, p, p, C).

    Patch (r, c) is the crop image[r s : r s + p, c s : c s + p] (CPC v1, Sec. 3.2:
    a 7 x 7 grid of 64 x 64 crops at stride 32 on 256 x 256 images). The grid
    must fit the image exactly (`grid_shape`); otherwise building the layer
    raises one ValueError naming the size and the rule.

    Args:
        patch_size: int or (height, width), the patch side p.
        stride: int or (height, width), the step between patches (p / 2 in CPC:
            "32 pixels overlap" of 64-pixel patches).

    Example:

    ```python
    grid = PatchGrid(64, 32)
    grid(np.zeros((2, 256, 256, 3))).shape   # (2, 7, 7, 64, 64, 3)
    ```
    """

    def __init__(self, patch_size, stride, **kwargs):
        super().__init__(**kwargs)
        self.patch_size = _pair(patch_size, "patch_size", "PatchGrid")
        self.stride = _pair(stride, "stride", "PatchGrid")

    def build(self, input_shape):
        if len(input_shape) != 4:
            raise ValueError(f"PatchGrid takes images (B, H, W, C); got shape {tuple(input_shape)}.")
        self.grid = grid_shape(input_shape[1:3], self.patch_size, self.stride)
        self.built = True

    def call(self, images):
        (ph, pw), (sh, sw) = self.patch_size, self.stride
        rows, cols = grid_shape(images.shape[1:3], self.patch_size, self.stride)
        strips = ops.stack([images[:, r * sh: r * sh + ph] for r in range(rows)], axis=1)  # (B, rows, p, W, C)
        # (B, rows, cols, p, p, C)
        return ops.stack([strips[:, :, :, c * sw: c * sw + pw] for c in range(cols)], axis=2)

    def compute_output_shape(self, input_shape):
        rows, cols = grid_shape(input_shape[1:3], self.patch_size, self.stride)
        return (input_shape[0], rows, cols, *self.patch_size, input_shape[-1])

    def get_config(self):
        return {**super().get_config(), "patch_size": list(self.patch_size), "stride": list(self.stride)}


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class GridEncoder(keras.layers.Layer):
    """A patch encoder applied to every patch: (B, rows, cols, p, p, C) -> (B, rows, cols, D).

    All B x rows x cols patches go through `encoder` as one batch; an encoder
    returning maps (b, h, w, D) is mean-pooled over (h, w) (v1, Sec. 3.2: "spatially
    mean-pool to get a single 1024-d vector per 64x64 patch"). Patches never see
    each other, unless the encoder has batch norm in training mode (batch
    statistics mix them: CPC v2's reason to use layer norm).

    Args:
        encoder: a Keras model taking patches (b, p, p, C) to (b, D) or (b, h, w, D).

    Example:

    ```python
    encode = GridEncoder(CPCResNet.from_preset("cpc_resnet_tiny"))
    encode(PatchGrid(4, 2)(images))   # (B, 7, 7, 16) for 16 x 16 images
    ```
    """

    def __init__(self, encoder, **kwargs):
        super().__init__(**kwargs)
        self.encoder = encoder

    def call(self, patches, training=None):
        rows, cols = patches.shape[1], patches.shape[2]
        flat = ops.reshape(patches, (-1, *patches.shape[3:]))  # (B rows cols, p, p, C)
        z = pool_features(self.encoder(flat, training=training), "GridEncoder")  # (B rows cols, D)
        return ops.reshape(z, (-1, rows, cols, z.shape[-1]))

    def compute_output_shape(self, input_shape):
        return (*input_shape[:3], int(self.encoder.output_shape[-1]))

    def get_config(self):
        return {**super().get_config(), "encoder": keras.saving.serialize_keras_object(self.encoder)}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["encoder"] = keras.saving.deserialize_keras_object(config["encoder"])
        return cls(**config)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class PixelCNNContext(keras.layers.Layer):
    """CPC's autoregressive context network over a grid of encodings: c at row r sees rows <= r only.

    (B, rows, cols, D) -> (B, rows, cols, D). `blocks` residual blocks, each (Henaff
    et al. 2019, Appendix A.2 pseudo-code):

        h = relu(conv1x1(c, units))
        h = conv1x3(h)                       # along the row, 'same'
        h = relu(conv2x1(pad_top(h, 1)))     # this row and the one above ('valid')
        c = c + conv1x1(h, D)

    then relu(c). Only the 2 x 1 convolution looks across rows, and only upwards
    (one row of zero padding on top), so the receptive field of c at row r holds
    rows r - blocks .. r and never a row below (v1, Sec. 3.2: a "PixelCNN-style
    autoregressive model" predicting "the latent activations in following rows").

    Args:
        blocks: int >= 1, residual blocks (5 in A.2).
        units: int >= 1, the blocks' inner width (256 in A.2).

    Example:

    ```python
    c = PixelCNNContext(blocks=5, units=256)(z)   # z: (B, 7, 7, 1024) -> c: (B, 7, 7, 1024)
    ```
    """

    def __init__(self, blocks=5, units=256, **kwargs):
        super().__init__(**kwargs)
        for name, value in (("blocks", blocks), ("units", units)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"PixelCNNContext {name} must be an int >= 1; got {value!r}.")
        self.blocks, self.units = blocks, units
        self.convs = []

    def build(self, input_shape):
        depth = int(input_shape[-1])
        shape = tuple(input_shape)
        for b in range(self.blocks):
            layers = [
                keras.layers.Conv2D(self.units, 1, name=f"block{b}_in"),
                keras.layers.Conv2D(self.units, (1, 3), padding="same", name=f"block{b}_row"),
                keras.layers.Conv2D(self.units, (2, 1), padding="valid", name=f"block{b}_up"),
                keras.layers.Conv2D(depth, 1, name=f"block{b}_out"),
            ]
            inner = (*shape[:-1], self.units)
            layers[0].build(shape)
            layers[1].build(inner)
            layers[2].build((inner[0], None if inner[1] is None else inner[1] + 1, *inner[2:]))
            layers[3].build(inner)
            self.convs.append(layers)
        self.built = True

    def call(self, z):
        c = z
        for conv_in, conv_row, conv_up, conv_out in self.convs:
            h = ops.relu(conv_in(c))  # (B, rows, cols, units)
            h = conv_row(h)  # within each row
            h = ops.pad(h, [[0, 0], [1, 0], [0, 0], [0, 0]])  # one zero row on top: (B, rows + 1, cols, units)
            h = ops.relu(conv_up(h))  # row r from rows r - 1 and r: (B, rows, cols, units)
            c = c + conv_out(h)  # (B, rows, cols, D)
        return ops.relu(c)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "blocks": self.blocks, "units": self.units}


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class ColumnGRUContext(keras.layers.Layer):
    """A GRU down each column of the grid: (B, rows, cols, D) -> (B, rows, cols, units).

    c at row r summarises rows <= r of its column (v1, Sec. 2.2: c_t = g_ar(z_<=t),
    "GRUs for the autoregressive model"; Sec. 3.1: a GRU with 256-d hidden state
    over the audio encodings). An audio sequence of encodings (B, T, D) is a grid
    (B, T, 1, D). The GRU is Keras's (reset gate after the matmul, as PyTorch's).

    Args:
        units: int >= 1, the GRU's state size (256 in v1's audio model).

    Example:

    ```python
    c = ColumnGRUContext(256)(z[:, :, None, :])[:, :, 0]   # z: (B, T, 512) -> c: (B, T, 256)
    ```
    """

    def __init__(self, units=256, **kwargs):
        super().__init__(**kwargs)
        if isinstance(units, bool) or not isinstance(units, int) or units < 1:
            raise ValueError(f"ColumnGRUContext units must be an int >= 1; got {units!r}.")
        self.units = units
        self.gru = keras.layers.GRU(units, return_sequences=True, name="gru")

    def build(self, input_shape):
        self.gru.build((None, input_shape[1], input_shape[-1]))
        self.built = True

    def call(self, z):
        rows, cols, depth = z.shape[1], z.shape[2], z.shape[3]
        columns = ops.reshape(ops.transpose(z, (0, 2, 1, 3)), (-1, rows, depth))  # (B cols, rows, D)
        c = self.gru(columns)  # (B cols, rows, units)
        return ops.transpose(ops.reshape(c, (-1, cols, rows, self.units)), (0, 2, 1, 3))

    def compute_output_shape(self, input_shape):
        return (*input_shape[:-1], self.units)

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def orient(grid, direction):
    """`grid` (B, rows, cols, F) turned so that `direction` points down its rows.

    "down": as it is (context from above, v1); "up": rows reversed (context from
    below); "right": transposed (columns become rows: context from the left);
    "left": transposed, then reversed (context from the right).
    """
    if direction == "down":
        return grid
    if direction == "up":
        return ops.flip(grid, axis=1)
    transposed = ops.transpose(grid, (0, 2, 1, 3))
    return transposed if direction == "right" else ops.flip(transposed, axis=1)


def unorient(grid, direction):
    """The inverse of `orient`: back to the image's layout."""
    if direction in ("up", "left"):
        grid = ops.flip(grid, axis=1)
    return grid if direction in ("down", "up") else ops.transpose(grid, (0, 2, 1, 3))


def cpc_encoder(backbone, context, grid_size, image_shape, patch_size, patch_stride, name):
    """What CPC evaluates downstream, as a new functional model on the shared `backbone` (and `context`).

    Images (normalised, as the augmentation leaves them) -> the patch grid -> the backbone
    on every patch (mean-pooled maps) -> the mean over the grid: (B, D), v1's linear-probe
    input (image_shape given). Sequences (B, T, C) -> the backbone -> the context c
    (`context`, the first direction's network) -> the mean over time: (B, units)
    (image_shape None).
    """
    if image_shape is None:
        inputs = keras.Input(backbone.input_shape[1:], name="signal")
        z = keras.layers.Reshape((grid_size[0], 1, -1), name="as_grid")(backbone(inputs))
        features = keras.layers.GlobalAveragePooling2D(name="time_mean")(context(z))
    else:
        inputs = keras.Input(image_shape, name="images")
        z = GridEncoder(backbone, name="grid_encoder")(PatchGrid(patch_size, patch_stride, name="patch_grid")(inputs))
        features = keras.layers.GlobalAveragePooling2D(name="grid_mean")(z)
    return keras.Model(inputs, features, name=name)


def prediction_networks(depth, directions, steps, context, context_blocks, context_units,
                        target_dim=None):
    """(contexts, target_projection, predictors): g_ar per direction and W_k per direction and step.

    The W_k and the projection are built; each context is built by `build_context` (its
    layers are made when it is built, so the trainer chooses when their seeds are drawn).
    The contexts are `PixelCNNContext`s (context="pixelcnn") or `ColumnGRUContext`s ("gru")
    over the (rows, cols) grid of D = `depth` encodings, turned for each direction; the
    target projection (A.2: targets = conv1x1(latents, 64)) is None without `target_dim`;
    the W_k (eq. 3: "a different W_k for every step k", one per direction too) start at
    zero, so that every candidate starts with the same score.
    """
    contexts = [ColumnGRUContext(context_units, name=f"context_{d}") if context == "gru" else
                PixelCNNContext(context_blocks, context_units, name=f"context_{d}") for d in directions]
    target_projection = None
    if target_dim is not None:
        target_projection = keras.layers.Dense(target_dim, use_bias=False, name="target_projection")
        target_projection.build((None, depth))
    predictors = [keras.layers.Dense(target_dim or depth, use_bias=False, kernel_initializer="zeros",
                                     name=f"predictor_{d}_k{k}") for d in directions for k in steps]
    for predictor in predictors:
        predictor.build((None, depth if context == "pixelcnn" else context_units))
    return contexts, target_projection, predictors


def build_context(context, depth, grid_size, direction):
    """Build a context network for the (rows, cols) grid of D = `depth` encodings turned for `direction`."""
    rows, cols = grid_size
    context.build((None, rows, cols, depth) if direction in ("down", "up") else (None, cols, rows, depth))
