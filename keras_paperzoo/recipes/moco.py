"""`paperzoo train moco`: MoCo v1 / v2 self-supervised pre-training, then the papers' evaluations.

`--preset` picks the configuration (`MOCO_PRESETS`): `moco_v2_resnet20_cifar`
(default) or `moco_v1_resnet20_cifar` on a CPU budget, `moco_cifar_resnet18`
(the MoCo authors' CIFAR-10 demo), `moco_v1_resnet50` / `moco_v2_resnet50` (the
papers'). The images (in [0, 1], normalised by the training set's per-channel
mean and std after augmentation) go to the model raw; it draws the two views
with the version's augmentation. Labels are used only to evaluate:

- kNN accuracy (InstDisc protocol: k = 200, cosine, exp(s / 0.1) votes) of the
  backbone's pooled features, every epoch (`knn_acc`) and at initialisation;
- linear-probe accuracy on the frozen features (SGD lr 30, momentum 0.9, no
  weight decay, 100 epochs, /10 at 60 and 80).

CPU-budget choices (named, not the paper's): batch 128 instead of 256; the queue
is cut to a multiple of the batch at most half the training set (65536 or 4096
keys would hold every image many times over on small data); batch-norm groups
of at least 8 images (8 groups when the batch allows, the paper's 8 GPUs); `digits` upsampled to 16x16 and cropped to at
least half their area (a 20 % crop of an 8x8 digit is a few pixels); the CPU
presets' m = 0.99 (see `moco_presets.py`); learning rate 0.06 x batch / 256,
twice the papers' rule, for runs of a few hundred updates. Measured on `digits`
(JAX, 30 epochs of 11 updates, m = 0.99, crops >= 0.5): kNN accuracy 0.86 at
the doubled rate, 0.835 at the papers' rate; 0.83 for the untrained encoder.
"""

import numpy as np

from keras_paperzoo.recipes.common import RecipeError

DEFAULT_PRESET = "moco_v2_resnet20_cifar"
PAPER = (
    "MoCo authors' CIFAR-10 demo, ResNet-18, 200 epochs: kNN 82.6 %; MoCo v2 ImageNet "
    "ResNet-50, 200 epochs: linear 67.5 % (Chen et al. 2020)"
)
DEFAULT_EPOCHS = 30


def shuffle_bn_splits_for(batch_size):
    """The paper's 8 batch-norm groups, fewer when the batch would give groups of under 8 images."""
    return next(s for s in (8, 4, 2, 1) if batch_size % s == 0 and batch_size // s >= 8 or s == 1)


def queue_size_for(preset_size, batch_size, num_images):
    """The preset's K, cut to a multiple of the batch size of at most half the images."""
    batches = max(1, min(preset_size, num_images // 2) // batch_size)
    return batches * batch_size


def run(args, extra_callbacks=()):
    import keras

    from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds
    from keras_paperzoo.callbacks.knn_monitor import KNNMonitor
    from keras_paperzoo.data import load_dataset
    from keras_paperzoo.data.augmentation import per_channel_statistics
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
    from keras_paperzoo.evaluation.knn import knn_accuracy
    from keras_paperzoo.evaluation.features import extract_features
    from keras_paperzoo.evaluation.linear_probe import linear_probe
    from keras_paperzoo.models.moco import MOCO_PRESETS, MoCo
    from keras_paperzoo.recipes import common

    run = common.start_run(args, "moco")
    dataset = args.dataset or "digits"
    image_size = args.image_size or (16 if dataset == "digits" else None)
    x_train, y_train = load_dataset(dataset, split="train", image_size=image_size, color_mode="rgb")
    x_test, y_test = load_dataset(dataset, split="test", image_size=image_size, color_mode="rgb")
    preset = getattr(args, "preset", None) or DEFAULT_PRESET
    if preset not in MOCO_PRESETS:
        raise RecipeError(f"--preset {preset!r} is not a MoCo preset; known: {', '.join(sorted(MOCO_PRESETS))}")
    batch_size = args.batch_size or 128
    if batch_size > len(x_train):
        raise RecipeError(f"--batch-size {batch_size} is larger than the {len(x_train)} training images.")
    splits = shuffle_bn_splits_for(batch_size)
    queue_size = queue_size_for(MOCO_PRESETS[preset]["arguments"]["queue_size"], batch_size, len(x_train))

    mean, variance = per_channel_statistics(x_train)
    std = np.sqrt(variance)
    normalized_train = ((x_train - mean) / std).astype("float32")
    normalized_test = ((x_test - mean) / std).astype("float32")
    augmentation = dict(MOCO_PRESETS[preset]["arguments"].get("augmentation", {}))
    augmentation.update({"mean": mean.tolist(), "std": std.tolist()})
    if dataset == "digits":
        augmentation["crop_scale"] = (0.5, 1.0)

    keras.utils.set_random_seed(args.seed)
    try:
        moco = MoCo.from_preset(
            preset, image_shape=x_train.shape[1:], queue_size=queue_size, shuffle_bn_splits=splits,
            augmentation=augmentation, seed=args.seed,
        )
    except ValueError as error:
        raise RecipeError(f"moco: {error}") from error
    batches = EpochShuffledBatches(x_train, batch_size=batch_size, seed=args.seed, steps_per_epoch=args.steps_per_epoch)
    epochs = args.epochs or DEFAULT_EPOCHS
    moco.compile(batch_size=batch_size, steps_per_epoch=len(batches), epochs=epochs,
                 learning_rate=0.06 * batch_size / 256)

    labelled = y_train is not None and y_test is not None
    k = min(200, len(x_train))
    # Views and key permutations drawn from (seed, epoch): a --resume'd run repeats them.
    callbacks = [EpochSeeds(args.seed)]
    encoder = moco.encoder
    probe_epochs = getattr(args, "probe_epochs", None) or 100
    train, test = (normalized_train, y_train), (normalized_test, y_test)
    init = {}
    monitor = None
    if labelled:  # the untrained encoder, for reference: random convolutional features are not chance
        train_features, _ = extract_features(encoder, train)
        test_features, _ = extract_features(encoder, test)
        init["knn_acc_at_init"] = knn_accuracy(train_features, y_train, test_features, y_test, k=k)
        init["linear_probe_accuracy_at_init"] = linear_probe(
            encoder, train, test, epochs=probe_epochs, batch_size=min(256, len(x_train)), seed=args.seed
        )["accuracy"]
        monitor = KNNMonitor(train, test, encoder=encoder, k=k)
        callbacks.append(monitor)
    callbacks += list(extra_callbacks)
    with common.Timer() as timer:
        history = run.fit(moco, batches, epochs=epochs, callbacks=callbacks, verbose=args.verbose)
    run.save_model(moco, "model.keras")

    metrics = {name: values[-1] for name, values in history.history.items()}
    if labelled:
        probe = linear_probe(encoder, train, test, epochs=probe_epochs, batch_size=min(256, len(x_train)),
                             seed=args.seed)
        metrics.update({**init, "linear_probe_accuracy": probe["accuracy"]})
    metrics.update(
        {
            "paper": PAPER,
            "preset": preset,
            "version": moco.version,
            "dataset": str(dataset),
            "train_images": int(len(x_train)),
            "image_shape": list(x_train.shape[1:]),
            "epochs": epochs,
            "steps_per_epoch": len(batches),
            "batch_size": batch_size,
            "queue_size": queue_size,
            "shuffle_bn_splits": splits,
            "backend": keras.backend.backend(),
            "train_seconds": round(timer.seconds, 2),
        }
    )
    return run.finish(metrics)
