"""`ImageClassifier`: any backbone plus the paper's classification head and recipe."""

import copy

import keras
import numpy as np

from keras_paperzoo.data.checks import check_labels_in_range
from keras_paperzoo.models.trainer import Trainer
from keras_paperzoo.training.optimizers import ScheduledMomentumSGD
from keras_paperzoo.training.schedules import StepDecay, WarmupCosineDecay


def paper_recipe(backbone, fine_tune=False):
    """The backbone's paper recipe: what its `classification_recipe(fine_tune)` returns.

    Each backbone declares its own, beside it (`AlexNetBackbone`, `VGGBackbone`,
    `ResNetBackbone`: CIFAR-10's with the CIFAR stem, `ViTBackbone`: the fine-tuning one
    with `fine_tune`); a backbone without one (a `keras.Sequential`, a keras-hub
    backbone) gets a ValueError that says to pass `compile(optimizer=...)`.
    """
    method = getattr(backbone, "classification_recipe", None)
    recipe = None if method is None else method(fine_tune=fine_tune)
    if recipe is None:
        raise ValueError(
            f"ImageClassifier has no paper recipe for a {type(backbone).__name__} backbone (a backbone "
            "declares one with a `classification_recipe(fine_tune)` method, as AlexNetBackbone, VGGBackbone, "
            "ResNetBackbone and ViTBackbone do); pass compile(optimizer=...)."
        )
    return copy.deepcopy(recipe)


def head_initializer(backbone):
    """The classifier kernel's initialiser: the one the backbone's recipe names (ResNet: N(0, 0.01),
    ViT: zeros), else Keras's default, glorot_uniform (AlexNet, VGG, backbones without a recipe)."""
    method = getattr(backbone, "classification_recipe", None)
    recipe = (method() if method is not None else None) or {}
    return keras.initializers.get(copy.deepcopy(recipe.get("head_initializer", "glorot_uniform")))


