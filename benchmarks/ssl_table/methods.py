"""The table's rows: how each method is built on the shared data, trained for the update budget, and read out.

`prepare(name, data, budget, seed)` returns a `Prepared`: `features(x)` (images -> (N, D)
NumPy features of the frozen encoder, what kNN and the linear probe read), `train()` (the
budget's updates; returns the final loss, the updates done and notes) and `parameters`.
Everything is the package's public API: the recipes' `pretraining()` / `build_trainer`
(the contrastive family, as `paperzoo train` builds them), `MAE`, `BEiT` +
`VisualTokenizer`, `IGPT` + `ColorPalette`, `ImageClassifier`.

Backbones (the smallest comparable ones):
- the contrastive / clustering family (MoCo v1/v2, SimCLR, BYOL, InstDisc, InvaSpread,
  SwAV, DeepCluster, DenseCL) and the supervised and random-init rows: one CIFAR ResNet
  (`budget["backbone"]`, an override of each recipe's preset), built from the same seed,
  so at a given seed they start from the same encoder;
- CMC: two half-width copies of it (one per view, L and ab: the method's own design);
- CPC: its preset `cpc_v1_small`'s patch encoder (a 7 x 7 grid of 4-pixel patches);
- MAE, BEiT: a ViT (presets `mae_tiny`: 4 x 128; `beit_tiny_digits`: 4 x 64), patch 4;
- iGPT: a GPT over palette ids (`igpt_mnist_tiny`: 4 layers x 64), the image at
  `budget["igpt_image_size"]` pixels (iGPT's own down-sampling, Sec. 3) over 16 grey
  levels; features f^l of the middle layer (Chen et al. 2020, Sec. 2.4 / Fig. 3).
"""

import dataclasses
import math
from typing import Callable

# name: (recipe, preset (None: the recipe's default), label)
RECIPE_METHODS = {
    "moco_v1": ("moco", "moco_v1_resnet20_cifar", "MoCo v1"),
    "moco_v2": ("moco", None, "MoCo v2"),
    "simclr": ("simclr", None, "SimCLR"),
    "byol": ("byol", None, "BYOL"),
    "instdisc": ("instdisc", None, "InstDisc"),
    "invaspread": ("invaspread", None, "InvaSpread"),
    "cmc": ("cmc", None, "CMC"),
    "cpc": ("cpc", None, "CPC v1"),
    "swav": ("swav", None, "SwAV"),
    "deepcluster": ("deepcluster", None, "DeepCluster"),
    "densecl": ("densecl", None, "DenseCL"),
}
OTHER_METHODS = {"mae": "MAE", "beit": "BEiT", "igpt": "iGPT"}
METHODS = tuple(RECIPE_METHODS) + tuple(OTHER_METHODS)
RANDOM_INIT, SUPERVISED = "random_init", "supervised"
ROWS = (RANDOM_INIT, SUPERVISED) + METHODS
LABELS = {**{name: label for name, (_, _, label) in RECIPE_METHODS.items()}, **OTHER_METHODS,
          RANDOM_INIT: "random init", SUPERVISED: "supervised"}
OWN_BACKBONE = ("cpc",)  # its preset's patch encoder, not the shared ResNet
BACKBONES = {  # overrides of the recipes' CIFAR ResNet presets (as reproductions/ssl_cifar.py's)
    "resnet8": {"stage_blocks": [1, 1, 1]},  # 16-32-64 filters, about 78k parameters
    "tiny": {"stage_blocks": [1, 1], "stage_filters": [8, 16], "stem_filters": 8},  # about 5k
}
ENCODERS = {  # what each row's features are, for the table
    "shared": "the shared ResNet (pooled h)",
    "cmc": "two half-width shared ResNets (L, ab), concatenated",
    "cpc": "cpc_v1_small patch encoder, mean over the 7 x 7 grid",
    "mae": "ViT mae_tiny (4 x 128, patch 4), class token",
    "beit": "ViT beit_tiny_digits (4 x 64, patch 4), LN(mean of patches)",
    "igpt": "GPT igpt_mnist_tiny (4 x 64) over 16 grey levels of the down-sampled image, f^2 (middle layer)",
}
# CPU seconds per update at batch 64 on one core, one thread (JAX, 2026-12-05, MNIST 16 x 16, `tiny` ResNet;
# measured at nice 19 under a load average of 10-13): the order the runs are taken in, heaviest first, so that
# the last runs of a table are short and its workers finish together.
SECONDS_PER_UPDATE = {"cpc": 1.108, "igpt": 0.268, "densecl": 0.195, "mae": 0.15, "cmc": 0.142, "beit": 0.09,
                      "swav": 0.072, "instdisc": 0.07, "deepcluster": 0.05, "byol": 0.049, "simclr": 0.038,
                      "invaspread": 0.037, "moco_v1": 0.032, "moco_v2": 0.032, "supervised": 0.014, "random_init": 0.0}
