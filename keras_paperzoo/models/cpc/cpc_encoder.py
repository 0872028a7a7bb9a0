"""CPC's encoders g_enc: a pre-activation ResNet for image patches, strided 1-D convolutions for audio.

- `CPCResNet`: ResNet v2 (He et al. 2016, "Identity Mappings in Deep Residual
  Networks": batch norm / ReLU before each convolution) with bottleneck blocks
  and a choice of normalisation. CPC v1 (van den Oord et al. 2018, Sec. 3.2)
  encodes each 64 x 64 patch with "a ResNet v2 101", using "the outputs from the
  third residual block" (the first three stacks, 1024-d), and "did not use
  Batch-Norm"; CPC v2 (Henaff et al. 2019) replaces batch norm with layer norm
  and widens the third stack to 46 blocks of 4096-d outputs and 512-d
  bottlenecks (ResNet-161).
- `StridedConvEncoder`: v1's audio encoder (Sec. 3.1): "five convolutional
  layers with strides [5, 4, 2, 2, 2], filter-sizes [10, 8, 4, 4, 4] and 512
  hidden units with ReLU activations", a downsampling of 160 (one vector per
  10 ms of 16 kHz audio).
"""

import keras

from keras_paperzoo.models.backbone import Backbone, check_positive_ints
from keras_paperzoo.models.cpc.cpc_presets import CPC_RESNET_PRESETS, STRIDED_CONV_PRESETS

NORMALIZATIONS = (None, "batch", "layer")
STEMS = ("imagenet", "cifar")


def _norm(kind, name):
    """The normalisation layer of a block, or None (v1: none)."""
    if kind == "batch":
        return keras.layers.BatchNormalization(momentum=0.9, epsilon=1e-5, name=name)
    if kind == "layer":
        # Layer norm over each patch's whole (h, w, C) map with a per-channel scale and shift:
        # one group of GroupNormalization (lightning-bolts' CPC v2 encoder uses torch's
        # LayerNorm over (C, h, w), whose scale is per element instead).
        return keras.layers.GroupNormalization(groups=1, epsilon=1e-5, name=name)
    return None