def paper_optimizer(backbone, steps_per_epoch=None, epochs=None, fine_tune=False, warmup_steps=0):
    """The paper's optimizer and schedule for `backbone` (its `paper_recipe`), fitted to the run's length.

    A recipe is a dict: "optimizer" ("sgd": momentum SGD with coupled L2 and step drops of
    /10 at the fractions "drops" of the run; "sgd_cosine": momentum SGD, warmup then cosine,
    clipped at global norm "clipnorm"; "adamw": AdamW with "beta_2" and "weight_decay",
    warmup then cosine, clipped), "learning_rate", the run's length ("epochs" of ImageNet at
    "batch_size", or "total_steps"), "warmup_steps" for the cosine ones and optionally
    "head_initializer". Step drops sit at fractions of the run so that shorter runs keep
    the paper's shape; where the paper divided "when the validation error stopped
    improving" (AlexNet, VGG, ResNet on ImageNet) they sit where they fell in its runs.

    Args:
        steps_per_epoch, epochs: the run's length; when omitted, the paper's.
        fine_tune: ViT only: the fine-tuning recipe (SGD, cosine) instead of Adam.
        warmup_steps: SGD step recipes only: train at lr / 10 for this many updates
            first, then follow the step schedule. He et al. 2016, Sec. 4.2 does this for
            ResNet-110 on CIFAR ("0.01 to warm up the training until the training error is
            below 80% (about 400 iterations), and then go back to 0.1"), because 0.1 is
            too large to start converging; the paper's default is 0 (no warm-up).
    """
    recipe = paper_recipe(backbone, fine_tune)
    if steps_per_epoch and epochs:
        total = int(steps_per_epoch) * int(epochs)
    elif "total_steps" in recipe:
        total = recipe["total_steps"]
    else:
        total = recipe["epochs"] * (1_281_167 // recipe["batch_size"])  # ImageNet epochs
    kind = recipe["optimizer"]
    if kind == "sgd":
        boundaries = sorted({max(1, int(total * f)) for f in recipe["drops"]})
        schedule = StepDecay(recipe["learning_rate"], boundaries=boundaries, factor=0.1)
        if warmup_steps:
            if not (isinstance(warmup_steps, int) and 0 < warmup_steps < boundaries[0]):
                raise ValueError(
                    f"warmup_steps should be an int between 0 and the first lr drop "
                    f"(update {boundaries[0]} of {total}); got {warmup_steps!r}."
                )
            lr = recipe["learning_rate"]
            # lr / 10 for updates 0 .. warmup_steps - 1, then lr, then / 10 from each drop on
            # (PiecewiseConstantDecay switches after a boundary, StepDecay at it: hence the -1).
            schedule = keras.optimizers.schedules.PiecewiseConstantDecay(
                [warmup_steps - 1] + [b - 1 for b in boundaries],
                [lr * 0.1, lr] + [lr * 0.1 ** (i + 1) for i in range(len(boundaries))],
            )
        return ScheduledMomentumSGD(schedule, momentum=recipe["momentum"], l2=recipe["l2"])
    if warmup_steps:
        raise ValueError(f"warmup_steps={warmup_steps!r}: only the SGD step recipes take it; "
                         f"the {kind!r} recipe has its own warmup.")
    warmup = min(recipe["warmup_steps"], max(total // 10, 1))
    schedule = WarmupCosineDecay(recipe["learning_rate"], warmup_steps=warmup, total_steps=max(total, warmup))
    if kind == "sgd_cosine":
        return ScheduledMomentumSGD(schedule, momentum=recipe["momentum"], global_clipnorm=recipe["clipnorm"])
    return keras.optimizers.AdamW(
        schedule, beta_2=recipe["beta_2"], weight_decay=recipe["weight_decay"], global_clipnorm=recipe["clipnorm"]
    )


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class ImageClassifier(Trainer, keras.Model):
    """A backbone, global average pooling when it returns a feature map, and a linear head.

    `compile()` with no arguments gives the backbone's paper recipe, which each backbone
    declares beside itself (`classification_recipe(fine_tune)`, see `paper_recipe`):
    AlexNet / VGG / ResNet SGD with momentum 0.9, coupled weight decay and step
    drops (ResNet with the CIFAR stem: the CIFAR-10 schedule); ViT AdamW with warmup and
    cosine decay and gradient clipping at global norm 1 (the paper decays linearly or by
    cosine; we use cosine), or with `compile(fine_tune=True)` its fine-tuning SGD.
    A backbone without a recipe (a `keras.Sequential`, a keras-hub backbone) needs
    `compile(optimizer=...)`: `compile()` without one raises a ValueError naming it.
    Label smoothing: none of these papers used it, so the default is 0.
    `compile(warmup_steps=...)` adds He et al.'s lr / 10 warm-up to the SGD step recipes
    (`paper_optimizer`). The classifier kernel starts from the paper's initialiser
    where the recipe names one (ResNet: N(0, 0.01), see `RESNET_HEAD_INITIALIZER` in
    `resnet_presets.py`; ViT: zeros), else Keras's default, glorot_uniform (AlexNet, VGG
    and backbones without a recipe).

    Args:
        backbone: a Keras model mapping images to (B, D) features or (B, h, w, C) maps.
        num_classes: int >= 2.
        dropout: dropout rate before the head (0 by default).
        activation: None (logits, the default) or "softmax".

    Example:

    ```python
    backbone = ResNetBackbone.from_preset("resnet20_cifar")
    model = ImageClassifier(backbone, num_classes=10)
    model.compile(steps_per_epoch=391, epochs=164)  # the paper's 64k updates
    model.compile(steps_per_epoch=391, epochs=164, warmup_steps=400)  # as for ResNet-110
    ```
    """

    def __init__(self, backbone, num_classes, dropout=0.0, activation=None, **kwargs):
        if not isinstance(num_classes, int) or num_classes < 2:
            raise ValueError(f"num_classes must be an int >= 2; got {num_classes!r}.")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1); got {dropout!r}.")
        # === Layers ===
        pool = keras.layers.GlobalAveragePooling2D(name="avg_pool")
        drop = keras.layers.Dropout(dropout, name="head_dropout")
        head = keras.layers.Dense(
            num_classes, activation=activation, kernel_initializer=head_initializer(backbone), name="predictions"
        )
        # === Functional Model ===
        inputs = keras.Input(backbone.input_shape[1:], name="images")
        features = backbone(inputs)
        if len(features.shape) == 4:
            features = pool(features)
        elif len(features.shape) != 2:
            raise ValueError(
                f"ImageClassifier needs a backbone returning (B, D) or (B, h, w, C); "
                f"{backbone.name} returns shape {tuple(features.shape)}."
            )
        outputs = head(drop(features) if dropout else features)
        super().__init__(inputs, outputs, **kwargs)
        # === Config ===
        self.backbone = backbone
        self.num_classes = num_classes
        self.dropout = dropout
        self.activation = activation

    # --- the data boundary ------------------------------------------------------------------
    def check_inputs(self, x, y, batch_size=None, examples=None, drop_remainder=False):
        """Class ids in [0, num_classes) (one-hot / smoothed targets: finite, checked by `fit`)."""
        if y is None or not isinstance(y, np.ndarray):
            return
        if np.issubdtype(y.dtype, np.floating) and y.ndim >= 2 and y.shape[-1] == self.num_classes > 1:
            return  # one-hot rows
        check_labels_in_range(y, self.num_classes, "y", "the ImageClassifier's")

    # --- compile with the paper's recipe ------------------------------------------------
    def paper_optimizer(self, steps_per_epoch=None, epochs=None, fine_tune=False, warmup_steps=0):
        """The backbone's paper optimizer and schedule (module `paper_optimizer`)."""
        return paper_optimizer(self.backbone, steps_per_epoch, epochs, fine_tune, warmup_steps)

    def paper_loss(self, label_smoothing=0.0):
        """Cross-entropy on the logits (or probabilities with `activation="softmax"`); one-hot with smoothing."""
        from_logits = self.activation is None
        if label_smoothing:
            return keras.losses.CategoricalCrossentropy(from_logits=from_logits, label_smoothing=label_smoothing)
        return keras.losses.SparseCategoricalCrossentropy(from_logits=from_logits)

    def paper_metrics(self, label_smoothing=0.0):
        if label_smoothing:
            return [keras.metrics.CategoricalAccuracy(name="accuracy")]
        return [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]
