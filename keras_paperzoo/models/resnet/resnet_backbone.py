"""ResNet backbone (He et al. 2016): ImageNet ResNet-18..152, CIFAR ResNet-20..1202 and
the paper's plain networks, with shortcut options A, B and C."""

import math
import numbers
import sys

import keras

from keras_paperzoo.models.backbone import Backbone
from keras_paperzoo.models.resnet.resnet_layers import (
    CONV_INITIALIZER,
    apply_basic_block,
    apply_bottleneck_block,
)
from keras_paperzoo.models.resnet.resnet_presets import RESNET_CIFAR_RECIPE, RESNET_IMAGENET_RECIPE, RESNET_PRESETS

BLOCK_TYPES = ("basic", "bottleneck")
SHORTCUTS = ("A", "B", "C")
STEMS = {
    # name: (default filters, total stride of the stem)
    "imagenet": (64, 4),  # 7x7/2 conv, BN, ReLU, 3x3/2 max pool (Table 1, conv1 + pool)
    "cifar": (16, 1),  # 3x3 conv, BN, ReLU (Sec. 4.2)
}
BOTTLENECK_EXPANSION = 4


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class ResNetBackbone(Backbone):
    """ResNet v1 feature extractor: a stem, then stages of residual blocks (He et al. 2016).

    [Deep Residual Learning for Image Recognition](https://arxiv.org/abs/1512.03385),
    CVPR 2016. Returns the last stage's feature map `(B, h, w, C)` without pooling (the
    paper's classifier is global average pooling + a linear layer; add it on top).

    Each stage halves the resolution (except the first) with stride 2 in its first block:
    in the first 3x3 conv of a basic block, and in the 3x3 conv of a bottleneck block.
    That bottleneck placement is torchvision's ("ResNet v1.5"), so torchvision weights
    load (`resnet_convert.py`); the paper's original Caffe models stride the first 1x1
    conv instead: `stride_in_1x1=True`. Every conv is followed by batch norm, and each
    block's ReLU comes after the addition of the shortcut.

    `pyramid_outputs` is a dict of the stage outputs (symbolic tensors of this model)
    keyed `"P{k}"` with `2**k` their stride: `"P2".."P5"` for the ImageNet nets and
    `"P0".."P2"` for the CIFAR nets, so `keras.Model(backbone.input,
    backbone.pyramid_outputs)` gives the feature pyramid for dense methods.

    Args:
        stage_blocks: list of ints. Blocks per stage (ResNet-18: `[2, 2, 2, 2]`; CIFAR
            ResNet-6n+2: `[n, n, n]`).
        stage_filters: list of ints, as long as `stage_blocks`. Filters of each stage's
            3x3 convs; a bottleneck stage outputs 4x as many channels.
        block_type: str. `"basic"` (two 3x3 convs) or `"bottleneck"` (1x1, 3x3, 1x1).
        residual: bool. `False` removes every shortcut: the paper's plain network.
        shortcut: str. Where the shortcut changes the shape (stride 2 or more channels):
            `"A"` subsamples and pads the new channels with zeros (no parameters), `"B"`
            projects with a 1x1 conv + BN; elsewhere both are the identity. `"C"`
            projects on every block. Ignored when `residual=False`.
        stem: str. `"imagenet"`: 7x7/2 conv, BN, ReLU, 3x3/2 max pool (stride 4);
            `"cifar"`: 3x3 conv, BN, ReLU (stride 1).
        stem_filters: int or None. Filters of the stem conv; `None` is the paper's (64 for
            `"imagenet"`, 16 for `"cifar"`).
        stride_in_1x1: bool. Bottleneck blocks only: put the stride in the first 1x1 conv
            (the original paper / Caffe) instead of the 3x3 conv (torchvision).
        image_shape: tuple `(height, width, channels)`, channels last; height and width may
            be `None`.
        bn_momentum: float. Keras batch-norm momentum (0.9 is PyTorch's 0.1).
        bn_epsilon: float. Batch-norm epsilon (PyTorch's 1e-5).

    Examples:

    ```python
    backbone = ResNetBackbone.from_preset("resnet20_cifar")
    backbone(np.zeros((2, 32, 32, 3))).shape  # (2, 8, 8, 64)
    classifier = keras.Sequential(
        [backbone, keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(10)]
    )

    tiny = ResNetBackbone(
        stage_blocks=[1, 1], stage_filters=[4, 8], stem="cifar", stem_filters=4,
        image_shape=(16, 16, 3),
    )
    features = keras.Model(tiny.input, tiny.pyramid_outputs)  # {"P0": 16x16x4, "P1": 8x8x8}
    ```
    """

    presets = RESNET_PRESETS

    def __init__(
        self,
        stage_blocks,
        stage_filters,
        block_type="basic",
        residual=True,
        shortcut="B",
        stem="imagenet",
        stem_filters=None,
        stride_in_1x1=False,
        image_shape=(224, 224, 3),
        bn_momentum=0.9,
        bn_epsilon=1e-5,
        **kwargs,
    ):
        _validate(stage_blocks, stage_filters, block_type, residual, shortcut, stem, stem_filters, stride_in_1x1,
                  image_shape, bn_momentum, bn_epsilon)
        stage_blocks = [int(b) for b in stage_blocks]
        stage_filters = [int(f) for f in stage_filters]
        image_shape = tuple(None if d is None else int(d) for d in image_shape)
        stem_width = STEMS[stem][0] if stem_filters is None else int(stem_filters)
        stem_stride = STEMS[stem][1]
        bn = dict(bn_momentum=bn_momentum, bn_epsilon=bn_epsilon)

        # === Layers ===
        # The blocks are functions of tensors (`resnet_layers.py`); each names its layers
        # `stage{s}_block{b}_*`.
        def block(x, filters, strides, name):
            common = dict(strides=strides, residual=residual, shortcut=shortcut, name=name, **bn)
            if block_type == "bottleneck":
                return apply_bottleneck_block(x, filters, stride_in_1x1=stride_in_1x1, **common)
            return apply_basic_block(x, filters, **common)

        # === Functional Model ===
        inputs = keras.Input(image_shape, name="images")
        if stem == "imagenet":
            x = keras.layers.ZeroPadding2D(3, name="stem_pad")(inputs)  # PyTorch's padding=3
            x = keras.layers.Conv2D(
                stem_width, 7, strides=2, use_bias=False, kernel_initializer=CONV_INITIALIZER,
                name="stem_conv",
            )(x)  # (B, H/2, W/2, 64)
        else:
            x = keras.layers.Conv2D(
                stem_width, 3, padding="same", use_bias=False,
                kernel_initializer=CONV_INITIALIZER, name="stem_conv",
            )(inputs)  # (B, H, W, 16)
        x = keras.layers.BatchNormalization(momentum=bn_momentum, epsilon=bn_epsilon, name="stem_bn")(x)
        x = keras.layers.ReLU(name="stem_relu")(x)
        if stem == "imagenet":
            # Zero padding equals PyTorch's -inf padding here: the inputs are ReLU outputs.
            x = keras.layers.ZeroPadding2D(1, name="stem_pool_pad")(x)
            x = keras.layers.MaxPooling2D(3, strides=2, name="stem_pool")(x)  # (B, H/4, W/4, 64)

        pyramid_outputs = {}
        level = int(math.log2(stem_stride))
        for s, (blocks, filters) in enumerate(zip(stage_blocks, stage_filters), start=1):
            for b in range(1, blocks + 1):
                strides = 2 if (s > 1 and b == 1) else 1  # conv3_1, conv4_1, conv5_1 (Table 1)
                x = block(x, filters, strides, name=f"stage{s}_block{b}")
            level += 1 if s > 1 else 0
            pyramid_outputs[f"P{level}"] = x  # (B, H / 2**level, W / 2**level, C_s)

        _allow_graph_depth(sum(stage_blocks))
        super().__init__(inputs=inputs, outputs=x, **kwargs)

        # === Config ===
        self.stage_blocks = stage_blocks
        self.stage_filters = stage_filters
        self.block_type = block_type
        self.residual = residual
        self.shortcut = shortcut
        self.stem = stem
        self.stem_filters = stem_filters
        self.stride_in_1x1 = stride_in_1x1
        self.image_shape = image_shape
        self.bn_momentum = bn_momentum
        self.bn_epsilon = bn_epsilon
        self.pyramid_outputs = pyramid_outputs

    def get_config(self):
        return {
            **super().get_config(),
            "stage_blocks": self.stage_blocks,
            "stage_filters": self.stage_filters,
            "block_type": self.block_type,
            "residual": self.residual,
            "shortcut": self.shortcut,
            "stem": self.stem,
            "stem_filters": self.stem_filters,
            "stride_in_1x1": self.stride_in_1x1,
            "image_shape": self.image_shape,
            "bn_momentum": self.bn_momentum,
            "bn_epsilon": self.bn_epsilon,
        }

    def classification_recipe(self, fine_tune=False):
        """The paper's training recipe, `ImageClassifier.compile()`'s default: CIFAR-10's
        (`RESNET_CIFAR_RECIPE`) for the CIFAR stem, else ImageNet's (`RESNET_IMAGENET_RECIPE`)."""
        return dict(RESNET_CIFAR_RECIPE if self.stem == "cifar" else RESNET_IMAGENET_RECIPE)


