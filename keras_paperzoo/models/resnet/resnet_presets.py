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


def _imagenet(depth, residual):
    blocks, block_type = _IMAGENET_DEPTHS[depth]
    kind = f"ResNet-{depth}" if residual else f"Plain-{depth} (ResNet-{depth} without shortcuts)"
    return {
        "description": f"{kind}, ImageNet (Table 1): 7x7/2 stem + max pool, {block_type} "
        f"blocks {blocks}, filters {_IMAGENET_FILTERS}"
        + (", shortcut B" if residual else "")
        + f"; {_PARAMS[depth]} parameters with a 1000-way head.",
        "config": {
            "stage_blocks": list(blocks),
            "stage_filters": list(_IMAGENET_FILTERS),
            "block_type": block_type,
            "residual": residual,
            "shortcut": "B",
            "stem": "imagenet",
            "image_shape": (224, 224, 3),
        },
    }


def _cifar(depth, residual):
    n = _CIFAR_N[depth]
    kind = f"ResNet-{depth}" if residual else f"Plain-{depth} (ResNet-{depth} without shortcuts)"
    return {
        "description": f"{kind}, CIFAR-10 (Sec. 4.2, 6n+2 with n={n}): 3x3 conv 16, three "
        f"stages of {n} basic blocks with filters {_CIFAR_FILTERS}"
        + (", shortcut A" if residual else "")
        + f"; {_PARAMS[depth]} parameters with a 10-way head.",
        "config": {
            "stage_blocks": [n, n, n],
            "stage_filters": list(_CIFAR_FILTERS),
            "block_type": "basic",
            "residual": residual,
            "shortcut": "A",
            "stem": "cifar",
            "image_shape": (32, 32, 3),
        },
    }


RESNET_PRESETS = {
    **{f"resnet{d}": _imagenet(d, True) for d in (18, 34, 50, 101, 152)},
    **{f"plain{d}": _imagenet(d, False) for d in (18, 34)},
    **{f"resnet{d}_cifar": _cifar(d, True) for d in (20, 32, 44, 56, 110, 1202)},
    **{f"plain{d}_cifar": _cifar(d, False) for d in (20, 32, 44, 56, 110)},
}
