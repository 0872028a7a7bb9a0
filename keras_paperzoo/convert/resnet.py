"""A torchvision or timm `ResNet` object -> `ResNetBackbone` with its weights.

torchvision's ResNet and timm's default ResNet (the "b" variant, timm's docstring: "same
as torchvision ResNet") share their module names, so one reader serves both: the stem
`conv1`/`bn1`/`maxpool`, stages `layer1..layerN` of `BasicBlock` or `Bottleneck` modules
(`conv{i}`, `bn{i}`, `downsample`), the head `fc`. The configuration is read from the
modules (block class, blocks per stage, widths, strides, where the shortcut projects),
checked against what `ResNetBackbone` builds, and the weights go through
`resnet_from_torch_state_dict`, which checks every name and shape again.
"""

from keras_paperzoo.convert.torch_modules import (
    batch_norm_problem,
    conv_problem,
    head_weights,
    input_size,
    is_identity,
    kind,
    linear_size,
    pair,
    unsupported,
)
from keras_paperzoo.models.resnet.resnet_backbone import BOTTLENECK_EXPANSION
from keras_paperzoo.models.resnet.resnet_convert import resnet_from_torch_state_dict

BLOCK_TYPES = {"BasicBlock": "basic", "Bottleneck": "bottleneck"}
# Modules without weights that are ReLU or the identity at inference (timm's drop path /
# drop block are training-time regularisers).
_PASSIVE = ("ReLU", "Identity", "DropPath", "DropBlock2d", "Dropout")
_WEIGHTED = ("conv1", "bn1", "conv2", "bn2", "conv3", "bn3", "downsample")


def read_resnet(model, library, image_shape=None, include_head=False):
    """`(ResNetBackbone, head)` for a torchvision / timm `ResNet`.

    `head` is None unless `include_head`; then `(weights, dropout)` for the `fc` layer
    (None when `fc` is an `nn.Identity`, i.e. `num_classes=0`).
    """

    def fail(reason):
        unsupported(model, library, reason)

    def check(problem, where):
        if problem:
            fail(f"{where} is {problem}")

    # --- stem (Table 1's conv1 and pool): 7x7/2 conv, BN, ReLU, 3x3/2 max pooling ---
    conv1 = getattr(model, "conv1", None)
    if kind(conv1) == "Sequential":
        fail(
            "its stem `conv1` is a Sequential of 3x3 convs (timm's deep stem, the c/d/s/t variants); "
            "ResNetBackbone has the paper's single 7x7 conv"
        )
    check(conv_problem(conv1, 7, 2, 3, bias=False), "the stem `conv1`")
    stem_width = int(conv1.out_channels)
    eps = float(getattr(model.bn1, "eps", 1e-5))
    check(batch_norm_problem(model.bn1, stem_width, eps), "`bn1`")
    activation = getattr(model, "relu", None) or getattr(model, "act1", None)
    if kind(activation) != "ReLU":
        fail(f"the stem activation is a {kind(activation)}, not ReLU")
    pool = getattr(model, "maxpool", None)
    if kind(pool) != "MaxPool2d" or (pair(pool.kernel_size), pair(pool.stride), pair(pool.padding)) != (
        (3, 3), (2, 2), (1, 1)
    ) or pair(pool.dilation) != (1, 1) or pool.ceil_mode:
        fail(f"`maxpool` is {pool!r}, not MaxPool2d(kernel_size=3, stride=2, padding=1)")

    # --- stages of blocks ---
    stages = []
    while hasattr(model, f"layer{len(stages) + 1}"):
        stages.append(list(getattr(model, f"layer{len(stages) + 1}")))
    if not stages or not all(stages):
        fail("it has no stages `layer1`, `layer2`, ... of blocks")
    found = sorted({kind(block) for stage in stages for block in stage})
    if len(found) != 1 or found[0] not in BLOCK_TYPES:
        fail(f"its blocks are {found}; ResNetBackbone has one block type throughout, BasicBlock or Bottleneck")
    block_type = BLOCK_TYPES[found[0]]
    channels, shapes_change, projections, in_1x1 = stem_width, [], [], set()
    for s, stage in enumerate(stages, start=1):
        width = int(getattr(stage[0].conv1, "out_channels", 0))
        for j, block in enumerate(stage):
            stride = 2 if (s > 1 and j == 0) else 1  # conv3_1, conv4_1, conv5_1 (Table 1)
            where = f"layer{s}.{j}"
            if block_type == "bottleneck" and stride > 1:
                in_1x1.add(pair(getattr(block.conv1, "stride", 1)) == (stride, stride))
            out = _read_block(block, block_type, width, channels, stride, eps, where, fail, check, True in in_1x1)
            shapes_change.append(stride > 1 or out != channels)
            projections.append(getattr(block, "downsample", None) is not None)
            channels = out
    if len(in_1x1) > 1:
        fail("some bottlenecks stride in the first 1x1 conv and others in the 3x3 conv")
    if projections == shapes_change:
        shortcut = "B"  # a projection where the shape changes (torchvision, timm)
    elif all(projections):
        shortcut = "C"
    else:
        fail(
            "its shortcuts project at other places than ResNetBackbone's options B (where the shape "
            "changes) and C (everywhere)"
        )

    height, width = input_size(model)
    config = dict(
        stage_blocks=[len(stage) for stage in stages],
        stage_filters=[int(stage[0].conv1.out_channels) for stage in stages],
        block_type=block_type,
        residual=True,
        shortcut=shortcut,
        stem="imagenet",
        stem_filters=stem_width,
        stride_in_1x1=True in in_1x1,
        image_shape=tuple(image_shape) if image_shape is not None else (height, width, int(conv1.in_channels)),
        bn_momentum=1.0 - (model.bn1.momentum if getattr(model.bn1, "momentum", None) is not None else 0.1),
        bn_epsilon=eps,
    )
    head = _read_head(model, fail) if include_head else None
    backbone = resnet_from_torch_state_dict(model.state_dict(), config)
    return backbone, head


