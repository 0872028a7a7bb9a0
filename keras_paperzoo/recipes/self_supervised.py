"""What the self-supervised recipes (`moco`, `simclr`, `byol`) share: data, the run, the evaluations.

A recipe names its trainer and what differs from the others in a `Pretraining`,
and `pretrain(args, pretraining)` does the rest:

1. the images (default `digits`, upsampled to 16 x 16 RGB: a 20 % crop of an
   8 x 8 digit is a few pixels; other datasets at their size), their per-channel
   mean and std, which the trainer's augmentation applies after drawing each view
   (the encoder sees normalised images);
2. the trainer from its preset (`--preset`, refused in one line when it is not
   one of the recipe's), with the preset's augmentation arguments, the statistics
   and, on `digits`, crops of at least half the image (`build_trainer`, which the
   reproductions in applications/ call too, with `evaluate_encoder`);
3. `compile()` with the paper's optimizer for this run's length, then `Run.fit`
   (exact `--resume`: the batches and every `SeedGenerator` drawn from
   (seed, epoch) by `EpochSeeds`, so a resumed epoch draws the same views);
4. the evaluations of the frozen encoder (backbone + pooling, h), at
   initialisation and after training, when the data has labels:
   - kNN accuracy (InstDisc protocol: k = 200, cosine, exp(s / 0.1) votes), every
     epoch (`knn_acc`, `KNNMonitor`) and at initialisation (`knn_acc_at_init`);
   - linear-probe accuracy (MoCo's protocol: SGD lr 30, momentum 0.9, no weight
     decay, 100 epochs, /10 at 60 and 80; `linear_probe_accuracy` and
     `linear_probe_accuracy_at_init`);
5. `model.keras` (the trainer) and `encoder.keras` (images normalised by the
   statistics in metrics.json, `input_mean` / `input_std` -> h: what `paperzoo
   export` deploys), then metrics.json.
"""

import dataclasses
import sys
from typing import Callable

import numpy as np

from keras_paperzoo.recipes.common import RecipeError

DIGITS_SIZE = 16  # digits' 8 x 8 upsampled, so that crops keep a stroke
DIGITS_CROP_SCALE = (0.5, 1.0)  # crops of at least half a digit (a 20 % crop of a digit is a stroke)
PROBE_EPOCHS = 100  # MoCo's linear protocol


def _nothing(*args):
    return {}


def _no_size(preset):
    return None


def _no_notes(images):
    return []


@dataclasses.dataclass(frozen=True)
class Pretraining:
    """What one self-supervised recipe adds to `pretrain`.

    Args:
        recipe: the recipe's name (`runs/NAME`, the run record).
        trainer: the trainer class (`SimCLR`, `BYOL`, `MoCo`), built with `from_preset`.
        presets: the recipe's presets (the trainer's `*_PRESETS`).
        default_preset: without `--preset`.
        paper: the published number, for metrics.json.
        default_epochs: without `--epochs`.
        default_batch_size: without `--batch-size`.
        overrides: `(preset, batch_size, num_images) -> dict` of extra `from_preset`
            arguments sized for the run (MoCo's queue); may raise `RecipeError`.
        compile_arguments: `(batch_size) -> dict` of extra `compile()` arguments.
        describe: `(trainer) -> dict` of the trainer's settings for metrics.json.
        indexed: the batches carry each image's index, x = {"images", "index"}
            (InstDisc's and CMC's memory bank; `data/indexed.py`).
        image_size: `(preset) -> int or None`, the images' side without
            `--image-size`; None: `digits` at 16 x 16, other datasets at their own
            size (CPC: the preset's, which its grid of patches is cut to fit).
        notes: `(training images) -> [str]`, what the user should know about this
            data for this method (CMC on grey images); printed and kept in
            metrics.json under "notes".
    """

    recipe: str
    trainer: type
    presets: dict
    default_preset: str
    paper: str
    default_epochs: int = 30
    default_batch_size: int = 128
    overrides: Callable = _nothing
    compile_arguments: Callable = _nothing
    describe: Callable = _nothing
    indexed: bool = False
    image_size: Callable = _no_size
    notes: Callable = _no_notes


