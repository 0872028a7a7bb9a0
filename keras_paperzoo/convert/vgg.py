"""A torchvision `VGG` object -> `VGGBackbone` with its weights.

torchvision's VGG is `features` (per convolution: Conv2d 3x3 pad 1 [+ BatchNorm2d] +
ReLU; a MaxPool2d 2x2/2 ends each of the five stages), `avgpool` (adaptive, 7x7) and
`classifier` (Linear, ReLU, Dropout, Linear, ReLU, Dropout, Linear). The configuration
is the number of convolutions per stage (Table 1: A 1-1-2-2-2, B 2-2-2-2-2, D 2-2-3-3-3,
E 2-2-4-4-4), batch norm is there or not (`vgg*_bn`); the weights go through
`vgg_from_torch_state_dict`, which folds the adaptive pooling into fc6 for images other
than 224x224.
"""

from keras_paperzoo.convert.torch_modules import (
    batch_norm_problem,
    conv_problem,
    head_weights,
    input_size,
    kind,
    linear_size,
    pair,
    unsupported,
)
from keras_paperzoo.models.vgg.vgg_converter import TORCH_POOLED_SIZE, vgg_from_torch_state_dict
from keras_paperzoo.models.vgg.vgg_presets import VGG_CONFIGURATIONS

# Convolutions per stage -> torchvision's name for it (A-LRN and C are not in torchvision).
PRESET_OF_COUNTS = {
    tuple(len(stage) for stage in VGG_CONFIGURATIONS[configuration]): preset
    for configuration, preset in (("A", "vgg11"), ("B", "vgg13"), ("D", "vgg16"), ("E", "vgg19"))
}
_CLASSIFIER = ["Linear", "ReLU", "Dropout", "Linear", "ReLU", "Dropout", "Linear"]


def read_vgg(model, library, image_shape=None, include_head=False):
    """`(VGGBackbone, head)` for a torchvision `VGG`; `head` is `(weights, dropout)` of fc8 or None."""

    def fail(reason):
        unsupported(model, library, reason)

    features = getattr(model, "features", None)
    if kind(features) != "Sequential":
        fail(f"its `features` is a {kind(features)}, not a Sequential of convolutions and poolings")
    stages, filters, batch_norm, channels, eps, in_channels = [[]], [], None, None, 1e-5, None
    modules = list(features)
    for index, module in enumerate(modules):
        where = f"`features.{index}`"
        name = kind(module)
        if name == "Conv2d":
            problem = conv_problem(module, 3, 1, 1, bias=True)
            if problem:
                fail(f"{where} is {problem}")
            in_channels = int(module.in_channels) if in_channels is None else in_channels
            channels = int(module.out_channels)
            stages[-1].append(channels)
            follower = kind(modules[index + 1]) if index + 1 < len(modules) else None
            has_bn = follower == "BatchNorm2d"
            if batch_norm is not None and has_bn != batch_norm:
                fail("batch norm follows some convolutions and not others")
            batch_norm = has_bn
        elif name == "BatchNorm2d":
            problem = batch_norm_problem(module, channels, eps)
            if problem:
                fail(f"{where} is {problem} (VGGBackbone's batch norm has PyTorch's eps 1e-5)")
        elif name == "MaxPool2d":
            if (pair(module.kernel_size), pair(module.stride), pair(module.padding)) != ((2, 2), (2, 2), (0, 0)):
                fail(f"{where} is {module!r}, not MaxPool2d(kernel_size=2, stride=2)")
            if len(set(stages[-1])) != 1:
                fail(f"stage {len(stages)} has convolutions of widths {stages[-1]}; VGGBackbone has one per stage")
            filters.append(stages[-1][0])
            stages.append([])
        elif name != "ReLU":
            fail(f"{where} is a {name}; VGG's features are Conv2d, BatchNorm2d, ReLU and MaxPool2d")
    counts = tuple(len(stage) for stage in stages[:-1])
    if stages[-1] or counts not in PRESET_OF_COUNTS:
        fail(
            f"its convolutions per stage are {counts + ((len(stages[-1]),) if stages[-1] else ())}; "
            "torchvision's VGGs have 1-1-2-2-2 (vgg11), 2-2-2-2-2 (vgg13), 2-2-3-3-3 (vgg16), 2-2-4-4-4 (vgg19)"
        )

    pool = getattr(model, "avgpool", None)
    if kind(pool) != "AdaptiveAvgPool2d" or pair(pool.output_size) != (TORCH_POOLED_SIZE,) * 2:
        fail(f"`avgpool` is {pool!r}, not AdaptiveAvgPool2d((7, 7))")
    classifier = list(getattr(model, "classifier", None) or [])
    if [kind(m) for m in classifier] != _CLASSIFIER or None in [linear_size(classifier[i]) for i in (0, 3, 6)]:
        fail(f"its classifier is {[kind(m) for m in classifier]}, not torchvision's {_CLASSIFIER}")
    dropout = float(classifier[2].p)
    if classifier[5].p != dropout:
        fail(f"its two dropouts differ ({classifier[2].p}, {classifier[5].p}); VGGBackbone has one rate")

    height, width = input_size(model)
    overrides = dict(
        image_shape=tuple(image_shape) if image_shape is not None else (height, width, in_channels),
        filters=tuple(filters),
        fc_units=(linear_size(classifier[0])[1], linear_size(classifier[3])[1]),
        dropout=dropout,
    )
    backbone, _ = vgg_from_torch_state_dict(model.state_dict(), PRESET_OF_COUNTS[counts], **overrides)
    head = (head_weights(classifier[6]), 0.0) if include_head else None  # fc8: its dropout is in the backbone
    return backbone, head