def _norm_relu(x, kind, name):
    layer = _norm(kind, f"{name}_norm")
    x = layer(x) if layer is not None else x
    return keras.layers.ReLU(name=f"{name}_relu")(x)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class CPCResNet(Backbone):
    """A pre-activation (v2) bottleneck ResNet patch encoder for CPC, with no, batch or layer normalisation.

    Stem (`"imagenet"`: 7 x 7 / 2 convolution and 3 x 3 / 2 max pool, without norm
    or ReLU, as ResNet v2's root; `"cifar"`: one 3 x 3 convolution), then stages of
    bottleneck blocks

        x -> [norm] -> relu -> conv1x1(f) -> [norm] -> relu -> conv3x3(f, stride) -> [norm] -> relu -> conv1x1(out)

    added to the input (or to a 1 x 1 / stride projection of the pre-activated input
    when the shape changes), the first block of each stage after the first with
    stride 2; then a final [norm] and ReLU. Returns the map (B, h, w, out), which
    CPC's `GridEncoder` mean-pools per patch.

    Without normalisation (v1: "We did not use Batch-Norm") the last convolution of
    every residual branch starts at zero, so that each block starts as the identity
    and a deep stack keeps its activations' scale (the paper does not say how it
    trained its normalisation-free ResNet-101; this is our choice, Goyal et al.
    2017's zero-init residual).

    Args:
        stage_blocks: blocks per stage (ResNet-101's first three: `[3, 4, 23]`;
            CPC v2's ResNet-161: `[3, 4, 46]`).
        stage_filters: bottleneck widths (`[64, 128, 256]`; v2: `[64, 128, 512]`).
        stage_outputs: output widths, None for 4 x `stage_filters` (`[256, 512, 1024]`;
            v2: `[256, 512, 4096]`).
        normalization: None (v1), `"batch"` or `"layer"` (v2).
        stem: `"imagenet"` or `"cifar"`.
        stem_filters: the stem's width (64).
        patch_shape: the patch's `(height, width, channels)` (the encoder's input; the
            images' size is the trainer's `image_shape`).

    Example:

    ```python
    encoder = CPCResNet.from_preset("cpc_resnet101_v2_stack3")   # 64 x 64 patches -> (B, 4, 4, 1024)
    tiny = CPCResNet(stage_blocks=[1], stage_filters=[4], normalization="layer", stem="cifar",
                     stem_filters=8, patch_shape=(4, 4, 3))
    ```
    """

    presets = CPC_RESNET_PRESETS

    def __init__(self, stage_blocks, stage_filters, stage_outputs=None, normalization=None, stem="imagenet",
                 stem_filters=64, patch_shape=(64, 64, 3), **kwargs):
        stage_blocks = check_positive_ints("CPCResNet", "stage_blocks", stage_blocks)
        stage_filters = check_positive_ints("CPCResNet", "stage_filters", stage_filters, len(stage_blocks))
        if stage_outputs is None:
            stage_outputs = [4 * f for f in stage_filters]
        stage_outputs = check_positive_ints("CPCResNet", "stage_outputs", stage_outputs, len(stage_blocks))
        if normalization not in NORMALIZATIONS:
            raise ValueError(f"CPCResNet normalization must be one of {NORMALIZATIONS}; got {normalization!r}.")
        if stem not in STEMS:
            raise ValueError(f"CPCResNet stem must be one of {STEMS}; got {stem!r}.")
        (stem_filters,) = check_positive_ints("CPCResNet", "stem_filters", [stem_filters])
        patch_shape = tuple(patch_shape)
        if len(patch_shape) != 3 or not all(isinstance(d, int) and d >= 1 for d in patch_shape):
            raise ValueError(f"CPCResNet patch_shape must be (height, width, channels) of ints >= 1; "
                             f"got {patch_shape!r}.")
        zero = "zeros" if normalization is None else "he_normal"

        # === Functional Model ===
        inputs = keras.Input(patch_shape, name="patches")
        if stem == "imagenet":
            x = keras.layers.Conv2D(stem_filters, 7, strides=2, padding="same", kernel_initializer="he_normal",
                                    name="stem_conv")(inputs)
            x = keras.layers.MaxPooling2D(3, strides=2, padding="same", name="stem_pool")(x)
        else:
            x = keras.layers.Conv2D(stem_filters, 3, padding="same", kernel_initializer="he_normal",
                                    name="stem_conv")(inputs)
        for s, (blocks, filters, outputs) in enumerate(zip(stage_blocks, stage_filters, stage_outputs), start=1):
            for b in range(1, blocks + 1):
                name = f"stage{s}_block{b}"
                strides = 2 if (s > 1 and b == 1) else 1
                pre = _norm_relu(x, normalization, f"{name}_pre")  # pre-activation
                shortcut = x
                if strides > 1 or x.shape[-1] != outputs:
                    shortcut = keras.layers.Conv2D(outputs, 1, strides=strides, kernel_initializer="he_normal",
                                                   name=f"{name}_shortcut")(pre)
                h = keras.layers.Conv2D(filters, 1, kernel_initializer="he_normal", name=f"{name}_conv1")(pre)
                h = _norm_relu(h, normalization, f"{name}_mid1")
                h = keras.layers.Conv2D(filters, 3, strides=strides, padding="same", kernel_initializer="he_normal",
                                        name=f"{name}_conv2")(h)
                h = _norm_relu(h, normalization, f"{name}_mid2")
                h = keras.layers.Conv2D(outputs, 1, kernel_initializer=zero, name=f"{name}_conv3")(h)
                x = keras.layers.Add(name=f"{name}_add")([shortcut, h])
        x = _norm_relu(x, normalization, "post")  # ResNet v2's final norm and ReLU
        super().__init__(inputs=inputs, outputs=x, **kwargs)

        # === Config ===
        self.stage_blocks = list(stage_blocks)
        self.stage_filters = list(stage_filters)
        self.stage_outputs = list(stage_outputs)
        self.normalization = normalization
        self.stem = stem
        self.stem_filters = stem_filters
        self.patch_shape = patch_shape

    def get_config(self):
        return {**super().get_config(), "stage_blocks": self.stage_blocks, "stage_filters": self.stage_filters,
                "stage_outputs": self.stage_outputs, "normalization": self.normalization, "stem": self.stem,
                "stem_filters": self.stem_filters, "patch_shape": self.patch_shape}


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class StridedConvEncoder(Backbone):
    """CPC v1's audio encoder: strided 1-D convolutions with ReLU, (B, T, C) -> (B, T / prod(strides), filters).

    Sec. 3.1: "five convolutional layers with strides [5, 4, 2, 2, 2], filter-sizes
    [10, 8, 4, 4, 4] and 512 hidden units with ReLU activations"; total stride 160,
    one vector per 10 ms of 16 kHz audio. 'same' padding, so a window of 20480
    samples gives exactly 128 steps (the paper gives no padding; valid padding
    would give 126). No normalisation (the paper names none).

    Args:
        strides: stride of each layer.
        kernel_sizes: filter size of each layer (as long as `strides`).
        filters: hidden units of every layer (512).
        input_length: samples per window (20480), or None.
        channels: input channels (1: a waveform).

    Example:

    ```python
    encoder = StridedConvEncoder.from_preset("cpc_audio_encoder")   # (B, 20480, 1) -> (B, 128, 512)
    ```
    """

    presets = STRIDED_CONV_PRESETS

    def __init__(self, strides=(5, 4, 2, 2, 2), kernel_sizes=(10, 8, 4, 4, 4), filters=512, input_length=20480,
                 channels=1, **kwargs):
        strides = check_positive_ints("StridedConvEncoder", "strides", strides)
        kernel_sizes = check_positive_ints("StridedConvEncoder", "kernel_sizes", kernel_sizes, len(strides))
        (filters,) = check_positive_ints("StridedConvEncoder", "filters", [filters])
        (channels,) = check_positive_ints("StridedConvEncoder", "channels", [channels])
        if input_length is not None:
            (input_length,) = check_positive_ints("StridedConvEncoder", "input_length", [input_length])
            total = 1
            for s in strides:
                total *= s
            if input_length % total:
                raise ValueError(f"StridedConvEncoder input_length {input_length} must be a multiple of the total "
                                 f"stride {total} (the product of strides {list(strides)}).")

        # === Functional Model ===
        inputs = keras.Input((input_length, channels), name="signal")
        x = inputs
        for i, (stride, size) in enumerate(zip(strides, kernel_sizes)):
            x = keras.layers.Conv1D(filters, size, strides=stride, padding="same", activation="relu",
                                    name=f"conv{i + 1}")(x)
        super().__init__(inputs=inputs, outputs=x, **kwargs)

        # === Config ===
        self.strides, self.kernel_sizes = list(strides), list(kernel_sizes)
        self.filters, self.input_length, self.channels = filters, input_length, channels

    def get_config(self):
        return {**super().get_config(), "strides": self.strides, "kernel_sizes": self.kernel_sizes,
                "filters": self.filters, "input_length": self.input_length, "channels": self.channels}
