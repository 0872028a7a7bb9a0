"""`paperzoo train igpt`: iGPT pre-training (Chen et al. 2020) on any image dataset, then per-layer linear probes.

The paper's method: a colour palette by k-means over the pixel values (Sec. 3, 512
colours), each image read as its palette ids in raster order, a GPT-2 decoder trained
with the autoregressive objective (next-pixel cross-entropy) or the BERT one (15 % of
the positions masked, the loss on those only), then a linear probe on the averaged,
layer-normed features of every layer (Sec. 2.4, Fig. 3: the best layer is in the
middle, not the last). `--objective bert` picks the BERT objective.

What is scaled down for a CPU: the model (`--preset igpt_mnist_tiny`: 4 layers x 64,
16 colours; the paper's iGPT-S is 24 x 512 over 512 colours), the images (the 8 x 8
digits, 64 tokens, against 32 x 32 = 1,024), and the run (about 300 updates at batch
64 against 1M at 128), with the peak learning rate raised to 3e-3 (`IGPT.compile()`'s
default is 1e-3, our choice for the paper's 1M updates) and warmup over the first 5 % of
the run. The context is set to the image's pixel count, the palette to the preset's size
(at most the number of distinct pixel values).

Reported: the training loss, the next-pixel (or masked-pixel) loss on the test split,
the linear-probe test accuracy of every layer and the best layer, completions of the
bottom half of test images (autoregressive only), the model, the palette
(`palette.json`) and the backbone alone (`paperzoo export` exports it).
"""

import json

import numpy as np

from keras_paperzoo.recipes.common import RecipeError

PAPER = "iGPT-L, CIFAR-10 linear probe 96.3 % from a middle layer (Chen et al. 2020, Table 1, Fig. 3)"
DEFAULT_UPDATES = 300  # without --epochs: as many epochs as make about 300 updates
DEFAULT_PRESET = "igpt_mnist_tiny"
OBJECTIVES = ("autoregressive", "bert")


def _model(preset, objective, num_colors, length, seed):
    from keras_paperzoo.models.igpt import IGPT, IGPT_PRESETS

    preset = preset or DEFAULT_PRESET
    if preset not in IGPT_PRESETS:
        raise RecipeError(f"--preset {preset!r} is not an iGPT preset; known: {', '.join(sorted(IGPT_PRESETS))}")
    try:
        return IGPT.from_preset(preset, objective=objective, seed=seed, vocabulary_size=num_colors + 1,
                                max_sequence_length=length)
    except ValueError as error:
        raise RecipeError(f"igpt: {error}") from error


def probe_accuracies(igpt, ids_train, y_train, ids_test, y_test, batch_size=256):
    """Test accuracy of a logistic regression on f^l (Sec. 2.4) for every layer l = 0 .. L."""
    from sklearn.linear_model import LogisticRegression

    train_layers = igpt.layer_features(ids_train, batch_size)  # [f^0 .. f^L], each (N, d)
    test_layers = igpt.layer_features(ids_test, batch_size)
    accuracies = []
    for train, test in zip(train_layers, test_layers):
        mean, std = train.mean(axis=0), train.std(axis=0) + 1e-6
        probe = LogisticRegression(max_iter=1000).fit((train - mean) / std, y_train)
        accuracies.append(float(probe.score((test - mean) / std, y_test)))
    return accuracies