def _allow_graph_depth(num_blocks):
    """Raise Python's recursion limit to what Keras needs to walk a graph this deep.

    Keras's functional graph traversal recurses once per layer along the longest path
    (about 8 per basic block, 11 per bottleneck): ResNet-1202's 600 blocks need several
    thousand frames, above Python's default limit of 1000. The limit is only ever raised.
    """
    needed = 12 * num_blocks + 1000
    if sys.getrecursionlimit() < needed:
        sys.setrecursionlimit(needed)


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _validate(stage_blocks, stage_filters, block_type, residual, shortcut, stem, stem_filters, stride_in_1x1,
              image_shape, bn_momentum, bn_epsilon):
    """Check the constructor arguments; each message names the value and the rule."""
    for name, values in (("stage_blocks", stage_blocks), ("stage_filters", stage_filters)):
        if not isinstance(values, (list, tuple)) or not values:
            raise ValueError(f"{name} should be a non-empty list of ints; got {values!r}.")
        if not all(_is_int(v) and v >= 1 for v in values):
            raise ValueError(f"Every entry of {name} should be an int >= 1; got {list(values)}.")
    if len(stage_blocks) != len(stage_filters):
        raise ValueError(
            f"stage_blocks and stage_filters should have one entry per stage, so the same "
            f"length; got stage_blocks={list(stage_blocks)} ({len(stage_blocks)} stages) and "
            f"stage_filters={list(stage_filters)} ({len(stage_filters)} stages)."
        )
    if block_type not in BLOCK_TYPES:
        raise ValueError(f"block_type should be one of {BLOCK_TYPES}; got {block_type!r}.")
    if shortcut not in SHORTCUTS:
        raise ValueError(
            f"shortcut should be one of {SHORTCUTS} (A zero-padding, B projection where the "
            f"shape changes, C projection everywhere); got {shortcut!r}."
        )
    if stem not in STEMS:
        raise ValueError(f"stem should be one of {tuple(STEMS)}; got {stem!r}.")
    for name, value in (("residual", residual), ("stride_in_1x1", stride_in_1x1)):
        if not isinstance(value, bool):
            raise ValueError(f"{name} should be True or False; got {value!r}.")
    if stem_filters is not None and not (_is_int(stem_filters) and stem_filters >= 1):
        raise ValueError(f"stem_filters should be None or an int >= 1; got {stem_filters!r}.")
    if not (isinstance(bn_momentum, numbers.Real) and 0.0 <= bn_momentum < 1.0):
        raise ValueError(f"bn_momentum should be in [0, 1); got {bn_momentum!r}.")
    if not (isinstance(bn_epsilon, numbers.Real) and bn_epsilon > 0):
        raise ValueError(f"bn_epsilon should be > 0; got {bn_epsilon!r}.")

    if not isinstance(image_shape, (list, tuple)) or len(image_shape) != 3:
        raise ValueError(f"image_shape should be (height, width, channels); got {image_shape!r}.")
    height, width, channels = image_shape
    if not (_is_int(channels) and channels >= 1):
        raise ValueError(f"The channels of image_shape should be an int >= 1; got {image_shape!r}.")
    total_stride = STEMS[stem][1] * 2 ** (len(stage_blocks) - 1)
    for name, size in (("height", height), ("width", width)):
        if size is None:
            continue
        if not _is_int(size) or size < 1:
            raise ValueError(f"Input {name} should be None or an int >= 1; got {size!r}.")
        if size < total_stride:
            raise ValueError(
                f"Input {name} {size} should be at least the total stride {total_stride} "
                f"(stem {stem!r} with {len(stage_blocks)} stages); got image_shape={tuple(image_shape)}."
            )

    if residual and shortcut == "A":
        # Zero padding can add channels, never remove them.
        channels = STEMS[stem][0] if stem_filters is None else stem_filters
        expansion = BOTTLENECK_EXPANSION if block_type == "bottleneck" else 1
        for s, filters in enumerate(stage_filters, start=1):
            if expansion * filters < channels:
                raise ValueError(
                    f"Shortcut 'A' pads new channels with zeros and cannot reduce them: stage {s} "
                    f"goes from {channels} to {expansion * filters} channels. Use shortcut 'B' "
                    "or 'C', or non-decreasing widths."
                )
            channels = expansion * filters
