"""Named AlexNet configurations: plain dicts of `AlexNetBackbone` arguments."""

ALEXNET_PRESETS = {
    "alexnet": {
        "description": "Krizhevsky et al. 2012 as published: 227x227x3 input, conv 96-256-384-384-256 "
        "with conv2, conv4 and conv5 split into two towers (the two GPUs), LRN after conv1 and "
        "conv2, overlapping 3x3/2 max pooling, fc6 and fc7 of 4096 with dropout 0.5. "
        "60,965,224 parameters with a 1000-class head.",
        "config": {"two_towers": True},
    },
    "alexnet_one_tower": {
        "description": "The paper's network on one device: the same widths, with every "
        "convolution connected to all channels of the layer below. 62,378,344 parameters "
        "with a 1000-class head.",
        "config": {"two_towers": False},
    },
}
