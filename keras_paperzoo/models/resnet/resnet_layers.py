"""ResNet's building blocks (He et al. 2016, Sec. 3 and Fig. 2, 3, 5).

- `apply_basic_block`: two 3x3 convs (ResNet-18/34 and the CIFAR nets, Fig. 5 left).
- `apply_bottleneck_block`: 1x1 reduce, 3x3, 1x1 expand x4 (ResNet-50/101/152, Fig. 5 right).
- the shortcut, in the paper's three options (Sec. 4.1, "Identity vs. Projection Shortcuts"):
  A zero-padding identity (`ZeroPadShortcut`), B projection only where the shape changes,
  C projection everywhere; or none at all for the plain networks.

Every conv is followed by batch norm (Sec. 3.4); the ReLU of a block comes after the
addition (Fig. 2: y = F(x, {W_i}) + x, then ReLU). Layer names follow
`stage{s}_block{b}_{conv1|bn1|...|shortcut_conv|shortcut_bn|add|out}` (both 1-indexed),
which `resnet_convert.py` maps from torchvision's `layer{s}.{b-1}.*`.

Convolutions with stride 2 are written as explicit `ZeroPadding2D(k // 2)` + a "valid"
conv: Keras's "same" padding pads a stride-2 conv on the bottom/right only, PyTorch pads
both sides, and torchvision weights only give the same numbers with PyTorch's padding.
"""

import keras