def negatives_for(preset_count, num_images):
    """A memory-bank preset's number of negatives m, cut to at most half the training images (at least 1):
    InstDisc's and CMC's 4096 are drawn from 1.28M ImageNet rows; from 1,500 digits they would repeat every
    row several times per image."""
    return max(1, min(preset_count, num_images // 2))


def memory_bank_overrides(presets):
    """`Pretraining.overrides` of a memory-bank trainer (InstDisc, CMC): a bank row per training image
    (`num_data`) and the preset's negatives cut to the data (`negatives_for`)."""

    def overrides(preset, batch_size, num_images):
        count = negatives_for(presets[preset]["arguments"]["num_negatives"], num_images)
        return {"num_data": num_images, "num_negatives": count}

    return overrides


def load_images(dataset, image_size):
    """(x_train, y_train, x_test, y_test): RGB in [0, 1]; `digits` at 16 x 16 unless `image_size`."""
    from keras_paperzoo.data import load_dataset

    size = image_size or (DIGITS_SIZE if dataset == "digits" else None)
    x_train, y_train = load_dataset(dataset, split="train", image_size=size, color_mode="rgb")
    x_test, y_test = load_dataset(dataset, split="test", image_size=size, color_mode="rgb")
    return x_train, y_train, x_test, y_test


def view_augmentation(preset_arguments, mean, std, crop_scale=None):
    """The preset's augmentation arguments, with the per-channel statistics applied after each view."""
    augmentation = dict(preset_arguments.get("augmentation") or {})
    augmentation.update({"mean": [float(v) for v in mean], "std": [float(v) for v in std]})
    if crop_scale is not None:
        augmentation["crop_scale"] = tuple(crop_scale)
    return augmentation


def build_trainer(pretraining, preset, x_train, batch_size, seed, crop_scale=None, **overrides):
    """The recipe's trainer for images `x_train`, seeded; returns (trainer, mean, std).

    The views are normalised by the images' per-channel `mean` and `std` (C,), which
    the encoder therefore expects too. `overrides` go to `from_preset` after the
    recipe's own (`Pretraining.overrides`).
    """
    import keras

    from keras_paperzoo.data.views import per_channel_statistics

    mean, variance = per_channel_statistics(x_train)
    std = np.sqrt(variance)
    if np.any(std <= 0):
        raise RecipeError(f"the training images have a channel of zero variance (std "
                          f"{std.round(6).tolist()}): every pixel is the same (all-zero images?), and the views are "
                          "normalised by the per-channel std.")
    augmentation = view_augmentation(pretraining.presets[preset]["arguments"], mean, std, crop_scale)
    arguments = {**pretraining.overrides(preset, batch_size, len(x_train)), **overrides}
    keras.utils.set_random_seed(seed)  # the same initial encoder for every trainer of one backbone
    trainer = pretraining.trainer.from_preset(preset, image_shape=x_train.shape[1:], augmentation=augmentation,
                                              seed=seed, **arguments)
    return trainer, mean, std


def evaluate_encoder(encoder, train, test, probe_epochs, seed, verbose=0):
    """{"knn": kNN top-1, "probe": linear-probe top-1} of the frozen encoder, in [0, 1] (verbose=1: progress bars)."""
    from keras_paperzoo.evaluation import extract_features, knn_accuracy, linear_probe

    train_features, train_labels = extract_features(encoder, train, verbose=verbose)
    test_features, test_labels = extract_features(encoder, test, verbose=verbose)
    knn = knn_accuracy(train_features, train_labels, test_features, test_labels, k=min(200, len(train_labels)),
                       verbose=verbose)
    probe = linear_probe(encoder, train, test, epochs=probe_epochs, batch_size=min(256, len(train_labels)),
                         seed=seed)
    return {"knn": knn, "probe": probe["accuracy"]}


def pretrain(args, pretraining, extra_callbacks=()):
    """Run `paperzoo train RECIPE` for a self-supervised trainer (see the module docstring); returns the metrics."""
    from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds
    from keras_paperzoo.callbacks.knn_monitor import KNNMonitor
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
    from keras_paperzoo.recipes import common

    name = pretraining.recipe
    run = common.start_run(args, name)
    preset = getattr(args, "preset", None) or pretraining.default_preset
    if preset not in pretraining.presets:
        raise RecipeError(f"--preset {preset!r} is not one of the {pretraining.trainer.__name__} presets; known: "
                          f"{', '.join(sorted(pretraining.presets))}")
    try:  # before the data is read: a batch too small for the objective (SimCLR's negatives, BYOL's batch norm)
        pretraining.trainer.check_batch_size(args.batch_size or pretraining.default_batch_size)
    except ValueError as error:
        raise RecipeError(f"--batch-size {args.batch_size}: {error}") from None
    dataset = args.dataset or "digits"
    x_train, y_train, x_test, y_test = load_images(dataset, args.image_size or pretraining.image_size(preset))
    batch_size = args.batch_size or pretraining.default_batch_size
    if batch_size > len(x_train):
        raise RecipeError(f"--batch-size {batch_size} is larger than the {len(x_train)} training images.")
    notes = pretraining.notes(x_train)
    for note in notes:
        print(f"paperzoo: note: {note}", file=sys.stderr)

    crop_scale = DIGITS_CROP_SCALE if dataset == "digits" else None
    try:
        model, mean, std = build_trainer(pretraining, preset, x_train, batch_size, args.seed, crop_scale)
    except ValueError as error:
        raise RecipeError(f"{name}: {error}") from error
    batches = EpochShuffledBatches(x_train, batch_size=batch_size, seed=args.seed, steps_per_epoch=args.steps_per_epoch,
                                   with_index=pretraining.indexed)
    epochs = args.epochs or pretraining.default_epochs
    model.compile(batch_size=batch_size, steps_per_epoch=len(batches), epochs=epochs,
                  **pretraining.compile_arguments(batch_size))

    labelled = y_train is not None and y_test is not None
    normalize = lambda x: ((x - mean) / std).astype("float32")  # noqa: E731  (what the encoder sees)
    train, test = (normalize(x_train), y_train), (normalize(x_test), y_test)
    probe_epochs = getattr(args, "probe_epochs", None) or PROBE_EPOCHS
    encoder = model.encoder
    # Views (and MoCo's key permutations) drawn from (seed, epoch): a --resume'd run repeats them.
    callbacks = [EpochSeeds(args.seed)]
    at_init = {}
    if labelled:  # the untrained encoder, for reference: random convolutional features are not chance
        init = evaluate_encoder(encoder, train, test, probe_epochs, args.seed)
        at_init = {"knn_acc_at_init": init["knn"], "linear_probe_accuracy_at_init": init["probe"]}
        callbacks.append(KNNMonitor(train, test, encoder=encoder, k=min(200, len(x_train))))
    callbacks += list(extra_callbacks)
    with common.Timer() as timer:
        history = run.fit(model, batches, epochs=epochs, callbacks=callbacks, verbose=args.verbose)
    run.save_model(model, "model.keras")
    run.save_model(encoder, "encoder.keras")

    metrics = {key: values[-1] for key, values in history.history.items()}
    if labelled:
        final = evaluate_encoder(encoder, train, test, probe_epochs, args.seed, verbose=args.verbose)
        metrics.update({**at_init, "linear_probe_accuracy": final["probe"]})
    metrics.update(pretraining.describe(model))
    metrics.update(
        {
            **({"notes": notes} if notes else {}),
            "paper": pretraining.paper,
            "preset": preset,
            **common.image_run_metrics(dataset, x_train, epochs, len(batches), batch_size, timer),
            "input_mean": [float(v) for v in mean],
            "input_std": [float(v) for v in std],
            "probe_epochs": probe_epochs,
            "encoder_parameters": int(encoder.count_params()),
        }
    )
    return run.finish(metrics)
