"""`ImageClassifier`: any backbone plus the paper's classification head and recipe."""

import keras

from keras_paperzoo.training.optimizers import ScheduledMomentumSGD
from keras_paperzoo.training.schedules import StepDecay, WarmupCosineDecay
from keras_paperzoo.training.compile_state import restore_compile
from keras_paperzoo.models.backbone import deserialize_nested

# ResNet's classifier (He et al. 2016: global average pooling, then a fully connected
# layer with softmax; Sec. 3.4 and 4.2). The paper initialises "as in [13]" (He et al.
# 2015), whose std sqrt(2 / fan) is derived for ReLU convolutions (ResNetBackbone does
# that); for the final linear layer it leaves the choice open. We take N(0, 0.01), the
# classifier initialisation of the Caffe-era papers the ResNet recipe descends from
# (AlexNet Sec. 5, VGG Sec. 3.1), because it starts the softmax near uniform (loss
# ~ log K). The alternatives do not: a v1 residual stream grows with depth (the
# pooled CIFAR ResNet-56 features have rms ~2.7 and are mostly a common positive
# offset), so Keras's glorot_uniform (std 0.16 for 64 -> 10) starts ResNet-20 / 56 at a
# loss of ~4.2 / 4.8 and torch's Linear default U(+-1/sqrt(64)) at ~2.6 / 3.3 (5 seeds,
# one batch of normalised CIFAR-10; applications/results/resnet_cifar_results.md).
RESNET_HEAD_INITIALIZER = {"class_name": "RandomNormal", "config": {"mean": 0.0, "stddev": 0.01}}

# ViT's classifier: "a zero-initialized D x K feedforward layer" (Dosovitskiy et al. 2021,
# Sec. 3.1 and App. B.1.1, for fine-tuning; the official code's `head` is zero-initialised
# for training from scratch too). The softmax starts exactly uniform (loss log K).
VIT_HEAD_INITIALIZER = "zeros"

# Each paper's optimisation recipe, by backbone class (the `compile()` defaults).
# Step drops are placed at fractions of the run so that shorter runs keep the
# paper's shape; where the paper divided "when the validation error stopped
# improving" (AlexNet, VGG, ResNet on ImageNet) the drops sit where they fell in
# the paper's runs (about every third of training; torchvision's 30/60 of 90).
PAPER_RECIPES = {
    "AlexNetBackbone": {  # Krizhevsky et al. 2012, Sec. 5
        "optimizer": "sgd", "learning_rate": 0.01, "momentum": 0.9, "l2": 5e-4,
        "drops": (1 / 3, 2 / 3, 8 / 9), "epochs": 90, "batch_size": 128,
    },
    "VGGBackbone": {  # Simonyan & Zisserman 2015, Sec. 3.1
        "optimizer": "sgd", "learning_rate": 0.01, "momentum": 0.9, "l2": 5e-4,
        "drops": (1 / 3, 2 / 3, 8 / 9), "epochs": 74, "batch_size": 256,
    },
    "ResNetBackbone": {  # He et al. 2016, Sec. 3.4 (ImageNet)
        "optimizer": "sgd", "learning_rate": 0.1, "momentum": 0.9, "l2": 1e-4,
        "drops": (1 / 3, 2 / 3), "epochs": 90, "batch_size": 256,
        "head_initializer": RESNET_HEAD_INITIALIZER,
    },
    "ResNetBackbone/cifar": {  # He et al. 2016, Sec. 4.2: /10 at 32k and 48k, stop at 64k
        "optimizer": "sgd", "learning_rate": 0.1, "momentum": 0.9, "l2": 1e-4,
        "drops": (0.5, 0.75), "total_steps": 64000, "batch_size": 128,
        "head_initializer": RESNET_HEAD_INITIALIZER,
    },
    "ViTBackbone": {  # Dosovitskiy et al. 2021, Sec. 4.1 and Table 3 (ImageNet from scratch)
        "optimizer": "adamw", "learning_rate": 3e-3, "beta_2": 0.999, "weight_decay": 0.3,
        "warmup_steps": 10000, "total_steps": 300 * 1251, "clipnorm": 1.0, "batch_size": 4096,
        "head_initializer": VIT_HEAD_INITIALIZER,
    },
    "ViTBackbone/fine_tune": {  # Sec. 4.1 / App. B.1.1: SGD 0.9, cosine, clip at global norm 1
        "optimizer": "sgd_cosine", "learning_rate": 0.01, "momentum": 0.9,
        "warmup_steps": 500, "total_steps": 10000, "clipnorm": 1.0, "batch_size": 512,
    },
}