def completions_picture(igpt, palette, ids, image_shape, samples=3):
    """uint8 grid (pixels in [0, 1]): each row one test image, then `samples` completions of its bottom half."""
    from keras_paperzoo.callbacks import image_grid

    height, width = image_shape[:2]
    given = ids[:, : (height // 2) * width]  # the top rows
    columns = [ids] + [igpt.complete(given) for _ in range(samples)]  # (1 + samples) x (B, n)
    images = np.stack([palette.decode(c, (height, width)) for c in columns], axis=1)  # (B, 1 + samples, H, W, C)
    return image_grid(images.reshape((-1,) + images.shape[2:]), columns=1 + samples, gap=1)


def run(args, extra_callbacks=()):
    import keras

    from keras_paperzoo.callbacks import save_png
    from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds
    from keras_paperzoo.data import load_dataset
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
    from keras_paperzoo.models.igpt import ColorPalette
    from keras_paperzoo.recipes import common

    if getattr(args, "objective", None) not in (None, *OBJECTIVES):
        raise RecipeError(f"--objective {args.objective!r} is not an iGPT objective; known: {', '.join(OBJECTIVES)}")
    run = common.start_run(args, "igpt")
    objective = getattr(args, "objective", None) or "autoregressive"  # a resumed run's, when not given again
    dataset = args.dataset or "digits"
    x_train, y_train = load_dataset(dataset, split="train", image_size=args.image_size)
    x_test, y_test = load_dataset(dataset, split="test", image_size=args.image_size)
    batch_size = args.batch_size or 64
    if batch_size > len(x_train):
        raise RecipeError(f"--batch-size {batch_size} is larger than the {len(x_train)} training images.")

    from keras_paperzoo.models.igpt import IGPT_PRESETS

    preset = getattr(args, "preset", None) or DEFAULT_PRESET
    wanted = IGPT_PRESETS.get(preset, IGPT_PRESETS[DEFAULT_PRESET])["backbone"]["overrides"]["vocabulary_size"] - 1
    distinct = np.unique(x_train.reshape(-1, x_train.shape[-1]), axis=0).shape[0]
    palette = ColorPalette.fit(x_train, num_colors=min(wanted, distinct), seed=args.seed)  # Sec. 3's k-means
    ids_train, ids_test = palette.encode(x_train), palette.encode(x_test)  # (N, H W) raster order

    keras.utils.set_random_seed(args.seed)
    output_dir = run.output_dir
    igpt = _model(preset, objective, palette.num_colors, ids_train.shape[1], args.seed)
    batches = EpochShuffledBatches(ids_train, batch_size=batch_size, seed=args.seed,
                                   steps_per_epoch=args.steps_per_epoch)
    steps_per_epoch = len(batches)
    epochs = args.epochs or max(1, round(DEFAULT_UPDATES / steps_per_epoch))
    total = epochs * steps_per_epoch
    igpt.compile(optimizer=igpt.paper_optimizer(total_steps=total, warmup_steps=max(1, total // 20),
                                                peak_learning_rate=3e-3))
    loss_at_init = float(igpt.evaluate(ids_test, batch_size=256, verbose=0))
    # BERT masks drawn from (seed, epoch) (EpochSeeds), the same in a resumed epoch.
    callbacks = [EpochSeeds(args.seed), *extra_callbacks]
    with common.Timer() as timer:
        history = run.fit(igpt, batches, epochs=epochs, callbacks=callbacks, verbose=args.verbose)

    run.save_model(igpt, "model.keras")
    run.save_model(igpt.backbone, "backbone.keras")
    run.write_text("palette.json", json.dumps(palette.get_config()) + "\n")
    test_loss = float(igpt.evaluate(ids_test, batch_size=256, verbose=0))
    probes = None
    if y_train is not None and y_test is not None and len(np.unique(y_train)) > 1:
        probes = probe_accuracies(igpt, ids_train, y_train, ids_test, y_test)
    if objective == "autoregressive":
        picture = completions_picture(igpt, palette, ids_test[:8], x_test.shape[1:])
        save_png(picture, output_dir / "completions.png", scale=4)
    metrics = {name: values[-1] for name, values in history.history.items()}
    metrics.update(
        {
            "first_epoch_loss": history.history["loss"][0],
            "test_loss_at_init": loss_at_init,
            "test_loss": test_loss,
            "probe_accuracy_per_layer": probes,
            "best_probe_layer": None if probes is None else int(np.argmax(probes)),
            "paper": PAPER,
            "objective": objective,
            "preset": preset,
            "palette_size": palette.num_colors,
            "sequence_length": int(ids_train.shape[1]),
            **common.image_run_metrics(dataset, x_train, epochs, steps_per_epoch, batch_size, timer),
            "parameters": int(igpt.count_params()),
        }
    )
    return run.finish(metrics)
