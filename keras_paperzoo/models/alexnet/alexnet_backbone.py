"""AlexNet: Krizhevsky, Sutskever and Hinton 2012, "ImageNet Classification with Deep
Convolutional Neural Networks".

https://papers.nips.cc/paper/4824-imagenet-classification-with-deep-convolutional-neural-networks
"""

import keras

from keras_paperzoo.layers.local_response_normalization import LocalResponseNormalization
from keras_paperzoo.models.alexnet.alexnet_presets import ALEXNET_CLASSIFICATION_RECIPE, ALEXNET_PRESETS
from keras_paperzoo.models.backbone import Backbone, check_image_shape, check_positive_ints

# Sec. 3.5 and Figure 2: (kernel size, stride, padding) of conv1..conv5.
CONV_KERNELS = (11, 5, 3, 3, 3)
CONV_STRIDES = (4, 1, 1, 1, 1)
# The convolutions whose kernels see only their own tower's half of the layer below (Sec. 3.2,
# Figure 2): conv2, conv4 and conv5. conv3 and the fully connected layers see both towers.
TOWER_SPLIT_CONVS = (2, 4, 5)
# Sec. 5: "We initialized the neuron biases in the second, fourth, and fifth convolutional
# layers, as well as in the fully-connected hidden layers, with the constant 1."
BIAS_ONE_CONVS = (2, 4, 5)
POOL_STRIDE = 2  # Sec. 3.4: s = 2 with z = 3 ("overlapping pooling")


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class AlexNetBackbone(Backbone):
    """The AlexNet feature extractor, up to the 4096-d fc7 feature.

    [Krizhevsky et al. 2012](https://papers.nips.cc/paper/4824) (Sec. 3.5, Figure 2),
    channels-last:

    | layer | what | output for 227x227x3 |
    |---|---|---|
    | conv1 | 96 kernels 11x11, stride 4, no padding, ReLU, LRN, max pool 3x3/2 | 55x55x96 -> 27x27x96 |
    | conv2 | 256 kernels 5x5, pad 2, two towers, ReLU, LRN, max pool 3x3/2 | 27x27x256 -> 13x13x256 |
    | conv3 | 384 kernels 3x3, pad 1, ReLU (sees both towers) | 13x13x384 |
    | conv4 | 384 kernels 3x3, pad 1, two towers, ReLU | 13x13x384 |
    | conv5 | 256 kernels 3x3, pad 1, two towers, ReLU, max pool 3x3/2 | 13x13x256 -> 6x6x256 |
    | fc6, fc7 | 4096 units, ReLU, dropout 0.5 | 4096 |

    The output is fc7's feature (after ReLU and dropout); the 1000-way fc8 and its
    softmax belong to the classifier head (`ImageClassifier(backbone, 1000)` is the
    paper's network: 60,965,224 parameters). With `include_fc=False` the output is
    the pooled conv5 map (6x6x256 for 227x227 images).

    Faithful to the paper, with two notes:
    - The paper says 224x224 inputs, but an 11x11 kernel with stride 4 and no padding
      makes 55x55 maps (as the paper's Figure 2 shows) only from 227x227; 227 is the
      default.
    - `two_towers=True` keeps the two-GPU connectivity as grouped convolutions
      (`groups=2`: the first half of a layer's kernels sees only the first half of the
      channels below). Local response normalization runs over all channels of the
      layer, as the paper's formula writes it (N = "the total number of kernels in the
      layer").

    Initialisation (Sec. 5): weights from N(0, 0.01^2); biases 1 in conv2, conv4, conv5,
    fc6 and fc7, 0 in conv1 and conv3. The fixed 0.01 suits the paper's widths: in a narrow
    net the input's share of each activation shrinks layer by layer until conv4's unit bias
    is most of it, and the net sits at chance (a quarter of the widths on CIFAR-10 did not
    leave chance in 391 updates). `kernel_initializer="he_normal"` scales each layer's weights
    to its fan-in instead (He et al. 2015), the biases staying the paper's.

    Args:
        image_shape: (height, width, channels), at least 67x67 for the three 3x3
            poolings (39x39 with `pool_size=2`). Height and width may be None when
            `include_fc=False`.
        filters: five ints, the kernels of conv1..conv5 (the paper's 96, 256, 384,
            384, 256); even when `two_towers=True`.
        fc_units: ints, the widths of the hidden fully connected layers (the paper's
            4096, 4096).
        two_towers: bool, split conv2, conv4 and conv5 into two towers (the paper's
            two GPUs) or connect them to every channel below.
        response_normalization: bool, apply local response normalization (k=2, n=5,
            alpha=1e-4, beta=0.75) after conv1's and conv2's ReLU; False is the
            ablation of Sec. 3.3.
        pool_size: int, the pooling window z with stride 2; 3 is the paper's
            overlapping pooling, 2 the non-overlapping ablation of Sec. 3.4.
        dropout: float, the drop probability after fc6 and fc7 (0.5, Sec. 4.2).
        include_fc: bool, end with fc7 (True) or with the pooled conv5 map (False).
        kernel_initializer: None for the paper's N(0, 0.01^2), or any Keras initializer
            (a name such as "he_normal", or a config) for every convolution and fc layer.

    Example:

    ```python
    import numpy as np
    from keras_paperzoo.models.alexnet import AlexNetBackbone

    backbone = AlexNetBackbone.from_preset("alexnet")
    backbone.output_shape  # (None, 4096)
    backbone.get_layer("conv1").output.shape  # (None, 55, 55, 96)

    small = AlexNetBackbone(image_shape=(67, 67, 3), filters=(8, 16, 16, 16, 8), fc_units=(32, 32))
    small(np.zeros((2, 67, 67, 3), "float32")).shape  # (2, 32)
    ```
    """

    presets = ALEXNET_PRESETS

    def __init__(
        self,
        image_shape=(227, 227, 3),
        filters=(96, 256, 384, 384, 256),
        fc_units=(4096, 4096),
        two_towers=True,
        response_normalization=True,
        pool_size=3,
        dropout=0.5,
        include_fc=True,
        kernel_initializer=None,
        **kwargs,
    ):
        filters = check_positive_ints("AlexNetBackbone", "filters", filters, length=5)
        fc_units = check_positive_ints("AlexNetBackbone", "fc_units", fc_units)
        if two_towers and any(f % 2 for f in filters):
            raise ValueError(
                "AlexNetBackbone with two_towers=True splits each layer's kernels between "
                f"two towers, so every entry of filters must be even; got filters={filters}."
            )
        if not isinstance(pool_size, int) or isinstance(pool_size, bool) or pool_size < 2:
            raise ValueError(
                "AlexNetBackbone pool_size (the paper's z, with stride 2) must be an int >= 2; "
                f"got {pool_size!r}."
            )
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout < 1:
            raise ValueError(f"AlexNetBackbone dropout must be a number in [0, 1); got {dropout!r}.")
        image_shape = check_image_shape(
            "AlexNetBackbone", image_shape, include_fc, _min_image_size(pool_size),
            f"conv1 (11x11, stride 4) and the three {pool_size}x{pool_size} max-poolings (stride 2)",
        )

        if kernel_initializer is not None:
            try:
                kernel_initializer = keras.initializers.serialize(keras.initializers.get(kernel_initializer))
            except (ValueError, TypeError) as err:
                raise ValueError(
                    "AlexNetBackbone kernel_initializer must be None (the paper's N(0, 0.01^2)) or a Keras "
                    f"initializer; got {kernel_initializer!r} ({err})."
                ) from None

        # === Layers ===
        def weight_init():  # a new initializer per layer: an unseeded one repeats its draws
            if kernel_initializer is None:
                return keras.initializers.RandomNormal(mean=0.0, stddev=0.01)
            return keras.initializers.deserialize(kernel_initializer)

        def bias_init(one):
            return keras.initializers.Constant(1.0) if one else "zeros"

        convs = []
        for index, (units, kernel, stride) in enumerate(zip(filters, CONV_KERNELS, CONV_STRIDES), start=1):
            convs.append(
                keras.layers.Conv2D(
                    units,
                    kernel,
                    strides=stride,
                    padding="valid" if index == 1 else "same",  # conv2: pad 2, conv3-5: pad 1
                    groups=2 if two_towers and index in TOWER_SPLIT_CONVS else 1,
                    activation="relu",
                    kernel_initializer=weight_init(),
                    bias_initializer=bias_init(index in BIAS_ONE_CONVS),
                    name=f"conv{index}",
                )
            )
        norms = {
            index: LocalResponseNormalization(size=5, k=2.0, alpha=1e-4, beta=0.75, name=f"norm{index}")
            for index in (1, 2)
            if response_normalization
        }
        pools = {
            index: keras.layers.MaxPooling2D(pool_size, strides=POOL_STRIDE, name=f"pool{index}")
            for index in (1, 2, 5)
        }
        dense_layers = [
            (
                keras.layers.Dense(
                    units,
                    activation="relu",
                    kernel_initializer=weight_init(),
                    bias_initializer=bias_init(True),
                    name=f"fc{6 + i}",
                ),
                keras.layers.Dropout(dropout, name=f"fc{6 + i}_dropout"),
            )
            for i, units in enumerate(fc_units if include_fc else ())
        ]

        # === Functional Model ===
        images = keras.Input(image_shape, name="images")
        x = images
        for index, conv in enumerate(convs, start=1):
            x = conv(x)  # conv1: (55, 55, 96); conv2: (27, 27, 256); conv3-5: (13, 13, *)
            if index in norms:
                x = norms[index](x)
            if index in pools:
                x = pools[index](x)  # pool1: (27, 27, 96); pool2: (13, 13, 256); pool5: (6, 6, 256)
        if include_fc:
            x = keras.layers.Flatten(name="flatten")(x)  # (9216,)
            for dense, drop in dense_layers:
                x = drop(dense(x))  # (4096,)
        super().__init__(inputs=images, outputs=x, **kwargs)

        # === Config ===
        self.image_shape = image_shape
        self.filters = filters
        self.fc_units = fc_units
        self.two_towers = bool(two_towers)
        self.response_normalization = bool(response_normalization)
        self.pool_size = pool_size
        self.dropout = dropout
        self.include_fc = bool(include_fc)
        self.kernel_initializer = kernel_initializer

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "image_shape": self.image_shape,
                "filters": self.filters,
                "fc_units": self.fc_units,
                "two_towers": self.two_towers,
                "response_normalization": self.response_normalization,
                "pool_size": self.pool_size,
                "dropout": self.dropout,
                "include_fc": self.include_fc,
                "kernel_initializer": self.kernel_initializer,
            }
        )
        return config

    def classification_recipe(self, fine_tune=False):
        """The paper's training recipe, `ImageClassifier.compile()`'s default (`ALEXNET_CLASSIFICATION_RECIPE`)."""
        return dict(ALEXNET_CLASSIFICATION_RECIPE)


def _feature_map_size(size, pool_size):
    """Height (or width) of pool5 for an image of `size` pixels; 0 when a layer has no room."""
    size = (size - CONV_KERNELS[0]) // CONV_STRIDES[0] + 1 if size >= CONV_KERNELS[0] else 0  # conv1
    for _ in (1, 2, 5):  # conv2-conv5 keep the size ("same" padding); the three poolings shrink it
        size = (size - pool_size) // POOL_STRIDE + 1 if size >= pool_size else 0
    return size


def _min_image_size(pool_size):
    size = CONV_KERNELS[0]
    while _feature_map_size(size, pool_size) < 1:
        size += 1
    return size  # 67 for pool_size 3, 39 for pool_size 2