def _recipe_name(backbone, fine_tune=False):
    name = type(backbone).__name__
    if name == "ResNetBackbone" and getattr(backbone, "stem", None) == "cifar":
        name = "ResNetBackbone/cifar"
    if name == "ViTBackbone" and fine_tune:
        name = "ViTBackbone/fine_tune"
    return name


def paper_recipe(backbone, fine_tune=False):
    """The recipe entry of PAPER_RECIPES for this backbone (see its comments)."""
    return dict(PAPER_RECIPES.get(_recipe_name(backbone, fine_tune), PAPER_RECIPES["ResNetBackbone"]))


def head_initializer(backbone):
    """The paper's classifier-kernel initialiser for `backbone`; Keras's default
    (glorot_uniform) for backbones without a recipe entry that names one."""
    recipe = PAPER_RECIPES.get(_recipe_name(backbone), {})
    return keras.initializers.get(recipe.get("head_initializer", "glorot_uniform"))


def paper_optimizer(backbone, steps_per_epoch=None, epochs=None, fine_tune=False, warmup_steps=0):
    """The paper's optimizer and schedule for `backbone`, fitted to the run's length.

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
class ImageClassifier(keras.Model):
    """A backbone, global average pooling when it returns a feature map, and a linear head.

    `compile()` with no arguments gives the backbone's paper recipe (`PAPER_RECIPES`):
    AlexNet / VGG / ResNet SGD with momentum 0.9, coupled weight decay and step
    drops; ViT AdamW with warmup and cosine decay and gradient clipping at global
    norm 1 (the paper decays linearly or by cosine; we use cosine).
    Label smoothing: none of these papers used it, so the default is 0.
    `compile(warmup_steps=...)` adds He et al.'s lr / 10 warm-up to the SGD step recipes
    (`paper_optimizer`). The classifier kernel starts from the paper's initialiser
    where the recipe names one (ResNet: N(0, 0.01), see `RESNET_HEAD_INITIALIZER`),
    else Keras's glorot_uniform.

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

    def compile(self, optimizer=None, loss=None, metrics=None, steps_per_epoch=None, epochs=None,
                fine_tune=False, label_smoothing=0.0, warmup_steps=0, **kwargs):
        if optimizer is None:
            optimizer = paper_optimizer(self.backbone, steps_per_epoch, epochs, fine_tune, warmup_steps)
        if loss is None:
            from_logits = self.activation is None
            if label_smoothing:
                loss = keras.losses.CategoricalCrossentropy(from_logits=from_logits, label_smoothing=label_smoothing)
            else:
                loss = keras.losses.SparseCategoricalCrossentropy(from_logits=from_logits)
        if metrics is None:
            sparse = not label_smoothing
            metrics = [keras.metrics.SparseCategoricalAccuracy(name="accuracy") if sparse
                       else keras.metrics.CategoricalAccuracy(name="accuracy")]
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics, **kwargs)

    def compile_from_config(self, config):
        restore_compile(self, config)  # what was saved, not compile()'s paper defaults

    def get_config(self):
        return {
            "backbone": keras.saving.serialize_keras_object(self.backbone),
            "num_classes": self.num_classes,
            "dropout": self.dropout,
            "activation": self.activation,
            "name": self.name,
            "trainable": self.trainable,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**deserialize_nested(config, "backbone"))
