"""VGG: Simonyan and Zisserman 2015, "Very Deep Convolutional Networks for Large-Scale
Image Recognition".

https://arxiv.org/abs/1409.1556
"""

import keras

from keras_paperzoo.layers.local_response_normalization import LocalResponseNormalization
from keras_paperzoo.models.backbone import Backbone, check_image_shape, check_positive_ints
from keras_paperzoo.models.vgg.vgg_presets import VGG_CLASSIFICATION_RECIPE, VGG_CONFIGURATIONS, VGG_PRESETS

NUM_POOLINGS = 5  # one 2x2/2 max pooling after each of the five stages
MIN_IMAGE_SIZE = 2**NUM_POOLINGS  # 32: the fifth pooling needs a 2x2 map


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class VGGBackbone(Backbone):
    """The VGG feature extractor of configurations A-E, up to the 4096-d fc7 feature.

    [Simonyan & Zisserman 2015](https://arxiv.org/abs/1409.1556), Sec. 2.1-2.2 and
    Table 1, channels-last: five stages of 3x3 convolutions (stride 1, padding 1, ReLU)
    with 64, 128, 256, 512, 512 channels, each stage ending in a 2x2 max pooling with
    stride 2 (224 -> 7), then fc6 and fc7 of 4096 units with ReLU and dropout 0.5.

    | configuration | convolutions per stage | weight layers |
    |---|---|---|
    | A (VGG-11) | 1, 1, 2, 2, 2 | 11 |
    | A-LRN | as A, with local response normalization after the first convolution | 11 |
    | B (VGG-13) | 2, 2, 2, 2, 2 | 13 |
    | C | 2, 2, 3, 3, 3, the third of stages 3-5 being 1x1 | 16 |
    | D (VGG-16) | 2, 2, 3, 3, 3 | 16 |
    | E (VGG-19) | 2, 2, 4, 4, 4 | 19 |

    The output is fc7's feature (after ReLU and dropout); fc8 (1000-way) and the softmax
    belong to the classifier head, and `ImageClassifier(backbone, 1000)` is the paper's
    network (VGG-16: 138,357,544 parameters). With `include_fc=False` the output is the
    pool5 map (7x7x512 for 224x224 images).

    Notes:
    - A-LRN's normalization uses AlexNet's parameters (Sec. 2.1: k=2, n=5, alpha=1e-4,
      beta=0.75, the sum not divided by n).
    - Initialisation: the paper trained A from N(0, 1e-2) weights and zero biases and
      initialised the deeper nets' first four convolutions and three fully connected
      layers from A; it adds (Sec. 3.1) that the Glorot & Bengio 2010 initialisation
      trains every depth from scratch. That is the default here (Keras's
      `glorot_uniform`, zero biases).
    - fc6 takes the flattened pool5 map in (height, width, channel) order; for images
      other than 224x224 its input size changes with the map (no adaptive pooling).
    - `batch_norm=True` adds batch normalization between each convolution and its ReLU,
      as torchvision's `vgg*_bn` (not in the paper; epsilon 1e-5 and momentum 0.9, i.e.
      PyTorch's defaults).

    Args:
        configuration: one of "A", "A-LRN", "B", "C", "D", "E" (Table 1).
        image_shape: (height, width, channels), at least 32x32 for the five poolings.
            Height and width may be None when `include_fc=False`.
        filters: five ints, the channels of the five stages (64, 128, 256, 512, 512).
        fc_units: ints, the widths of the hidden fully connected layers (4096, 4096).
        batch_norm: bool, batch normalization after every convolution.
        dropout: float, the drop probability after fc6 and fc7 (0.5, Sec. 3.1).
        include_fc: bool, end with fc7 (True) or with the pool5 map (False).

    Example:

    ```python
    import numpy as np
    from keras_paperzoo.models.vgg import VGGBackbone

    backbone = VGGBackbone.from_preset("vgg16")
    backbone.output_shape  # (None, 4096)
    backbone.get_layer("block5_pool").output.shape  # (None, 7, 7, 512)

    small = VGGBackbone("A", image_shape=(32, 32, 3), filters=(4, 8, 8, 16, 16), fc_units=(32, 32))
    small(np.zeros((2, 32, 32, 3), "float32")).shape  # (2, 32)
    ```
    """

    presets = VGG_PRESETS

    def __init__(
        self,
        configuration="D",
        image_shape=(224, 224, 3),
        filters=(64, 128, 256, 512, 512),
        fc_units=(4096, 4096),
        batch_norm=False,
        dropout=0.5,
        include_fc=True,
        **kwargs,
    ):
        if configuration not in VGG_CONFIGURATIONS:
            raise ValueError(
                f"Unknown VGG configuration {configuration!r}; Table 1 has "
                f"{', '.join(repr(c) for c in VGG_CONFIGURATIONS)}."
            )
        filters = check_positive_ints("VGGBackbone", "filters", filters, length=NUM_POOLINGS)
        fc_units = check_positive_ints("VGGBackbone", "fc_units", fc_units)
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout < 1:
            raise ValueError(f"VGGBackbone dropout must be a number in [0, 1); got {dropout!r}.")
        image_shape = check_image_shape(
            "VGGBackbone", image_shape, include_fc, MIN_IMAGE_SIZE, "the five 2x2 max-poolings (stride 2)"
        )

        # === Layers ===
        stages = []  # per stage: the layers in order, ending with the pooling
        table = VGG_CONFIGURATIONS[configuration]
        for stage, (kernel_sizes, width) in enumerate(zip(table, filters), start=1):
            layers = []
            for i, kernel_size in enumerate(kernel_sizes, start=1):
                name = f"block{stage}_conv{i}"
                layers.append(
                    keras.layers.Conv2D(
                        width,
                        kernel_size,
                        padding="same",  # pad 1 for 3x3, none for 1x1: the size is kept
                        activation=None if batch_norm else "relu",
                        name=name,
                    )
                )
                if batch_norm:
                    layers.append(
                        keras.layers.BatchNormalization(epsilon=1e-5, momentum=0.9, name=f"{name}_bn")
                    )
                    layers.append(keras.layers.ReLU(name=f"{name}_relu"))
                if configuration == "A-LRN" and stage == 1 and i == 1:
                    layers.append(
                        LocalResponseNormalization(size=5, k=2.0, alpha=1e-4, beta=0.75, name="block1_lrn")
                    )
            layers.append(keras.layers.MaxPooling2D(2, strides=2, name=f"block{stage}_pool"))
            stages.append(layers)
        dense_layers = [
            (
                keras.layers.Dense(units, activation="relu", name=f"fc{6 + i}"),
                keras.layers.Dropout(dropout, name=f"fc{6 + i}_dropout"),
            )
            for i, units in enumerate(fc_units if include_fc else ())
        ]

        # === Functional Model ===
        images = keras.Input(image_shape, name="images")
        x = images  # (224, 224, 3)
        for layers in stages:
            for layer in layers:
                x = layer(x)  # stage s ends at (224 / 2^s, 224 / 2^s, filters[s - 1])
        if include_fc:
            x = keras.layers.Flatten(name="flatten")(x)  # (7 * 7 * 512,) = (25088,)
            for dense, drop in dense_layers:
                x = drop(dense(x))  # (4096,)
        super().__init__(inputs=images, outputs=x, **kwargs)

        # === Config ===
        self.configuration = configuration
        self.image_shape = image_shape
        self.filters = filters
        self.fc_units = fc_units
        self.batch_norm = bool(batch_norm)
        self.dropout = dropout
        self.include_fc = bool(include_fc)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "configuration": self.configuration,
                "image_shape": self.image_shape,
                "filters": self.filters,
                "fc_units": self.fc_units,
                "batch_norm": self.batch_norm,
                "dropout": self.dropout,
                "include_fc": self.include_fc,
            }
        )
        return config

    def classification_recipe(self, fine_tune=False):
        """The paper's training recipe, `ImageClassifier.compile()`'s default (`VGG_CLASSIFICATION_RECIPE`)."""
        return dict(VGG_CLASSIFICATION_RECIPE)
