"""The MoCo trainer: He et al. 2020, "Momentum Contrast for Unsupervised Visual
Representation Learning" (https://arxiv.org/abs/1911.05722), and Chen et al. 2020,
"Improved Baselines with Momentum Contrastive Learning" (MoCo v2,
https://arxiv.org/abs/2003.04297).
"""

import numbers

import keras
from keras import ops

from keras_paperzoo.data.ssl_augmentation import MoCoAugmentation
from keras_paperzoo.losses.contrastive import contrastive_accuracy, contrastive_logits, info_nce_from_logits
from keras_paperzoo.layers.l2_normalization import L2Normalization
from keras_paperzoo.training.ema import ema_update
from keras_paperzoo.training.optimizers import ScheduledMomentumSGD
from keras_paperzoo.training.schedules import StepDecay, WarmupCosineDecay
from keras_paperzoo.training.shuffle_bn import grouped_call
from keras_paperzoo.training.compile_state import restore_compile
from keras_paperzoo.models.backbone import deserialize_nested

DEFAULT_TEMPERATURE = {1: 0.07, 2: 0.2}  # MoCo v1 Sec. 4 / MoCo v2 ("--moco-t 0.2")
IMAGENET_IMAGES = 1_281_167


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_pair(inputs):
    return isinstance(inputs, (list, tuple)) and len(inputs) == 2


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class MoCo(keras.Model):
    """Momentum Contrast: a query encoder trained by InfoNCE against a queue of keys.

    One training step is MoCo's Algorithm 1:

    1. Two views of each image: x_q, x_k (given as `x=(x_q, x_k)`, or drawn here
       by `augmentation` from raw images `x`).
    2. Momentum update of the key encoder (eq. 2): theta_k <- m theta_k +
       (1 - m) theta_q, on the parameters (not on batch-norm statistics, as in
       the authors' code). The official code does it at the start of the forward
       pass, as here.
    3. q = normalize(f_q(x_q)); k = normalize(f_k(x_k)) without gradient, the key
       batch shuffled before the key encoder and un-shuffled after (Sec. 3.3).
    4. InfoNCE (eq. 1) over logits [q . k+ | q . queue^T] / tau with the
       positive at index 0; the gradient reaches the query encoder only.
    5. Enqueue the batch's keys and dequeue the oldest: the queue is read for
       the logits before it is written.

    The query encoder is `backbone` + global average pooling (for feature maps)
    + a projection head: v1 a linear layer to `projection_dim` (128); v2 a
    2-layer MLP, `projection_hidden_dim` (2048) wide with ReLU. The key encoder
    is a copy of it (same architecture, initialised equal) whose variables are
    non-trainable and move only by the momentum update. Queue (K, C), pointer
    and key encoder are Keras variables updated with `assign` inside the step:
    JAX threads them through `fit`, and `.keras` files and `BackupAndRestore`
    keep them.

    Shuffle-BN: the authors run 8 GPUs, each normalising its own 32 samples,
    and shuffle the key batch across GPUs. Here each batch is split into
    `shuffle_bn_splits` groups that go through the encoder one at a time, so
    batch norm sees each group's statistics: in the given order for the
    queries, after a random permutation of the whole batch (undone afterwards)
    for the keys (`training/shuffle_bn.py`; the authors' CIFAR demo does the
    same on one device with a `SplitBatchNorm`). Backbones without batch norm
    are unaffected. The batch size must be divisible by `shuffle_bn_splits`,
    and `queue_size` by the batch size (a partial last batch would break the
    ring: drop it).

    Under `keras.distribution.DataParallel` (JAX) the batch is sharded over
    the devices and `fit` runs unchanged. Keras's batch norm then normalises
    over the global batch (measured: synchronised statistics, not the per-GPU
    ones whose leak Shuffling BN fixes), so the per-GPU statistics come from
    the groups: set
    `shuffle_bn_splits` to the number of devices (or a multiple) and each
    group lies on one device. The key permutation then moves samples between
    devices (XLA's exchange) and the permuted batch is laid out over the
    devices again. The groups alone decide the statistics: 4 devices give the
    same loss, queue and weights as one device with 4 groups (tested, 1e-5).
    XLA still moves more data between devices than the paper's one exchange
    (see `training/shuffle_bn.py`).

    Augmentations and the key permutation are drawn from the model's
    `SeedGenerator`s, whose states no checkpoint holds; for runs resumed with
    `BackupAndRestore`, add `keras_paperzoo.callbacks.epoch_seeds.EpochSeeds`
    (as `paperzoo train moco` does), which sets them from (seed, epoch).

    Inference (`model(images)`, `predict`) returns q, the normalised query
    features; `model.encoder` is backbone + pooling, the representation that the
    kNN monitor and the linear probe evaluate (the head is dropped, Sec. 4.1).

    Args:
        backbone: a Keras model with a known input shape mapping images to
            (B, h, w, C) maps or (B, D) features (any Keras model: this
            package's backbones, keras-hub backbones, a `keras.Sequential`).
        version: 1 or 2 (v2: MLP head, tau 0.2; pair with v2 augmentation and
            the cosine schedule, which `compile()` picks).
        queue_size: K, the number of negative keys (65536 in the paper).
        momentum: m in [0, 1] (0.999; m = 0 copies the query encoder every step,
            which the paper reports fails to train).
        temperature: tau > 0; None gives the version's (0.07 v1, 0.2 v2).
        projection_dim: output size C of the head (128).
        projection_hidden_dim: v2's MLP width (2048 in the paper; the authors'
            code uses the backbone's width, equal for ResNet-50).
        shuffle_bn_splits: G >= 1 batch-norm groups (8 in the paper: 8 GPUs).
        augmentation: how views are drawn from raw images: `"default"` (the
            version's `MoCoAugmentation` at the backbone's input size), a dict
            of `MoCoAugmentation` arguments, a Keras layer, or None (then `x`
            must hold two views).
        seed: int or None: the queue's initial values and the key shuffling.

    Metrics: `loss` (InfoNCE) and `contrastive_accuracy` (how often the positive
    has the largest of the K + 1 logits).

    Example:

    ```python
    from keras_paperzoo.models.moco import MoCo
    moco = MoCo.from_preset("moco_v2_resnet20_cifar", queue_size=1024)
    moco.compile(batch_size=128, steps_per_epoch=390, epochs=200)
    moco.fit(cifar_images, batch_size=128, epochs=200)   # raw images in [0, 1]
    features = moco.encoder.predict(test_images)         # (N, 64)
    ```
    """

    def __init__(
        self,
        backbone,
        version=2,
        queue_size=65536,
        momentum=0.999,
        temperature=None,
        projection_dim=128,
        projection_hidden_dim=2048,
        shuffle_bn_splits=8,
        augmentation="default",
        seed=None,
        **kwargs,
    ):
        kwargs.setdefault("name", "moco")
        super().__init__(**kwargs)
        _validate(backbone, version, queue_size, momentum, temperature, projection_dim,
                  projection_hidden_dim, shuffle_bn_splits)
        self.backbone = backbone
        self.version = int(version)
        self.queue_size = int(queue_size)
        self.momentum = float(momentum)
        self.temperature = float(DEFAULT_TEMPERATURE[self.version] if temperature is None else temperature)
        self.projection_dim = int(projection_dim)
        self.projection_hidden_dim = int(projection_hidden_dim)
        self.shuffle_bn_splits = int(shuffle_bn_splits)
        self.seed = seed
        # The constructor argument, for get_config (a layer is serialized from self.augmentation).
        self._augmentation_arg = "layer" if isinstance(augmentation, keras.layers.Layer) else augmentation

        # === Layers ===
        self.augmentation = self._make_augmentation(augmentation)
        self.query_encoder = self._build_encoder(backbone, "query_encoder")
        self.key_encoder = self._build_encoder(keras.models.clone_model(backbone), "key_encoder")
        query_weights, key_weights = self.query_encoder.weights, self.key_encoder.weights
        if [tuple(w.shape) for w in query_weights] != [tuple(w.shape) for w in key_weights]:
            raise ValueError(
                f"The copy of backbone {backbone.name!r} does not have its variables; MoCo needs "
                "a backbone that keras.models.clone_model can copy (serializable)."
            )
        for key_weight, query_weight in zip(key_weights, query_weights):
            # Initialised equal (the authors' param_k.copy_(param_q)); a copy, not a shared buffer.
            key_weight.assign(ops.convert_to_numpy(query_weight))
            key_weight.trainable = False  # no gradient: the layers stay in training mode for BN
        # theta_k <- m theta_k + (1 - m) theta_q over the parameters only.
        self._momentum_pairs = [(k, q) for k, q in zip(key_weights, query_weights) if q.trainable]

        # === State updated outside gradient descent ===
        self.queue = self.add_weight(
            shape=(self.queue_size, self.projection_dim), initializer=self._queue_initializer,
            trainable=False, name="queue",
        )  # (K, C): random unit vectors until real keys arrive
        self.queue_pointer = self.add_weight(
            shape=(), initializer="zeros", dtype="int32", trainable=False, name="queue_pointer"
        )
        self.shuffle_seed = keras.random.SeedGenerator(seed, name="shuffle_seed")
        self.contrastive_accuracy_tracker = keras.metrics.Mean(name="contrastive_accuracy")
        self.built = True

    # --- construction -------------------------------------------------------------
    def _queue_initializer(self, shape, dtype=None):
        values = keras.random.normal(shape, seed=self.seed, dtype=dtype or "float32")
        return values / ops.norm(values, axis=-1, keepdims=True)

    def _make_augmentation(self, augmentation):
        if augmentation is None or isinstance(augmentation, keras.layers.Layer):
            return augmentation
        image_size = tuple(self.backbone.input_shape[1:3])
        if augmentation == "default":
            augmentation = {}
        if not isinstance(augmentation, dict):
            raise ValueError(
                "augmentation must be 'default', a dict of MoCoAugmentation arguments, a Keras layer "
                f"or None; got {augmentation!r}."
            )
        args = {"version": self.version, "seed": self.seed, **augmentation}
        if "image_size" not in args:
            if None in image_size:
                return None  # variable-size backbone: the views must be given
            args["image_size"] = image_size
        return MoCoAugmentation(**args)

    def _build_encoder(self, backbone, name):
        """backbone -> (pool) -> projection head -> L2 normalisation."""
        inputs = keras.Input(backbone.input_shape[1:], name="images")
        features = backbone(inputs)
        if len(features.shape) == 4:
            features = keras.layers.GlobalAveragePooling2D(name="avg_pool")(features)  # (B, D)
        elif len(features.shape) != 2:
            raise ValueError(
                f"MoCo needs a backbone returning (B, D) features or (B, h, w, C) maps; "
                f"{backbone.name} returns shape {tuple(features.shape)}."
            )
        if self.version == 2:  # MoCo v2: fc - ReLU - fc, no batch norm
            features = keras.layers.Dense(self.projection_hidden_dim, activation="relu", name="head_hidden")(features)
        z = keras.layers.Dense(self.projection_dim, name="head")(features)  # (B, C)
        q = L2Normalization(name="l2_normalize")(z)  # finite gradient at z = 0 (UnitNormalization: NaN on JAX, torch)
        return keras.Model(inputs, q, name=name)

    @property
    def encoder(self):
        """backbone + global average pooling: the representation evaluated downstream.

        A new functional model on the shared backbone at each access; it takes images
        as the backbone does (normalised, when the augmentation normalises)."""
        inputs = keras.Input(self.backbone.input_shape[1:], name="images")
        features = self.backbone(inputs)
        if len(features.shape) == 4:
            features = keras.layers.GlobalAveragePooling2D(name="avg_pool")(features)
        return keras.Model(inputs, features, name=f"{self.name}_encoder")

    # --- Algorithm 1 -------------------------------------------------------------
    def call(self, inputs, training=False):
        """q = normalize(f_q(x_q)): the query features (B, C) of the first view or raw images."""
        images = self._view(inputs, 0, training)
        self._check_batch(images, training)
        return self._encode(self.query_encoder, images, training, shuffle=False)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        if y is not None and len(getattr(y, "shape", ())) == 4:
            raise ValueError(
                "MoCo got image-shaped y: pass the two views together as x=(view_q, view_k) "
                "(a dataset element ((view_q, view_k),)); y (labels) is ignored."
            )
        q = y_pred  # (B, C), normalised query features, the only gradient path
        images = self._view(x, 1, training)  # x_k: the second view, an independent draw
        if training:
            self._momentum_update()  # eq. 2, before the keys (as the authors' code)
        k = ops.stop_gradient(self._encode(self.key_encoder, images, training, shuffle=training))  # (B, C)
        queue = ops.stop_gradient(ops.copy(self.queue))  # (K, C), read before the enqueue below
        logits = contrastive_logits(q, k, queue, self.temperature)  # (B, 1 + K), positive at index 0
        loss = info_nce_from_logits(logits)  # eq. 1
        if training:
            self._dequeue_and_enqueue(k)
        self.contrastive_accuracy_tracker.update_state(contrastive_accuracy(logits))
        return loss

    def _view(self, inputs, index, training):
        if _is_pair(inputs):
            return inputs[index]
        if self.augmentation is None:
            if training:
                raise ValueError(
                    "MoCo without augmentation needs two views: x=(view_q, view_k). Got one "
                    f"tensor of shape {tuple(inputs.shape)}; pass views or an augmentation."
                )
            return inputs
        return self.augmentation(inputs, training=training)

    def _check_batch(self, images, training):
        batch = images.shape[0]
        if not training or batch is None:
            return  # unknown until run time (TensorFlow); the ring buffer wraps correctly anyway
        if self.queue_size % batch:
            raise ValueError(
                f"MoCo's queue_size {self.queue_size} must be divisible by the batch size {batch}, "
                "so that the queue is replaced batch by batch (a partial last batch: drop it, "
                "e.g. batch(..., drop_remainder=True))."
            )
        if batch % self.shuffle_bn_splits:
            raise ValueError(
                f"The batch size {batch} must be divisible by shuffle_bn_splits "
                f"{self.shuffle_bn_splits} (the groups batch norm normalises separately)."
            )

    def _encode(self, encoder, images, training, shuffle):
        """encoder(images) with batch norm over `shuffle_bn_splits` groups while training."""
        splits = self.shuffle_bn_splits if training else 1
        seed = self.shuffle_seed if shuffle else None  # Shuffling BN (Sec. 3.3) for the keys
        return grouped_call(encoder, images, splits, training=training, shuffle_seed=seed)

    def _momentum_update(self):
        keys = [k for k, _ in self._momentum_pairs]
        queries = [ops.stop_gradient(q) for _, q in self._momentum_pairs]
        ema_update(keys, queries, self.momentum)

    def _dequeue_and_enqueue(self, keys):
        """Write the (B, C) keys at the pointer (the oldest entries); advance it by B mod K."""
        batch = ops.shape(keys)[0]
        pointer = ops.convert_to_tensor(self.queue_pointer)
        rows = ops.mod(pointer + ops.arange(batch, dtype="int32"), self.queue_size)  # (B,)
        keys = ops.cast(keys, self.queue.dtype)
        self.queue.assign(ops.scatter_update(self.queue, ops.expand_dims(rows, -1), keys))
        self.queue_pointer.assign(ops.mod(pointer + ops.cast(batch, "int32"), self.queue_size))

    # --- compile with the paper's recipe --------------------------------------------
    def compile(self, optimizer=None, loss=None, metrics=None, batch_size=256, steps_per_epoch=None,
                epochs=None, learning_rate=None, schedule=None, weight_decay=1e-4, **kwargs):
        """The paper's SGD when `optimizer` is None (see `moco_optimizer`).

        Args:
            batch_size: the run's batch size, for lr = 0.03 x batch / 256.
            steps_per_epoch, epochs: the run's length, to place the schedule
                (default: 200 ImageNet epochs at this batch size).
            learning_rate, schedule, weight_decay: overrides of the recipe.
            **kwargs: passed to `keras.Model.compile` (e.g. `jit_compile`).
        """
        if loss is not None or metrics is not None:
            raise ValueError(
                "MoCo's loss (InfoNCE) and metrics are fixed; compile() takes no loss= or metrics=."
            )
        if optimizer is None:
            optimizer = moco_optimizer(self.version, batch_size, steps_per_epoch, epochs,
                                       learning_rate=learning_rate, schedule=schedule,
                                       weight_decay=weight_decay)
        super().compile(optimizer=optimizer, **kwargs)

    def compile_from_config(self, config):
        restore_compile(self, config)  # what was saved, not compile()'s paper defaults

    # --- config -------------------------------------------------------------------
    def get_config(self):
        augmentation = self._augmentation_arg
        if augmentation == "layer":
            augmentation = keras.saving.serialize_keras_object(self.augmentation)
        return {
            "backbone": keras.saving.serialize_keras_object(self.backbone),
            "version": self.version,
            "queue_size": self.queue_size,
            "momentum": self.momentum,
            "temperature": self.temperature,
            "projection_dim": self.projection_dim,
            "projection_hidden_dim": self.projection_hidden_dim,
            "shuffle_bn_splits": self.shuffle_bn_splits,
            "augmentation": augmentation,
            "seed": self.seed,
            "name": self.name,
            "trainable": self.trainable,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**deserialize_nested(config, "backbone", "augmentation"))

    @classmethod
    def from_preset(cls, name, image_shape=None, **overrides):
        """Build a named configuration (`MOCO_PRESETS`); any MoCo argument may be overridden,
        `image_shape` resizes the preset's backbone, `backbone=` replaces it."""
        from keras_paperzoo.models.moco.moco_presets import build_from_preset

        return build_from_preset(cls, name, image_shape=image_shape, **overrides)


