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

# The paper's ImageNet training (Krizhevsky et al. 2012, Sec. 5), `ImageClassifier.compile()`'s
# default for an AlexNet (`AlexNetBackbone.classification_recipe`; keys: `image_classifier.
# paper_optimizer`). The lr was divided by 10 "when the validation error rate stopped improving",
# three times in 90 epochs: the drops sit at 1/3, 2/3 and 8/9 of the run.
ALEXNET_CLASSIFICATION_RECIPE = {
    "optimizer": "sgd", "learning_rate": 0.01, "momentum": 0.9, "l2": 5e-4,
    "drops": (1 / 3, 2 / 3, 8 / 9), "epochs": 90, "batch_size": 128,
}
