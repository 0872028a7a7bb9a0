"""`paperzoo train gan`: the GAN paper's MNIST experiment on any image dataset.

Defaults follow Goodfellow et al. 2014 (Sec. 5 and the authors' pylearn2 file):
the `gan_mnist` networks, batch 100, k = 1, SGD lr 0.1 decaying by 1.000004 per
update, momentum 0.5 -> 0.7 by epoch 250, the first 50,000 MNIST training images
(the next 1,000 are the validation images that choose the Parzen sigma). The
evaluation is the paper's Table 1 Parzen-window log-likelihood on the test split.

Only the length differs: without --epochs a first run of about 600 updates (about a
minute on a 2-core CPU, one line says so); the paper trained hundreds of epochs (its
momentum ramp spans 250): `--epochs 250`.
"""

import numpy as np

from keras_paperzoo.recipes.common import RecipeError

PAPER_PARZEN_MNIST = "225 +- 2 (Goodfellow et al. 2014, Table 1, MNIST)"
MAX_IMAGE_VALUES = 64 * 64 * 3  # the MLP networks' largest sensible input
DEFAULT_UPDATES = 600  # without --epochs: as many epochs as make about 600 updates, a first run
PAPER_EPOCHS = 250  # the paper's momentum ramp (0.5 -> 0.7) spans 250 epochs
DEFAULT_PARZEN_SAMPLES = 10000
DEFAULT_PRESET = "gan_mnist"


def split_train_valid(x, dataset_name):
    """Paper split for MNIST (50,000 train, validation from the last 10,000); else 90/10."""
    if len(x) == 60000:
        return x[:50000], x[50000:51000]
    n_valid = min(1000, max(1, len(x) // 10))
    return x[:-n_valid], x[-n_valid:]


def run(args, extra_callbacks=()):
    import keras

    from keras_paperzoo.callbacks.gan_pictures import SampleGrid, latent_interpolation
    from keras_paperzoo.data import load_dataset
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
    from keras_paperzoo.evaluation import parzen_evaluation
    from keras_paperzoo.models.gan import GAN, set_output_bias_from_data
    from keras_paperzoo.recipes import common

    run = common.start_run(args, "gan")
    preset = getattr(args, "preset", None) or DEFAULT_PRESET
    if preset not in GAN.presets:
        raise RecipeError(f"--preset {preset!r} is not a GAN preset; known: {', '.join(sorted(GAN.presets))}")
    dataset = args.dataset or "digits"
    image_size = args.image_size or (28 if dataset == "digits" else None)
    x, _ = load_dataset(dataset, split="train", image_size=image_size)
    x_test, _ = load_dataset(dataset, split="test", image_size=image_size)
    values = int(np.prod(x.shape[1:]))
    if values > MAX_IMAGE_VALUES:
        raise RecipeError(
            f"The GAN's fully connected networks take images of at most {MAX_IMAGE_VALUES} "
            f"values (64x64x3); dataset {dataset!r} has {x.shape[1:]}. Pass --image-size 32."
        )
    x_train, x_valid = split_train_valid(x, dataset)
    batch_size = args.batch_size or 100
    if batch_size > len(x_train):
        raise RecipeError(f"--batch-size {batch_size} is larger than the {len(x_train)} training images.")

    keras.utils.set_random_seed(args.seed)
    output_dir = run.output_dir
    batches = EpochShuffledBatches(
        x_train, batch_size=batch_size, seed=args.seed, steps_per_epoch=args.steps_per_epoch
    )
    steps_per_epoch = len(batches)

    try:
        update = getattr(args, "gan_update", None) or "alternating"
        gan = GAN.from_preset(preset, image_shape=x.shape[1:], seed=args.seed, update=update)
    except ValueError as error:
        raise RecipeError(f"gan --preset {preset}: {error}") from error
    set_output_bias_from_data(gan.generator, x_train)
    gan.compile(steps_per_epoch=steps_per_epoch)

    samples = SampleGrid(output_dir, num_samples=64, seed=args.seed)
    epochs = args.epochs or max(1, round(DEFAULT_UPDATES / steps_per_epoch))
    if not args.epochs:
        print(f"gan: {epochs} epochs ({epochs * steps_per_epoch} updates), a short first run with the paper's "
              f"hyper-parameters; the paper's schedule: --epochs {PAPER_EPOCHS}", flush=True)
    with common.Timer() as timer:
        # Stops at the first non-finite d_loss or g_loss (SGD at the paper's rate is unstable on some data).
        history = run.fit(gan, batches, epochs=epochs, callbacks=[samples, *extra_callbacks], verbose=args.verbose)
    run.save_model(gan, "model.keras")
    latent_interpolation(gan.generator, gan.latent_dim, output_dir / "interpolation.png", seed=args.seed)
    parzen = parzen_evaluation(
        gan.generator, x_valid, x_test, num_samples=getattr(args, "parzen_samples", None) or DEFAULT_PARZEN_SAMPLES, seed=args.seed,
        verbose=args.verbose,
    )
    metrics = {name: values[-1] for name, values in history.history.items()}
    metrics.update(
        {
            "parzen_log_likelihood": parzen["log_likelihood"],
            "parzen_standard_error": parzen["standard_error"],
            "parzen_sigma": parzen["sigma"],
            "parzen_num_samples": parzen["num_samples"],
            "paper_parzen_log_likelihood": PAPER_PARZEN_MNIST,
            **common.image_run_metrics(dataset, x_train, epochs, steps_per_epoch, batch_size, timer),
        }
    )
    return run.finish(metrics)