def _read_block(block, block_type, width, in_channels, stride, eps, where, fail, check, stride_in_1x1):
    """Check one block against ResNetBackbone's; returns its output channels."""
    for name, child in block.named_children():
        if name not in _WEIGHTED and kind(child) not in _PASSIVE:
            fail(
                f"`{where}.{name}` is a {kind(child)}, which ResNetBackbone's blocks do not have (they are "
                "conv-BN-ReLU only: no squeeze-excitation, anti-aliasing or other activations)"
            )
    if block_type == "basic":
        layers = [(1, 3, stride, 1, width), (2, 3, 1, 1, width)]  # (index, kernel, stride, padding, filters)
    else:
        s1, s2 = (stride, 1) if stride_in_1x1 else (1, stride)
        layers = [(1, 1, s1, 0, width), (2, 3, s2, 1, width), (3, 1, 1, 0, BOTTLENECK_EXPANSION * width)]
    channels = in_channels
    for i, kernel, conv_stride, padding, filters in layers:
        conv = getattr(block, f"conv{i}", None)
        check(conv_problem(conv, kernel, conv_stride, padding, bias=False), f"`{where}.conv{i}`")
        if (conv.in_channels, conv.out_channels) != (channels, filters):
            fail(
                f"`{where}.conv{i}` maps {conv.in_channels} to {conv.out_channels} channels where "
                f"ResNetBackbone's {block_type} block maps {channels} to {filters} (wide ResNets and "
                "ResNeXt have other bottleneck widths)"
            )
        check(batch_norm_problem(getattr(block, f"bn{i}", None), filters, eps), f"`{where}.bn{i}`")
        channels = filters
    downsample = getattr(block, "downsample", None)
    if downsample is None:
        if stride > 1 or channels != in_channels:
            fail(f"`{where}` changes the shape of its input but has no `downsample`")
        return channels
    parts = list(downsample) if kind(downsample) == "Sequential" else [downsample]
    if [kind(p) for p in parts[:1]] != ["Conv2d"] or len(parts) != 2:
        fail(
            f"`{where}.downsample` is {[kind(p) for p in parts]}, not [Conv2d (1x1), BatchNorm2d] "
            "(timm's average-pool or 3x3 downsampling variants)"
        )
    check(conv_problem(parts[0], 1, stride, 0, bias=False), f"`{where}.downsample.0`")
    if (parts[0].in_channels, parts[0].out_channels) != (in_channels, channels):
        fail(f"`{where}.downsample.0` maps {parts[0].in_channels} to {parts[0].out_channels} channels")
    check(batch_norm_problem(parts[1], channels, eps), f"`{where}.downsample.1`")
    return channels


def _read_head(model, fail):
    """`(weights, dropout)` of `fc` after global average pooling, or None for `fc = Identity`."""
    fc = getattr(model, "fc", None)
    if is_identity(fc):
        return None
    if linear_size(fc) is None:
        fail(f"its head `fc` is a {kind(fc)}; include_head=True converts one Linear layer with a bias")
    pool = getattr(model, "global_pool", None) or getattr(model, "avgpool", None)
    average = (kind(pool) == "AdaptiveAvgPool2d" and pair(pool.output_size) == (1, 1)) or (
        kind(pool) == "SelectAdaptivePool2d" and getattr(pool, "pool_type", None) == "avg"
    )
    if not average:
        fail(f"its head pools with a {kind(pool)} {getattr(pool, 'pool_type', '')}; ImageClassifier averages")
    return head_weights(fc), float(getattr(model, "drop_rate", 0.0) or 0.0)
