"""Images as sequences of patch tokens (ViT, Dosovitskiy et al. 2021, Sec. 3.1; reused by MAE, BEiT).

- `PatchEmbedding`: the linear projection E of flattened P x P patches, written as a
  convolution with kernel = stride = P ('VALID'), as the official code does; the two are
  the same map (`patchify(x) @ kernel.reshape(-1, D) + bias`).
- `ClassToken`: the learnable [class] embedding x_class prepended to the patch tokens.
- `patchify` / `unpatchify`: images <-> (B, N, P*P*C) in (row, column, channel) order,
  the order of the convolution kernel flattened (MAE's pixel targets, filter PCA).
"""

import keras
from keras import ops


def _pair(value, name):
    pair = (value, value) if isinstance(value, int) and not isinstance(value, bool) else tuple(value)
    if len(pair) != 2 or any(not isinstance(v, int) or isinstance(v, bool) or v < 1 for v in pair):
        raise ValueError(f"{name} must be a positive int or a pair of positive ints; got {value!r}.")
    return pair


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class PatchEmbedding(keras.layers.Layer):
    """Cut (B, H, W, C) images into P x P patches and project each to `hidden_dim`.

    z = [x_p^1 E; ...; x_p^N E] with E in R^{(P^2 C) x D} (ViT eq. 1), N = HW / P^2 in
    raster order (row by row). Written as `Conv2D(hidden_dim, P, strides=P, "valid")`
    then a reshape to (B, N, D), like the official code; its kernel (P, P, C, D) is
    HWIO, a PyTorch `Conv2d` weight (D, C, P, P) transposed by (2, 3, 1, 0). The
    default initializer is the official code's (Flax `Conv`'s LeCun normal).

    Args:
        patch_size: int or (int, int), patch height and width P.
        hidden_dim: int, the model width D.
        use_bias: bool, whether the projection has a bias (the paper's does).
        kernel_initializer, bias_initializer: as for `Conv2D`.

    Example:

    ```python
    layer = PatchEmbedding(patch_size=16, hidden_dim=768)
    layer(keras.ops.ones((2, 224, 224, 3))).shape  # (2, 196, 768)
    ```
    """

    def __init__(
        self,
        patch_size,
        hidden_dim,
        use_bias=True,
        kernel_initializer="lecun_normal",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.patch_size = _pair(patch_size, "patch_size")
        if not isinstance(hidden_dim, int) or hidden_dim < 1:
            raise ValueError(f"hidden_dim must be a positive int; got {hidden_dim!r}.")
        self.hidden_dim = hidden_dim
        self.use_bias = use_bias
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.projection = keras.layers.Conv2D(
            hidden_dim,
            self.patch_size,
            strides=self.patch_size,
            padding="valid",
            use_bias=use_bias,
            kernel_initializer=self.kernel_initializer,
            bias_initializer=self.bias_initializer,
            dtype=self.dtype_policy,
            name="projection",
        )
        self.grid_size = None

    def build(self, input_shape):
        if len(input_shape) != 4:
            raise ValueError(f"PatchEmbedding expects (batch, height, width, channels); got {input_shape}.")
        height, width = input_shape[1], input_shape[2]
        ph, pw = self.patch_size
        if height is None or width is None:
            raise ValueError(f"PatchEmbedding needs a known height and width; got {input_shape}.")
        if height % ph:
            raise ValueError(f"Input height {height} should be divisible by patch size {ph}.")
        if width % pw:
            raise ValueError(f"Input width {width} should be divisible by patch size {pw}.")
        self.grid_size = (height // ph, width // pw)
        self.projection.build(input_shape)

    def call(self, images):
        x = self.projection(images)  # (B, H/P, W/P, D)
        gh, gw = self.grid_size
        return ops.reshape(x, (-1, gh * gw, self.hidden_dim))  # (B, N, D), raster order

    def compute_output_shape(self, input_shape):
        ph, pw = self.patch_size
        return (input_shape[0], (input_shape[1] // ph) * (input_shape[2] // pw), self.hidden_dim)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "patch_size": self.patch_size,
                "hidden_dim": self.hidden_dim,
                "use_bias": self.use_bias,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "bias_initializer": keras.initializers.serialize(self.bias_initializer),
            }
        )
        return config


class LearnedToken(keras.layers.Layer):
    """Base of the layers that hold one learnable token vector, a (1, 1, D) weight named "token".

    ViT's class token (`ClassToken`) and BEiT's [M] embedding (`MaskEmbedding`): D is the
    input's last axis; the config holds the initializer.
    """

    def __init__(self, initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        self.initializer = keras.initializers.get(initializer)

    def build(self, input_shape):
        self.token = self.add_weight(
            shape=(1, 1, input_shape[-1]), initializer=self.initializer, name="token"
        )

    def get_config(self):
        config = super().get_config()
        config["initializer"] = keras.initializers.serialize(self.initializer)
        return config


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class ClassToken(LearnedToken):
    """Prepend one learnable token: (B, N, D) -> (B, 1 + N, D).

    ViT's x_class (borrowed from BERT's [CLS]); its final state z_L^0 is the image
    representation. Zero-initialised as in the official code; the weight has timm's
    `cls_token` shape (1, 1, D).

    Example:

    ```python
    ClassToken()(keras.ops.ones((2, 196, 768))).shape  # (2, 197, 768)
    ```
    """

    def call(self, tokens):
        token = ops.zeros_like(tokens[:, :1, :]) + ops.cast(self.token, tokens.dtype)  # (B, 1, D)
        return ops.concatenate([token, tokens], axis=1)

    def compute_output_shape(self, input_shape):
        length = None if input_shape[1] is None else input_shape[1] + 1
        return (input_shape[0], length, input_shape[2])


def patchify(images, patch_size):
    """(B, H, W, C) -> (B, N, P_h * P_w * C), patches in raster order, pixels (row, col, channel).

    The flattening order is that of a `PatchEmbedding` kernel reshaped to (-1, D), so
    `PatchEmbedding(x) == patchify(x) @ kernel.reshape(-1, D) + bias`.
    """
    ph, pw = _pair(patch_size, "patch_size")
    _, height, width, channels = images.shape
    if height % ph or width % pw:
        raise ValueError(f"Image size {height}x{width} should be divisible by patch size {ph}x{pw}.")
    gh, gw = height // ph, width // pw
    x = ops.reshape(images, (-1, gh, ph, gw, pw, channels))
    x = ops.transpose(x, (0, 1, 3, 2, 4, 5))  # (B, gh, gw, ph, pw, C)
    return ops.reshape(x, (-1, gh * gw, ph * pw * channels))


def unpatchify(patches, patch_size, grid_size, channels):
    """Inverse of `patchify`: (B, N, P_h * P_w * C) -> (B, gh * P_h, gw * P_w, C)."""
    ph, pw = _pair(patch_size, "patch_size")
    gh, gw = _pair(grid_size, "grid_size")
    x = ops.reshape(patches, (-1, gh, gw, ph, pw, channels))
    x = ops.transpose(x, (0, 1, 3, 2, 4, 5))  # (B, gh, ph, gw, pw, C)
    return ops.reshape(x, (-1, gh * ph, gw * pw, channels))
