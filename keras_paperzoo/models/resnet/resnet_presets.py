"""Named ResNet configurations (He et al. 2016, Table 1 and Sec. 4.2): plain dicts of
`ResNetBackbone` constructor arguments with a description.

ImageNet nets use shortcut B (the paper's main results, Table 3 and 4; torchvision's
layout, so its weights load). CIFAR-10 nets are 6n+2 layers: a 3x3 conv with 16 filters,
three stages of n basic blocks with 16/32/64 filters on 32/16/8 maps, option A shortcuts.
A plain net is its residual twin with `residual=False` (same layers, no shortcuts).
"""

_IMAGENET_FILTERS = [64, 128, 256, 512]
_CIFAR_FILTERS = [16, 32, 64]

_IMAGENET_DEPTHS = {
    18: ([2, 2, 2, 2], "basic"),
    34: ([3, 4, 6, 3], "basic"),
    50: ([3, 4, 6, 3], "bottleneck"),
    101: ([3, 4, 23, 3], "bottleneck"),
    152: ([3, 8, 36, 3], "bottleneck"),
}
_CIFAR_N = {20: 3, 32: 5, 44: 7, 56: 9, 110: 18, 1202: 200}

# Trainable parameters with a 1000-way (ImageNet) or 10-way (CIFAR) linear head on
# globally average-pooled features. ImageNet: torchvision's counts. CIFAR: derived in
# tests/models/resnet/test_resnet_backbone.py; the paper rounds them (0.27M ... 19.4M).
_PARAMS = {
    18: "11.7M", 34: "21.8M", 50: "25.6M", 101: "44.5M", 152: "60.2M",
    20: "0.27M", 32: "0.46M", 44: "0.66M", 56: "0.85M", 110: "1.7M", 1202: "19.4M",
}


def _preset(depth, residual, data, layers, head, *, stage_blocks, stage_filters, block_type, shortcut, stem,
            image_shape):
    """ResNet-`depth` (Plain-`depth` without `residual`): its description, from the words on the `data` and the
    `layers` and the `head`'s classes, and its `ResNetBackbone` config."""
    kind = f"ResNet-{depth}" if residual else f"Plain-{depth} (ResNet-{depth} without shortcuts)"
    return {
        "description": f"{kind}, {data}: {layers}"
        + (f", shortcut {shortcut}" if residual else "")
        + f"; {_PARAMS[depth]} parameters with a {head}-way head.",
        "config": {
            "stage_blocks": stage_blocks,
            "stage_filters": stage_filters,
            "block_type": block_type,
            "residual": residual,
            "shortcut": shortcut,
            "stem": stem,
            "image_shape": image_shape,
        },
    }


def _imagenet(depth, residual):
    blocks, block_type = _IMAGENET_DEPTHS[depth]
    return _preset(depth, residual, "ImageNet (Table 1)",
                   f"7x7/2 stem + max pool, {block_type} blocks {blocks}, filters {_IMAGENET_FILTERS}", 1000,
                   stage_blocks=list(blocks), stage_filters=list(_IMAGENET_FILTERS), block_type=block_type,
                   shortcut="B", stem="imagenet", image_shape=(224, 224, 3))


def _cifar(depth, residual):
    n = _CIFAR_N[depth]
    return _preset(depth, residual, f"CIFAR-10 (Sec. 4.2, 6n+2 with n={n})",
                   f"3x3 conv 16, three stages of {n} basic blocks with filters {_CIFAR_FILTERS}", 10,
                   stage_blocks=[n, n, n], stage_filters=list(_CIFAR_FILTERS), block_type="basic",
                   shortcut="A", stem="cifar", image_shape=(32, 32, 3))


