"""`paperzoo train beit`: BEiT pre-training (Bao et al. 2022) in its two stages, from one command.

Stage 1, the visual tokenizer (Sec. 2.1.2, 2.4): a discrete VAE (`VisualTokenizer`)
learns to encode each image as a grid of visual tokens, one per patch, and to
reconstruct it from them. The paper takes DALL-E's released tokenizer (8192 tokens);
its weights cannot be downloaded here, so the recipe trains one on the same images.
Its codebook usage (perplexity) is reported, since a collapsed codebook would make
the next stage trivial.

Stage 2, masked image modelling (Sec. 2.3): the frozen tokenizer gives every
image's tokens; blockwise masking hides about 40 % of the patches (their embeddings
replaced by the learned [M]), and the BEiT backbone (a ViT with relative position
bias and LayerScale) predicts the hidden tokens (cross-entropy on the masked
positions only). `BEiT.compile()` gives the paper's AdamW (lr 1.5e-3 x batch / 2048,
warmup then cosine, weight decay 0.05, gradient clipping 3.0).

What is scaled down for a CPU: the models (`--preset beit_tiny_digits`, and the
tokenizer preset `beit_tokenizer_digits`; the paper's are BEiT-B 12 x 768 and DALL-E's
8192-token dVAE), the images (digits resized to 32 x 32 in [0, 1], patches of 4 so
both grids are 8 x 8), and the run (`--epochs` is each stage's; without it, about 300
updates per stage, against the paper's 800 epochs of ImageNet). Augmentation: none
(the paper uses random-resized crops, flips and colour jitter).

Reported: each stage's losses, the tokenizer's reconstruction loss and perplexity,
the masked-token loss and accuracy on the test split, kNN accuracy of the frozen
backbone's features (k = 200 cosine) when labels exist, the tokenizer's
reconstructions picture, the tokenizer, the model and the backbone alone (for
fine-tuning and `paperzoo export`).
"""

import numpy as np

from keras_paperzoo.recipes.common import RecipeError, encoder_knn_accuracy

PAPER = "BEiT-B/16, ImageNet-1K fine-tuned top-1 83.2 % (Bao et al. 2022, Table 1); BEiT-L 85.2 %"
DEFAULT_UPDATES = 300  # per stage, without --epochs
DEFAULT_PRESET = "beit_tiny_digits"
TOKENIZER_PRESET = "beit_tokenizer_digits"


def _models(preset, image_shape, seed):
    from keras_paperzoo.models.beit import BEIT_PRESETS, BEiTBackbone, VisualTokenizer

    preset = preset or DEFAULT_PRESET
    if preset not in BEIT_PRESETS:
        raise RecipeError(f"--preset {preset!r} is not a BEiT preset; known: {', '.join(sorted(BEIT_PRESETS))}")
    size = min(image_shape[:2])
    patch = {"patch_size": max(1, 2 ** int(np.log2(max(1, size // 8))))} if size < 64 else {}  # an 8 x 8 grid
    try:
        backbone = BEiTBackbone.from_preset(preset, image_shape=tuple(image_shape), **patch)
        tokenizer = VisualTokenizer.from_preset(TOKENIZER_PRESET, image_shape=tuple(image_shape),
                                                patch_size=backbone.patch_size, seed=seed)
    except ValueError as error:
        raise RecipeError(f"beit: {error}") from error
    return backbone, tokenizer


def run(args, extra_callbacks=()):
    import keras

    from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds
    from keras_paperzoo.data import load_dataset
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
    from keras_paperzoo.models.beit import BEiT
    from keras_paperzoo.recipes import common

    run = common.start_run(args, "beit")
    dataset = args.dataset or "digits"
    image_size = args.image_size or (32 if dataset == "digits" else None)
    x_train, y_train = load_dataset(dataset, split="train", image_size=image_size)  # [0, 1] pixels
    x_test, y_test = load_dataset(dataset, split="test", image_size=image_size)
    batch_size = args.batch_size or 64
    if batch_size > len(x_train):
        raise RecipeError(f"--batch-size {batch_size} is larger than the {len(x_train)} training images.")

    keras.utils.set_random_seed(args.seed)
    output_dir = run.output_dir
    backbone, tokenizer = _models(getattr(args, "preset", None), x_train.shape[1:], args.seed)

    def batches():
        return EpochShuffledBatches(x_train, batch_size=batch_size, seed=args.seed,
                                    steps_per_epoch=args.steps_per_epoch)

    # --- stage 1: the visual tokenizer (a dVAE) ---------------------------------------
    tokenizer_batches = batches()
    steps_per_epoch = len(tokenizer_batches)
    epochs = args.epochs or max(1, round(DEFAULT_UPDATES / steps_per_epoch))
    # DALL-E's AdamW and cosine schedule, at lr 1e-3 rather than its 1e-4: a few hundred updates at 1e-4 leave
    # the hard codes collapsed (see the preset's notes).
    tokenizer.compile(learning_rate=1e-3, total_steps=epochs * steps_per_epoch)
    with common.Timer() as tokenizer_timer:
        tokenizer_history = run.fit(tokenizer, tokenizer_batches, epochs=epochs, callbacks=[EpochSeeds(args.seed)],
                                    verbose=args.verbose, stage="tokenizer")
    run.save_model(tokenizer, "tokenizer.keras")
    tokenizer.save_reconstructions(x_test[:8], output_dir / "tokenizer_reconstructions.png")
    tokenizer_test = tokenizer.evaluate(x_test, batch_size=256, verbose=0, return_dict=True)
    tokenizer.trainable = False  # frozen in stage 2 (Sec. 2.4: q_phi and p_psi fixed)

    # --- stage 2: masked image modelling ------------------------------------------------
    beit = BEiT(backbone, tokenizer, seed=args.seed)
    beit.compile(batch_size=batch_size, steps_per_epoch=steps_per_epoch, epochs=epochs)
    # Masks drawn from (seed, epoch) (EpochSeeds), the same in a resumed epoch.
    callbacks = [EpochSeeds(args.seed), *extra_callbacks]
    with common.Timer() as timer:
        history = run.fit(beit, batches(), epochs=epochs, callbacks=callbacks, verbose=args.verbose)

    run.save_model(beit, "model.keras")
    run.save_model(beit.backbone, "backbone.keras")
    test = beit.evaluate(x_test, batch_size=256, verbose=0, return_dict=True)
    knn = encoder_knn_accuracy(beit.backbone, x_train, y_train, x_test, y_test, verbose=args.verbose)
    metrics = {name: values[-1] for name, values in history.history.items()}
    metrics.update({f"tokenizer_{name}": values[-1] for name, values in tokenizer_history.history.items()})
    metrics.update({f"test_{name}": value for name, value in test.items()})
    metrics.update({f"tokenizer_test_{name}": value for name, value in tokenizer_test.items()})
    metrics.update(
        {
            "first_epoch_loss": history.history["loss"][0],
            "knn_accuracy": knn,
            "paper": PAPER,
            "preset": getattr(args, "preset", None) or DEFAULT_PRESET,
            "tokenizer_preset": TOKENIZER_PRESET,
            "vocabulary_size": int(tokenizer.vocabulary_size),
            "grid_size": list(backbone.grid_size),
            "num_masking_patches": int(beit.masked_patches),
            **common.image_run_metrics(dataset, x_train, epochs, steps_per_epoch, batch_size, timer),
            "backbone_parameters": int(backbone.count_params()),
            "tokenizer_parameters": int(tokenizer.count_params()),
            "tokenizer_train_seconds": round(tokenizer_timer.seconds, 2),
        }
    )
    return run.finish(metrics)