def moco_optimizer(version=2, batch_size=256, steps_per_epoch=None, epochs=None, learning_rate=None,
                   schedule=None, weight_decay=1e-4):
    """MoCo's SGD: momentum 0.9, coupled weight decay 1e-4, lr 0.03 x batch / 256.

    v1: x0.1 at epochs 120 and 160 of 200 (`schedule="step"`); v2: cosine decay
    to 0 (`"cosine"`; the authors decay per epoch, this per update). The drops
    sit at the same fractions of a run of `steps_per_epoch` x `epochs` updates;
    without them, 200 epochs of ImageNet at this batch size.
    """
    if not _is_int(batch_size) or batch_size < 1:
        raise ValueError(f"batch_size must be an int >= 1; got {batch_size!r}.")
    schedule = schedule or ("step" if version == 1 else "cosine")
    if schedule not in ("step", "cosine"):
        raise ValueError(f"schedule must be 'step' or 'cosine'; got {schedule!r}.")
    learning_rate = 0.03 * batch_size / 256 if learning_rate is None else float(learning_rate)
    steps_per_epoch = steps_per_epoch or max(1, IMAGENET_IMAGES // batch_size)
    total = int(steps_per_epoch) * int(epochs or 200)
    if schedule == "step":
        boundaries = sorted({max(1, round(total * 120 / 200)), max(1, round(total * 160 / 200))})
        rate = StepDecay(learning_rate, boundaries=boundaries, factor=0.1)
    else:
        rate = WarmupCosineDecay(learning_rate, warmup_steps=0, total_steps=total)
    return ScheduledMomentumSGD(rate, momentum=0.9, l2=weight_decay)


def _validate(backbone, version, queue_size, momentum, temperature, projection_dim,
              projection_hidden_dim, shuffle_bn_splits):
    """Check MoCo's arguments; each message names the value and the rule."""
    if not isinstance(backbone, keras.Model):
        raise ValueError(f"MoCo needs a keras.Model backbone; got {type(backbone).__name__}.")
    try:
        input_shape = backbone.input_shape
    except (AttributeError, ValueError):
        input_shape = None
    if not isinstance(input_shape, tuple) or len(input_shape) != 4:
        raise ValueError(
            f"MoCo needs a backbone with a known image input shape (B, H, W, C), e.g. built on "
            f"keras.Input; {backbone.name} has input shape {input_shape}."
        )
    if version not in (1, 2):
        raise ValueError(f"version must be 1 or 2; got {version!r}.")
    for name, value in (("queue_size", queue_size), ("projection_dim", projection_dim),
                        ("projection_hidden_dim", projection_hidden_dim),
                        ("shuffle_bn_splits", shuffle_bn_splits)):
        if not _is_int(value) or value < 1:
            raise ValueError(f"{name} must be an int >= 1; got {value!r}.")
    if not (isinstance(momentum, numbers.Real) and 0.0 <= momentum <= 1.0):
        raise ValueError(f"momentum m must be in [0, 1]; got {momentum!r}.")
    if temperature is not None and not (isinstance(temperature, numbers.Real) and temperature > 0):
        raise ValueError(f"temperature must be > 0 (or None for the version's); got {temperature!r}.")