def resnet18_cifar(**overrides):
    """The CIFAR ResNet-18 of the self-supervised papers' CIFAR runs, as overrides of the `resnet18` preset.

    The ImageNet ResNet-18 (basic blocks [2, 2, 2, 2], filters 64-512, shortcut B) with a
    3x3 stem of 64 filters and no max pool, on 32 x 32 images: the MoCo authors' CIFAR demo,
    InstDisc's CIFAR script and lightly's CIFAR-10 benchmarks use it. A fresh dict at each
    call, `overrides` (e.g. CMC's half widths, SwAV's any-size input) replacing its entries:
    `{"preset": "resnet18", "overrides": resnet18_cifar()}` in a trainer's preset. Not a
    preset of its own: the `resnetN_cifar` names are the ResNet paper's 6n+2 CIFAR nets
    (Sec. 4.2, option A shortcuts).
    """
    config = {"stage_blocks": [2, 2, 2, 2], "stage_filters": [64, 128, 256, 512], "stem": "cifar",
              "stem_filters": 64, "shortcut": "B", "image_shape": (32, 32, 3)}
    return {**config, **overrides}


def tiny_resnet_cifar(**overrides):
    """The self-supervised trainers' smoke-test network, as overrides of the `resnet20_cifar` preset.

    A CIFAR-style ResNet with two stages of one basic block (8 and 16 filters, an 8-filter
    3x3 stem): the `*_tiny` presets and the reproductions' `--backbone tiny`. A fresh dict at
    each call, `overrides` replacing its entries.
    """
    return {"stage_blocks": [1, 1], "stage_filters": [8, 16], "stem_filters": 8, **overrides}

RESNET_PRESETS = {
    **{f"resnet{d}": _imagenet(d, True) for d in (18, 34, 50, 101, 152)},
    **{f"plain{d}": _imagenet(d, False) for d in (18, 34)},
    **{f"resnet{d}_cifar": _cifar(d, True) for d in (20, 32, 44, 56, 110, 1202)},
    **{f"plain{d}_cifar": _cifar(d, False) for d in (20, 32, 44, 56, 110)},
}

# ResNet's classifier (He et al. 2016: global average pooling, then a fully connected
# layer with softmax; Sec. 3.4 and 4.2). The paper initialises "as in [13]" (He et al.
# 2015), whose std sqrt(2 / fan) is derived for ReLU convolutions (ResNetBackbone does
# that); for the final linear layer it leaves the choice open. We take N(0, 0.01), the
# classifier initialisation of the Caffe-era papers the ResNet recipe descends from
# (AlexNet Sec. 5, VGG Sec. 3.1), because it starts the softmax near uniform (loss
# ~ log K). The alternatives do not: a v1 residual stream grows with depth (the
# pooled CIFAR ResNet-56 features have rms ~2.7 and are mostly a common positive
# offset), so Keras's glorot_uniform (std 0.16 for 64 -> 10) starts ResNet-20 / 56 at a
# loss of ~4.2 / 4.8 and torch's Linear default U(+-1/sqrt(64)) at ~2.6 / 3.3 (5 seeds,
# one batch of normalised CIFAR-10; applications/results/resnet_cifar_results.md).
RESNET_HEAD_INITIALIZER = {"class_name": "RandomNormal", "config": {"mean": 0.0, "stddev": 0.01}}

# The paper's training recipes, `ImageClassifier.compile()`'s default for a ResNet
# (`ResNetBackbone.classification_recipe`; keys: `image_classifier.paper_optimizer`).
# ImageNet (Sec. 3.4): lr 0.1 "divided by 10 when the error plateaus", twice in about 90
# epochs (torchvision's 30/60 of 90): drops at 1/3 and 2/3 of the run.
RESNET_IMAGENET_RECIPE = {
    "optimizer": "sgd", "learning_rate": 0.1, "momentum": 0.9, "l2": 1e-4,
    "drops": (1 / 3, 2 / 3), "epochs": 90, "batch_size": 256,
    "head_initializer": RESNET_HEAD_INITIALIZER,
}
# CIFAR-10 (Sec. 4.2): /10 at 32k and 48k updates, stop at 64k.
RESNET_CIFAR_RECIPE = {
    "optimizer": "sgd", "learning_rate": 0.1, "momentum": 0.9, "l2": 1e-4,
    "drops": (0.5, 0.75), "total_steps": 64000, "batch_size": 128,
    "head_initializer": RESNET_HEAD_INITIALIZER,
}
