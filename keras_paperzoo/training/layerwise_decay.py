"""Layer-wise learning-rate decay for fine-tuning ViT encoders (BEiT, Bao et al. 2022; MAE, He et al. 2022).

MAE fine-tunes its pre-trained ViT with "layer-wise lr decay" (MAE App. A.2,
following BEiT): the layers are numbered from the input, the patch / position
embeddings and class token being layer 0, Transformer block i layer i + 1, and
everything after the last block (final norm, classification head) layer L + 1; a
variable of layer l is updated at

    lr_l = lr * layer_decay ** (L + 1 - l)

so the head learns at the full rate and the embeddings at layer_decay^(L+1) of it
(0.65 for ViT-B, 0.75 for ViT-L/H in MAE). Weight decay is decoupled and, as in the
MAE recipe, skips biases, normalisation parameters, position embeddings and the
class token.

Built as a `keras.optimizers.MultiOptimizer`: one inner optimizer per layer, each
with the base optimizer's settings and its scaled learning rate, variables routed
by their `path`. It is an ordinary `model.optimizer`: `fit` runs it on every
backend, and `.keras` files save and restore it (routing and state).
"""

import re

import keras

from keras_paperzoo.training.selective_decay import SelectiveDecayAdamW

EMBEDDING_NO_DECAY_PATHS = ("position_embedding", "class_token")


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class ScaledSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """`scale * schedule(step)`: one layer's share of a learning-rate schedule.

    Example:

    ```python
    ScaledSchedule(WarmupCosineDecay(1e-3, 100, 1000), scale=0.65 ** 13)
    ```
    """

    def __init__(self, schedule, scale):
        if isinstance(schedule, dict):
            schedule = keras.optimizers.schedules.deserialize(schedule)
        self.schedule = schedule
        self.scale = float(scale)

    def __call__(self, step):
        return self.scale * self.schedule(step)

    def get_config(self):
        return {"schedule": keras.optimizers.schedules.serialize(self.schedule), "scale": self.scale}


def _find_backbone(model):
    """`model`, or the one layer inside it, with a `layer_groups()` method (a ViT-like backbone)."""
    if callable(getattr(model, "layer_groups", None)):
        return model
    found = [layer for layer in model._flatten_layers(include_self=False)
             if callable(getattr(layer, "layer_groups", None))]
    if len(found) != 1:
        raise ValueError(
            f"layerwise_decay_optimizer needs exactly one ViTBackbone or BEiTBackbone (a backbone with "
            f"layer_groups()) inside {model.name!r} (found {len(found)}); pass backbone=... to choose it."
        )
    return found[0]


def vit_layer_ids(model, backbone=None):
    """{id(variable): layer id} for `model`'s trainable variables, and L = the ViT's depth.

    The layers are the backbone's `layer_groups()` (L + 2 lists of variables): layer 0
    the embeddings (hybrid stem, patch embedding, class token, position embedding, a
    BEiT's [M] embedding, as BEiT's `get_num_layer_for_vit`); layer i + 1 Transformer
    block i (relative-position tables included); L + 1 the rest of the backbone and
    every variable of `model` outside it (the final norm, heads).
    """
    groups = (backbone if backbone is not None else _find_backbone(model)).layer_groups()
    depth = len(groups) - 2
    ids = {id(variable): layer for layer, group in enumerate(groups) for variable in group}
    layer_of = {id(v): ids.get(id(v), depth + 1) for v in model.trainable_variables}
    return layer_of, depth


def _optimizer_settings(optimizer):
    config = optimizer.get_config()
    learning_rate = config.pop("learning_rate")
    if isinstance(learning_rate, dict):
        learning_rate = keras.optimizers.schedules.deserialize(learning_rate)
    config.pop("name", None)
    return type(optimizer), config, learning_rate


