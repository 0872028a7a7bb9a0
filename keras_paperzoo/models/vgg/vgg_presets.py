"""VGG's Table 1 and the named configurations built on it."""

# Table 1 of Simonyan & Zisserman 2015: the kernel size of each convolution in each of the
# five stages (a 2x2/2 max pooling ends every stage). Widths are 64, 128, 256, 512, 512.
VGG_CONFIGURATIONS = {
    "A": ((3,), (3,), (3, 3), (3, 3), (3, 3)),
    "A-LRN": ((3,), (3,), (3, 3), (3, 3), (3, 3)),  # A with LRN after the first convolution
    "B": ((3, 3), (3, 3), (3, 3), (3, 3), (3, 3)),
    "C": ((3, 3), (3, 3), (3, 3, 1), (3, 3, 1), (3, 3, 1)),  # B plus a 1x1 conv in stages 3-5
    "D": ((3, 3), (3, 3), (3, 3, 3), (3, 3, 3), (3, 3, 3)),
    "E": ((3, 3), (3, 3), (3, 3, 3, 3), (3, 3, 3, 3), (3, 3, 3, 3)),
}

# Table 2 (millions of parameters with the 1000-class head).
PAPER_PARAMETER_MILLIONS = {"A": 133, "A-LRN": 133, "B": 133, "C": 134, "D": 138, "E": 144}


def _preset(configuration, weight_layers, note="", alias_of=None):
    description = (
        f"Simonyan & Zisserman 2015, configuration {configuration} ({weight_layers} weight layers "
        "with the 1000-class head): 224x224x3 input, 3x3 convolutions (stride 1, pad 1) of "
        "64-128-256-512-512 channels, five 2x2/2 max poolings, fc6 and fc7 of 4096 with dropout 0.5."
    )
    description += note
    if alias_of:
        description += f" Same as {alias_of}."
    return {"description": description, "config": {"configuration": configuration}}


VGG_PRESETS = {
    "vgg_a": _preset("A", 11),
    "vgg_a_lrn": _preset("A-LRN", 11, " AlexNet's local response normalization after the first convolution."),
    "vgg_b": _preset("B", 13),
    "vgg_c": _preset("C", 16, " The last convolution of stages 3-5 is 1x1."),
    "vgg_d": _preset("D", 16),
    "vgg_e": _preset("E", 19),
    "vgg11": _preset("A", 11, alias_of="vgg_a"),
    "vgg13": _preset("B", 13, alias_of="vgg_b"),
    "vgg16": _preset("D", 16, alias_of="vgg_d"),
    "vgg19": _preset("E", 19, alias_of="vgg_e"),
}

# The paper's ImageNet training (Simonyan & Zisserman 2015, Sec. 3.1), `ImageClassifier.compile()`'s
# default for a VGG (`VGGBackbone.classification_recipe`; keys: `image_classifier.paper_optimizer`).
# "The learning rate was decreased by a factor of 10 when the validation set accuracy stopped
# improving", three times in 74 epochs: the drops sit at 1/3, 2/3 and 8/9 of the run.
VGG_CLASSIFICATION_RECIPE = {
    "optimizer": "sgd", "learning_rate": 0.01, "momentum": 0.9, "l2": 5e-4,
    "drops": (1 / 3, 2 / 3, 8 / 9), "epochs": 74, "batch_size": 256,
}
