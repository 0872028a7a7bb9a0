"""`paperzoo train resnet-cifar | vit | alexnet | vgg`: supervised image classification.

Each recipe takes a backbone preset (`--preset`, e.g. `resnet56_cifar`,
`plain20_cifar`, `vit_s16`, `vgg_d`), builds `ImageClassifier(backbone, classes)`
at the dataset's image size, and trains it with the paper's recipe
(`ImageClassifier.compile()`), the paper's augmentation (CIFAR: pad 4, random
crop, flip; per-channel normalisation) and reports test accuracy beside the
paper's number.
"""

import numpy as np

from keras_paperzoo.recipes.common import RecipeError

RECIPE_DEFAULTS = {
    # recipe: (backbone class name, default preset, default image size for digits,
    #          paper reference printed beside ours)
    "resnet-cifar": ("ResNetBackbone", "resnet20_cifar", 32,
                     "ResNet-20/56 CIFAR-10 test error 8.75 / 6.97 % (He et al. 2016, Table 6)"),
    "vit": ("ViTBackbone", "vit_ti16", 32,
            "ViT-B/16 (ImageNet-21k pre-trained) CIFAR-10 98.1 % (Dosovitskiy et al. 2021, Table 5)"),
    # AlexNet and VGG on digits: the smallest input each network takes (67 x 67: three
    # overlapping poolings after the stride-4 conv1; 32 x 32: five poolings), so that the
    # defaults run on a 2-core, 24 GB machine (the papers' 227 / 224 took 550 s for 3
    # updates of AlexNet and ran VGG out of memory); the papers' inputs are
    # `--image-size 227` / `--image-size 224`.
    "alexnet": ("AlexNetBackbone", "alexnet", 67,
                "ImageNet top-1 error 37.5 % (Krizhevsky et al. 2012, Table 1)"),
    "vgg": ("VGGBackbone", "vgg_a", 32,
            "ImageNet top-1 error 29.6 % for configuration A (Simonyan & Zisserman 2015, Table 3)"),
}

# He et al. 2016, Sec. 4.2: ResNet-110 starts at lr 0.01 "until the training error is below
# 80% (about 400 iterations), and then go[es] back to 0.1"; the shallower nets start at 0.1.
PAPER_WARMUP_STEPS = {"resnet110_cifar": 400}