def layerwise_decay_optimizer(model, optimizer=None, layer_decay=0.65, backbone=None,
                              no_decay_paths=EMBEDDING_NO_DECAY_PATHS):
    """A `MultiOptimizer` giving each ViT layer lr * layer_decay ** (L + 1 - layer id).

    Args:
        model: the model to fine-tune (e.g. `ImageClassifier(vit_backbone, K)`); its
            trainable variables are routed now, so build it first.
        optimizer: the base optimizer whose settings every layer copies, its learning
            rate (float or schedule) scaled per layer. Default:
            `SelectiveDecayAdamW(2e-3, weight_decay=0.05, beta_2=0.999)`, MAE's ViT-B
            fine-tuning optimizer (blr 5e-4 x batch 1024 / 256 = 2e-3); pass one with
            your schedule, e.g. `WarmupCosineDecay` over 5 warmup epochs of 100.
            A `SelectiveDecayAdamW` base also keeps biases, norms and `no_decay_paths`
            free of weight decay.
        layer_decay: float in (0, 1]: 0.65 for ViT-B, 0.75 for ViT-L/H (MAE App. A.2).
        backbone: the `ViTBackbone` (or `BEiTBackbone`: any backbone with `layer_groups()`)
            whose groups define the layers; found inside `model` when omitted.
        no_decay_paths: regexes of variable paths without weight decay (position
            embeddings, class token), used with a `SelectiveDecayAdamW` base.

    Returns:
        `keras.optimizers.MultiOptimizer`; `learning_rate_of(opt, variable)` reads a
        variable's current rate.

    Example:

    ```python
    model = ImageClassifier(mae.encoder, num_classes=10)
    schedule = WarmupCosineDecay(2e-3, warmup_steps=5 * 390, total_steps=100 * 390)
    model.compile(optimizer=layerwise_decay_optimizer(
        model, SelectiveDecayAdamW(schedule, weight_decay=0.05), layer_decay=0.65))
    ```
    """
    if isinstance(layer_decay, bool) or not isinstance(layer_decay, (int, float)) or not 0.0 < layer_decay <= 1.0:
        raise ValueError(f"layer_decay must be in (0, 1] (1 = no decay); got {layer_decay!r}.")
    if optimizer is None:
        optimizer = SelectiveDecayAdamW(2e-3, weight_decay=0.05, beta_2=0.999)
    if isinstance(optimizer, keras.optimizers.MultiOptimizer):
        raise ValueError("optimizer must be a single Keras optimizer (the per-layer template), not a MultiOptimizer.")
    if not model.trainable_variables:
        raise ValueError(f"Model {model.name!r} has no trainable variables yet; build it before routing them.")
    layer_of, depth = vit_layer_ids(model, backbone)
    cls, config, learning_rate = _optimizer_settings(optimizer)
    if cls is SelectiveDecayAdamW:
        config["no_decay_paths"] = sorted(set(config.get("no_decay_paths", [])) | set(no_decay_paths))

    paths = {}
    for variable in model.trainable_variables:
        if variable.path in paths:
            raise ValueError(
                f"Two trainable variables share the path {variable.path!r}; layer-wise decay routes by path. "
                "Give the layers distinct names."
            )
        paths[variable.path] = layer_of[id(variable)]

    def make(layer):
        scale = layer_decay ** (depth + 1 - layer)
        rate = ScaledSchedule(learning_rate, scale) if callable(learning_rate) else float(learning_rate) * scale
        return cls(**dict(config, learning_rate=rate, name=f"layer_{layer}"))

    routes = {}
    for layer in sorted(set(paths.values())):
        members = [re.escape(p) for p, l in paths.items() if l == layer]
        routes["|".join(members)] = make(layer)
    default = make(depth + 1)  # anything created later learns at the full rate
    return keras.optimizers.MultiOptimizer(
        keras.optimizers.OptimizerMap(default, routes), name="layerwise_decay"
    )


def learning_rate_of(optimizer, variable):
    """The current learning rate `optimizer` (a MultiOptimizer or a plain one) applies to `variable`."""
    if isinstance(optimizer, keras.optimizers.MultiOptimizer):
        optimizer = optimizer._optimizer_map(variable)
    return float(keras.ops.convert_to_numpy(optimizer.learning_rate))
