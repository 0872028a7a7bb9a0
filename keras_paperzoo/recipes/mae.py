"""`paperzoo train mae`: masked-autoencoder pre-training (He et al. 2022) on any image dataset.

The paper's method and optimisation: a ViT encoder on the 25 % visible patches, the
lightweight decoder, MSE on the masked patches against per-patch normalised pixels,
AdamW (0.9, 0.95), weight decay 0.05, lr 1.5e-4 x batch / 256, warmup then cosine
(`MAE.compile()`). What is scaled down for a CPU: the model (`--preset mae_tiny`:
encoder 4 x 128, decoder 2 x 128; the paper's are ViT-B/L/H and 8 x 512), the
images (digits resized to 32 x 32, patches of 4 so the grid is 8 x 8 like the
classifier recipes'), and the run (about 300 updates, 27 epochs of digits at batch
128, against the paper's 800 epochs of 312 updates at batch 4096). Augmentation: none (the paper uses random-resized crops and flips).
Inputs are standardised by the training set's per-channel mean and std, as the paper's
pipeline does (the saved model and encoder expect standardised images; the statistics
are in the metrics as `input_mean` / `input_std`): on raw [0, 1] pixels of mostly blank
images the fixed sin-cos position table drowns the patch tokens (see
`applications/mae_cifar.py`).

Reported: the training loss, the reconstruction loss on the test split, kNN
accuracy of the frozen encoder's features (k = 200 cosine, the InstDisc monitor)
when the evaluation package provides it, reconstruction pictures, the model and
the encoder alone (for probing and fine-tuning).
"""

import numpy as np

from keras_paperzoo.recipes.common import RecipeError, encoder_knn_accuracy

PAPER = "ViT-B/16 MAE, ImageNet-1K fine-tuned top-1 83.6 % (He et al. 2022, Table 3); linear probe 68.0 %"
DEFAULT_UPDATES = 300  # without --epochs: as many epochs as make about 300 updates
DEFAULT_PRESET = "mae_tiny"


def _model(preset, image_shape, seed):
    from keras_paperzoo.models.mae import MAE, MAE_PRESETS

    preset = preset or DEFAULT_PRESET
    if preset not in MAE_PRESETS:
        raise RecipeError(f"--preset {preset!r} is not an MAE preset; known: {', '.join(sorted(MAE_PRESETS))}")
    overrides = {"image_shape": tuple(image_shape), "seed": seed}
    size = min(image_shape[:2])
    if size < 64:
        overrides["patch_size"] = max(1, size // 8)  # an 8 x 8 grid of patches for small images
    try:
        return MAE.from_preset(preset, **overrides)
    except ValueError as error:
        raise RecipeError(f"mae: {error}") from error


def run(args, extra_callbacks=()):
    import keras

    from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds
    from keras_paperzoo.callbacks.mae_reconstruction import MAEReconstruction
    from keras_paperzoo.data import load_dataset
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
    from keras_paperzoo.recipes import common

    run = common.start_run(args, "mae")
    dataset = args.dataset or "digits"
    image_size = args.image_size or (32 if dataset == "digits" else None)
    x_train, y_train = load_dataset(dataset, split="train", image_size=image_size)
    x_test, y_test = load_dataset(dataset, split="test", image_size=image_size)
    mean, std = x_train.mean(axis=(0, 1, 2)), x_train.std(axis=(0, 1, 2))  # (C,) each
    if np.any(std <= 0):
        raise RecipeError(f"The training images have a channel of zero variance (std {std.tolist()}).")
    x_train = ((x_train - mean) / std).astype("float32")  # the paper's standardised inputs
    x_test = ((x_test - mean) / std).astype("float32")
    batch_size = args.batch_size or 128
    if batch_size > len(x_train):
        raise RecipeError(f"--batch-size {batch_size} is larger than the {len(x_train)} training images.")

    keras.utils.set_random_seed(args.seed)
    output_dir = run.output_dir
    mae = _model(getattr(args, "preset", None), x_train.shape[1:], args.seed)
    batches = EpochShuffledBatches(x_train, batch_size=batch_size, seed=args.seed, steps_per_epoch=args.steps_per_epoch)
    steps_per_epoch = len(batches)
    epochs = args.epochs or max(1, round(DEFAULT_UPDATES / steps_per_epoch))
    mae.compile(batch_size=batch_size, steps_per_epoch=steps_per_epoch, epochs=epochs)

    value_range = (float(np.min(-mean / std)), float(np.max((1 - mean) / std)))  # [0, 1] pixels, standardised
    pictures = MAEReconstruction(x_test[:8], output_dir, seed=args.seed, value_range=value_range)
    # Masks drawn from (seed, epoch) (EpochSeeds), the same in a resumed epoch.
    callbacks = [EpochSeeds(args.seed), pictures, *extra_callbacks]
    with common.Timer() as timer:
        history = run.fit(mae, batches, epochs=epochs, callbacks=callbacks, verbose=args.verbose)
    losses = history.history["loss"]

    run.save_model(mae, "model.keras")
    run.save_model(mae.encoder, "encoder.keras")
    pictures.save(output_dir / "reconstruction.png")
    test_loss = mae.evaluate(x_test, batch_size=256, verbose=0)
    knn = encoder_knn_accuracy(mae.encoder, x_train, y_train, x_test, y_test, verbose=args.verbose)
    metrics = {name: values[-1] for name, values in history.history.items()}
    metrics.update(
        {
            "first_epoch_loss": losses[0],
            "test_reconstruction_loss": float(test_loss),
            "knn_accuracy": knn,
            "paper": PAPER,
            "input_mean": [float(v) for v in mean],
            "input_std": [float(v) for v in std],
            "preset": getattr(args, "preset", None) or DEFAULT_PRESET,
            "mask_ratio": mae.mask_ratio,
            "patch_size": list(mae.patch_size),
            **common.image_run_metrics(dataset, x_train, epochs, steps_per_epoch, batch_size, timer),
            "encoder_parameters": int(mae.encoder.count_params()),
            "parameters": int(mae.count_params()),
        }
    )
    return run.finish(metrics)