def warmup_steps(recipe, preset, given, total_steps=None):
    """The lr / 10 warm-up of a run: `given` (--warmup-steps), else the paper's for `preset`.

    The paper's 400 updates belong to its 64,000; a default that would not end before
    the first lr drop of a shorter run (`total_steps`) is cut to a quarter of the run.
    """
    if given is not None:
        if given < 0:
            raise RecipeError(f"--warmup-steps {given}: must be 0 or more")
        if given and recipe != "resnet-cifar":
            raise RecipeError(f"--warmup-steps is for resnet-cifar (He et al.'s lr / 10 start); "
                              f"{recipe} has its paper's own schedule")
        return given
    paper = PAPER_WARMUP_STEPS.get(preset or RECIPE_DEFAULTS[recipe][1], 0) if recipe == "resnet-cifar" else 0
    return paper if total_steps is None else min(paper, total_steps // 4)


def _backbone(recipe, preset, image_shape):
    import keras_paperzoo.models as models

    class_name, default_preset, _, _ = RECIPE_DEFAULTS[recipe]
    cls = getattr(models, class_name)
    preset = preset or default_preset
    if preset not in cls.presets:
        raise RecipeError(f"--preset {preset!r} is not one of the {class_name} presets; "
                          f"known: {', '.join(sorted(cls.presets))}")
    overrides = {"image_shape": tuple(image_shape)}
    if recipe == "vit":
        # Patch size chosen for the dataset: an 8x8 grid of patches for small images.
        size = min(image_shape[:2])
        if size < 64:
            overrides["patch_size"] = max(1, size // 8)
    return cls.from_preset(preset, **overrides)


def run(args, extra_callbacks=()):
    import keras

    from keras_paperzoo.data import load_dataset, require_labels
    from keras_paperzoo.data.checks import check_class_ids
    from keras_paperzoo.data.views import CifarAugmentation, per_channel_statistics
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
    from keras_paperzoo.models import ImageClassifier
    from keras_paperzoo.recipes import common

    recipe = args.recipe
    run = common.start_run(args, recipe)
    warmup = warmup_steps(recipe, getattr(args, "preset", None), getattr(args, "warmup_steps", None))  # checked early
    dataset = args.dataset or "digits"
    _, _, digits_size, paper = RECIPE_DEFAULTS[recipe]
    image_size = args.image_size or (digits_size if dataset == "digits" else None)
    x_train, y_train = load_dataset(dataset, split="train", image_size=image_size, color_mode="rgb")
    x_test, y_test = load_dataset(dataset, split="test", image_size=image_size, color_mode="rgb")
    require_labels(y_train, recipe, dataset)
    num_classes = check_class_ids(y_train, y_test, dataset)  # refuses a stray label 5000, naming it

    mean, variance = per_channel_statistics(x_train)
    if np.any(np.asarray(variance) <= 0):  # not NaN pixels: (x - mean) / 0 would make them
        raise RecipeError(f"{recipe}: the training images of {dataset!r} have a channel of zero variance (std "
                          f"{np.sqrt(variance).round(6).tolist()}): every pixel is the same (all-zero images?), and "
                          "the per-channel normalisation divides by the std.")
    x_train = ((x_train - mean) / np.sqrt(variance)).astype("float32")
    x_test = ((x_test - mean) / np.sqrt(variance)).astype("float32")

    keras.utils.set_random_seed(args.seed)
    try:
        backbone = _backbone(recipe, getattr(args, "preset", None), x_train.shape[1:])
    except ValueError as error:
        raise RecipeError(f"{recipe}: {error}") from error
    batch_size = min(args.batch_size or 128, len(x_train))
    augment = CifarAugmentation(image_size=x_train.shape[1], seed=args.seed)
    train = EpochShuffledBatches(x_train, y_train, batch_size=batch_size, drop_remainder=False,
                                 seed=args.seed, steps_per_epoch=args.steps_per_epoch, augment=augment)
    epochs = args.epochs or 10
    model = ImageClassifier(backbone, num_classes)
    warmup = warmup_steps(recipe, getattr(args, "preset", None), getattr(args, "warmup_steps", None),
                          total_steps=len(train) * epochs)
    try:
        model.compile(steps_per_epoch=len(train), epochs=epochs, warmup_steps=warmup)
    except ValueError as error:
        raise RecipeError(f"--warmup-steps {warmup}: {error}") from error
    with common.Timer() as timer:
        history = run.fit(model, train, epochs=epochs, callbacks=list(extra_callbacks), verbose=args.verbose)
    run.save_model(model, "model.keras")
    test_loss, test_accuracy = model.evaluate(x_test, y_test, batch_size=256, verbose=0)
    metrics = {name: values[-1] for name, values in history.history.items()}
    metrics.update(
        {
            "test_accuracy": float(test_accuracy),
            "test_error_percent": 100.0 * (1.0 - float(test_accuracy)),
            "test_loss": float(test_loss),
            "paper": paper,
            "preset": getattr(args, "preset", None) or RECIPE_DEFAULTS[recipe][1],
            "dataset": str(dataset),
            "image_shape": list(x_train.shape[1:]),
            "epochs": epochs,
            "batch_size": batch_size,
            "steps": len(train) * epochs,
            "warmup_steps": warmup,
            "parameters": int(model.count_params()),
            "backend": keras.backend.backend(),
            "train_seconds": round(timer.seconds, 2),
        }
    )
    return run.finish(metrics)
