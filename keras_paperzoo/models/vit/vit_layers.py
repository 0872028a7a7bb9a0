"""ViT-specific layers: the pooling of the final tokens and the small convolutional hybrid stem."""

import keras
from keras import ops

POOLINGS = ("token", "gap")


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class TokenPooling(keras.layers.Layer):
    """(B, T, D) -> (B, D): the class token's state, or the mean of the patch tokens.

    - "token": y = z_L^0 (eq. 4), the first token;
    - "gap": global average pooling over the tokens after the first
      `num_prefix_tokens` (App. D.3; ViT in GAP mode has no class token, so all tokens).
    """

    def __init__(self, mode="token", num_prefix_tokens=0, **kwargs):
        super().__init__(**kwargs)
        if mode not in POOLINGS:
            raise ValueError(f"Unknown pooling {mode!r}; expected 'token' (class token) or 'gap'.")
        self.mode = mode
        self.num_prefix_tokens = num_prefix_tokens

    def call(self, tokens):
        if self.mode == "token":
            return tokens[:, 0, :]
        return ops.mean(tokens[:, self.num_prefix_tokens :, :], axis=1)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], input_shape[2])

    def get_config(self):
        config = super().get_config()
        config.update({"mode": self.mode, "num_prefix_tokens": self.num_prefix_tokens})
        return config


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class ConvStem(keras.layers.Layer):
    """A ResNet root block as a small hybrid stem: image (B, H, W, C) -> feature map (B, H/4, W/4, filters).

    conv 7x7 stride 2 (no bias) -> GroupNorm(32) -> ReLU -> max-pool 3x3 stride 2, the
    root of the BiT ResNets the paper's hybrids use (BiT also standardises the conv
    weights, which this small stem does not). The paper's hybrid runs ResNet-50 stages
    on top (stage 4 output, or stages (3, 4, 9) for /16) and takes 1x1 patches of the
    result; that plugs in through `ViTBackbone(hybrid=<any feature-map model>)` once a
    ResNet backbone exists. Output stride 4, 'same' padding: H and W must be
    divisible by 4.
    """

    stride = 4

    def __init__(self, filters=64, **kwargs):
        super().__init__(**kwargs)
        self.filters = filters
        self.conv = keras.layers.Conv2D(
            filters, 7, strides=2, padding="same", use_bias=False, kernel_initializer="he_normal", name="conv"
        )
        self.norm = keras.layers.GroupNormalization(groups=min(32, filters), epsilon=1e-5, name="norm")
        self.pool = keras.layers.MaxPooling2D(3, strides=2, padding="same", name="pool")

    def build(self, input_shape):
        self.conv.build(input_shape)
        self.norm.build(self.conv.compute_output_shape(input_shape))

    def call(self, images):
        x = ops.relu(self.norm(self.conv(images)))
        return self.pool(x)

    def compute_output_shape(self, input_shape):
        def down(size):
            return None if size is None else -(-size // self.stride)

        return (input_shape[0], down(input_shape[1]), down(input_shape[2]), self.filters)

    def get_config(self):
        config = super().get_config()
        config["filters"] = self.filters
        return config