# torchvision's initialisation: He et al. 2015 normal with fan_out (kaiming_normal_,
# mode="fan_out", nonlinearity="relu"); the ResNet paper initialises "as in [13]".
CONV_INITIALIZER = {
    "class_name": "VarianceScaling",
    "config": {"scale": 2.0, "mode": "fan_out", "distribution": "untruncated_normal"},
}


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class ZeroPadShortcut(keras.layers.Layer):
    """The paper's option A shortcut: identity with stride-`strides` subsampling and zeros
    appended as the new channels (He et al. 2016, Sec. 4.1 and 4.2, CIFAR-10).

    `(B, H, W, C) -> (B, ceil(H / s), ceil(W / s), filters)`: `x[:, ::s, ::s, :]`
    followed by `filters - C` channels of zeros (as fb.resnet.torch's shortcut type A,
    which concatenates the subsampled input with a zero copy). Parameter-free.

    Args:
        filters: int. Number of output channels, at least the input's.
        strides: int. Spatial subsampling step.

    Example:

    ```python
    x = keras.ops.ones((1, 4, 4, 2))
    ZeroPadShortcut(filters=4, strides=2)(x).shape  # (1, 2, 2, 4)
    ```
    """

    def __init__(self, filters, strides=1, **kwargs):
        super().__init__(**kwargs)
        if int(filters) < 1 or int(strides) < 1:
            raise ValueError(
                f"ZeroPadShortcut needs filters >= 1 and strides >= 1; got filters={filters}, "
                f"strides={strides}."
            )
        self.filters = int(filters)
        self.strides = int(strides)

    def build(self, input_shape):
        channels = input_shape[-1]
        if channels is not None and channels > self.filters:
            raise ValueError(
                f"Option A shortcut pads channels with zeros and cannot reduce them: input has "
                f"{channels} channels, filters={self.filters}."
            )

    def call(self, x):
        s = self.strides
        x = x[:, ::s, ::s, :]  # (B, ceil(H / s), ceil(W / s), C)
        extra = self.filters - x.shape[-1]
        if extra:
            x = keras.ops.pad(x, [[0, 0], [0, 0], [0, 0], [0, extra]])  # new channels are 0
        return x

    def compute_output_shape(self, input_shape):
        batch, h, w, _ = input_shape
        s = self.strides
        h = None if h is None else -(-h // s)
        w = None if w is None else -(-w // s)
        return (batch, h, w, self.filters)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "strides": self.strides}


def _conv(x, filters, kernel_size, strides, name):
    """A bias-free conv with PyTorch's symmetric padding `kernel_size // 2`."""
    if strides > 1 and kernel_size > 1:
        x = keras.layers.ZeroPadding2D(kernel_size // 2, name=f"{name}_pad")(x)
        padding = "valid"
    else:
        padding = "same"
    return keras.layers.Conv2D(
        filters,
        kernel_size,
        strides=strides,
        padding=padding,
        use_bias=False,  # every conv is followed by BN, whose beta is the bias
        kernel_initializer=CONV_INITIALIZER,
        name=name,
    )(x)


def _bn(x, bn_momentum, bn_epsilon, name):
    return keras.layers.BatchNormalization(momentum=bn_momentum, epsilon=bn_epsilon, name=name)(x)


def apply_shortcut(x, filters, strides, shortcut, bn_momentum, bn_epsilon, name):
    """The shortcut branch of a residual block, for options "A", "B" and "C".

    The shape changes when `strides > 1` or the channels differ; then A subsamples and
    zero-pads, B and C project with a strided 1x1 conv + BN (Eq. 2, y = F(x) + W_s x).
    Where the shape is unchanged, A and B are the identity and C projects.
    """
    changes_shape = strides > 1 or x.shape[-1] != filters
    if shortcut == "C" or (shortcut == "B" and changes_shape):
        x = _conv(x, filters, 1, strides, name=f"{name}_shortcut_conv")
        return _bn(x, bn_momentum, bn_epsilon, name=f"{name}_shortcut_bn")
    if shortcut == "A" and changes_shape:
        return ZeroPadShortcut(filters, strides, name=f"{name}_shortcut_pad")(x)
    return x


def _finish_block(x, inputs, out_filters, strides, residual, shortcut, bn_momentum, bn_epsilon, name):
    """Add the shortcut (residual nets only), then the block's ReLU (after the addition)."""
    if residual:
        s = apply_shortcut(inputs, out_filters, strides, shortcut, bn_momentum, bn_epsilon, name)
        x = keras.layers.Add(name=f"{name}_add")([x, s])
    return keras.layers.ReLU(name=f"{name}_out")(x)


def apply_basic_block(
    x,
    filters,
    strides=1,
    residual=True,
    shortcut="B",
    bn_momentum=0.9,
    bn_epsilon=1e-5,
    name="block",
):
    """Basic block: [3x3 conv, BN, ReLU, 3x3 conv, BN] + shortcut, ReLU (Fig. 5 left).

    `(B, H, W, C) -> (B, ceil(H / strides), ceil(W / strides), filters)`; the first conv
    carries the stride. `residual=False` drops the shortcut (the paper's plain network).
    """
    inputs = x
    x = _conv(x, filters, 3, strides, name=f"{name}_conv1")
    x = _bn(x, bn_momentum, bn_epsilon, name=f"{name}_bn1")
    x = keras.layers.ReLU(name=f"{name}_relu1")(x)
    x = _conv(x, filters, 3, 1, name=f"{name}_conv2")
    x = _bn(x, bn_momentum, bn_epsilon, name=f"{name}_bn2")
    return _finish_block(x, inputs, filters, strides, residual, shortcut, bn_momentum, bn_epsilon, name)


def apply_bottleneck_block(
    x,
    filters,
    strides=1,
    residual=True,
    shortcut="B",
    stride_in_1x1=False,
    bn_momentum=0.9,
    bn_epsilon=1e-5,
    expansion=4,
    name="block",
):
    """Bottleneck block: [1x1 filters, 3x3 filters, 1x1 4*filters] each + BN, + shortcut, ReLU.

    `(B, H, W, C) -> (B, ceil(H / strides), ceil(W / strides), expansion * filters)`
    (Fig. 5 right). The stride sits in the 3x3 conv (torchvision, "ResNet v1.5") unless
    `stride_in_1x1=True` (the paper's original Caffe models).
    """
    inputs = x
    s1, s2 = (strides, 1) if stride_in_1x1 else (1, strides)
    x = _conv(x, filters, 1, s1, name=f"{name}_conv1")
    x = _bn(x, bn_momentum, bn_epsilon, name=f"{name}_bn1")
    x = keras.layers.ReLU(name=f"{name}_relu1")(x)
    x = _conv(x, filters, 3, s2, name=f"{name}_conv2")
    x = _bn(x, bn_momentum, bn_epsilon, name=f"{name}_bn2")
    x = keras.layers.ReLU(name=f"{name}_relu2")(x)
    x = _conv(x, expansion * filters, 1, 1, name=f"{name}_conv3")
    x = _bn(x, bn_momentum, bn_epsilon, name=f"{name}_bn3")
    return _finish_block(
        x, inputs, expansion * filters, strides, residual, shortcut, bn_momentum, bn_epsilon, name
    )