MAE_BASE_LR = 1.5e-3  # reproductions/mae_cifar.py: ten times the paper's, for a short run
BEIT_PRETRAIN_LR = 1.5e-3  # reproductions/beit_mnist.py's peak lr
TOKENIZER_LR = 1e-3  # reproductions/beit_mnist.py's
IGPT_LR = 3e-3  # the igpt recipe's peak lr for short runs
IGPT_COLORS = 16


def encoder_of(name):
    return ENCODERS.get(name, ENCODERS["shared"])


@dataclasses.dataclass
class Prepared:
    """One row's model, ready: `features(images)` -> (N, D); `train()` -> {"final_loss", "updates", ...}."""

    features: Callable
    train: Callable
    parameters: int


def _schedule(num_images, batch_size, updates):
    """(steps per epoch, epochs) giving at least `updates` updates in whole epochs of at most one pass."""
    steps = max(1, min(num_images // batch_size, updates))
    return steps, math.ceil(updates / steps)


def _fit(model, batches, epochs, callbacks=()):
    import keras

    history = model.fit(batches, epochs=epochs, verbose=0,
                        callbacks=[batches.epoch_callback(), keras.callbacks.TerminateOnNaN(), *callbacks])
    loss = history.history.get("loss", [float("nan")])[-1]
    return {"final_loss": round(float(loss), 4), "updates": batches.steps_per_epoch * epochs,
            "loss_per_epoch": [round(float(v), 4) for v in history.history.get("loss", [])]}


def _features(encoder, normalize=None):
    from keras_paperzoo.evaluation import extract_features

    def features(images):
        images = normalize(images) if normalize else images
        return extract_features(encoder, (images, None))[0]

    return features


def _recipe_trainer(name, x_train, budget, seed):
    """The recipe's trainer (the shared ResNet unless `OWN_BACKBONE`), (mean, std) and its `Pretraining`."""
    from keras_paperzoo import recipes
    from keras_paperzoo.recipes.self_supervised import DIGITS_CROP_SCALE, build_trainer

    recipe, preset, _ = RECIPE_METHODS[name]
    pretraining = recipes.RECIPES[recipe].load().pretraining()
    networks = {} if name in OWN_BACKBONE else BACKBONES[budget["backbone"]]
    trainer, mean, std = build_trainer(pretraining, preset or pretraining.default_preset, x_train,
                                       budget["batch_size"], seed, DIGITS_CROP_SCALE, **networks)
    return trainer, (mean, std), pretraining


def _normalizer(mean, std):
    return lambda x: ((x - mean) / std).astype("float32")


def _prepare_recipe(name, data, budget, seed):
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches

    x_train = data[0]
    trainer, (mean, std), pretraining = _recipe_trainer(name, x_train, budget, seed)
    batch = budget["batch_size"]

    def train():
        steps, epochs = _schedule(len(x_train), batch, budget["updates"])
        batches = EpochShuffledBatches(x_train, batch_size=batch, seed=seed, steps_per_epoch=steps,
                                       with_index=pretraining.indexed)
        trainer.compile(batch_size=batch, steps_per_epoch=steps, epochs=epochs,
                        **pretraining.compile_arguments(batch))
        return _fit(trainer, batches, epochs)

    return Prepared(_features(trainer.encoder, _normalizer(mean, std)), train,
                    int(trainer.encoder.count_params()))


def _prepare_shared(name, data, budget, seed):
    """The shared ResNet at initialisation (SimCLR's trainer builds it), untrained or trained with labels."""
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
    from keras_paperzoo.models import ImageClassifier

    x_train, y_train = data[0], data[1]
    trainer, (mean, std), _ = _recipe_trainer("simclr", x_train, budget, seed)
    normalize = _normalizer(mean, std)
    encoder = trainer.encoder

    def train():
        if name == RANDOM_INIT:
            return {"final_loss": None, "updates": 0}
        # The same backbone with a linear head, the ResNet paper's CIFAR recipe (SGD 0.1, momentum 0.9, weight
        # decay 1e-4, /10 at 50 % and 75 %) over the same number of updates; no augmentation.
        steps, epochs = _schedule(len(x_train), budget["batch_size"], budget["updates"])
        batches = EpochShuffledBatches(normalize(x_train), y_train, batch_size=budget["batch_size"], seed=seed,
                                       steps_per_epoch=steps)
        classifier = ImageClassifier(trainer.backbone, int(y_train.max()) + 1)
        classifier.compile(steps_per_epoch=steps, epochs=epochs)
        return _fit(classifier, batches, epochs)

    return Prepared(_features(encoder, normalize), train, int(encoder.count_params()))


def _prepare_mae(data, budget, seed):
    import keras

    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
    from keras_paperzoo.models.mae import MAE

    x_train = data[0]
    mean, std = x_train.mean(axis=(0, 1, 2)), x_train.std(axis=(0, 1, 2))
    normalize = _normalizer(mean, std)  # MAE's pipeline standardises its inputs (reproductions/mae_cifar.py)
    keras.utils.set_random_seed(seed)
    mae = MAE.from_preset("mae_tiny", image_shape=tuple(x_train.shape[1:]), patch_size=4, seed=seed)

    def train():
        steps, epochs = _schedule(len(x_train), budget["batch_size"], budget["updates"])
        batches = EpochShuffledBatches(normalize(x_train), batch_size=budget["batch_size"], seed=seed,
                                       steps_per_epoch=steps)
        mae.compile(batch_size=budget["batch_size"], steps_per_epoch=steps, epochs=epochs,
                    base_learning_rate=MAE_BASE_LR)
        return _fit(mae, batches, epochs)

    return Prepared(_features(mae.encoder, normalize), train, int(mae.encoder.count_params()))


def _prepare_beit(data, budget, seed):
    """BEiT on visual tokens: a `VisualTokenizer` trained first (`tokenizer_updates`), then MIM for the budget."""
    import keras

    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
    from keras_paperzoo.models.beit import BEiT, BEiTBackbone, VisualTokenizer

    x_train = data[0]
    shape, batch = tuple(x_train.shape[1:]), budget["batch_size"]
    keras.utils.set_random_seed(seed)
    backbone = BEiTBackbone.from_preset("beit_tiny_digits", image_shape=shape)

    def train():
        token_updates = max(1, budget["updates"] // 4)
        keras.utils.set_random_seed(seed)
        tokenizer = VisualTokenizer.from_preset("beit_tokenizer_digits", image_shape=shape, patch_size=4,
                                                temperature_steps=token_updates,
                                                kl_warmup_steps=max(1, token_updates // 4), seed=seed)
        tokenizer.compile(optimizer=tokenizer.paper_optimizer(total_steps=token_updates, learning_rate=TOKENIZER_LR,
                                                              final_learning_rate=TOKENIZER_LR / 80))
        steps, epochs = _schedule(len(x_train), batch, token_updates)
        tokens = _fit(tokenizer, EpochShuffledBatches(x_train, batch_size=batch, seed=seed, steps_per_epoch=steps),
                      epochs)
        beit = BEiT(backbone, tokenizer, target="tokens", seed=seed)
        steps, epochs = _schedule(len(x_train), batch, budget["updates"])
        beit.compile(batch_size=batch, steps_per_epoch=steps, epochs=epochs,
                     base_learning_rate=BEIT_PRETRAIN_LR * 2048 / batch)  # peak lr = BEIT_PRETRAIN_LR
        result = _fit(beit, EpochShuffledBatches(x_train, batch_size=batch, seed=seed, steps_per_epoch=steps), epochs)
        result.update({"tokenizer_updates": tokens["updates"], "tokenizer_final_loss": tokens["final_loss"]})
        return result

    return Prepared(_features(backbone), train, int(backbone.count_params()))


def _prepare_igpt(data, budget, seed):
    import keras

    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
    from keras_paperzoo.models.igpt import IGPT, ColorPalette

    size = budget["igpt_image_size"]
    grey = lambda x: _resize(x[..., :1], size)  # noqa: E731  (N, size, size, 1)
    palette = ColorPalette.fit(grey(data[0]), num_colors=IGPT_COLORS, seed=seed)  # Sec. 3's k-means palette
    ids_train = palette.encode(grey(data[0]))  # (N, size * size) raster order
    keras.utils.set_random_seed(seed)
    igpt = IGPT.from_preset("igpt_mnist_tiny", objective="autoregressive", seed=seed,
                            vocabulary_size=palette.num_colors + 1, max_sequence_length=size * size)
    middle = igpt.backbone.num_layers // 2

    def features(images):
        return igpt.layer_features(palette.encode(grey(images)))[middle]

    def train():
        steps, epochs = _schedule(len(ids_train), budget["batch_size"], budget["updates"])
        batches = EpochShuffledBatches(ids_train, batch_size=budget["batch_size"], seed=seed, steps_per_epoch=steps)
        igpt.compile(optimizer=igpt.paper_optimizer(total_steps=steps * epochs, warmup_steps=max(1, steps * epochs // 20),
                                                    peak_learning_rate=IGPT_LR))
        return _fit(igpt, batches, epochs)

    return Prepared(features, train, int(igpt.backbone.count_params()))


def _resize(images, size):
    """(N, H, W, C) -> (N, size, size, C) by area averaging (H a multiple of size), else as given."""
    n, height, width, channels = images.shape
    if height == size:
        return images
    if height % size or width % size:
        raise ValueError(f"iGPT's image size {size} must divide the images' {height} x {width}.")
    f = height // size
    return images.reshape(n, size, f, size, f, channels).mean(axis=(2, 4)).astype("float32")


def prepare(name, data, budget, seed):
    """Row `name` of `ROWS` built on `data` = (x_train, y_train, x_test, y_test) for `budget`, seeded."""
    if name in (RANDOM_INIT, SUPERVISED):
        return _prepare_shared(name, data, budget, seed)
    if name in RECIPE_METHODS:
        return _prepare_recipe(name, data, budget, seed)
    return {"mae": _prepare_mae, "beit": _prepare_beit, "igpt": _prepare_igpt}[name](data, budget, seed)
