"""The MoCo trainer: He et al. 2020, "Momentum Contrast for Unsupervised Visual
Representation Learning" (https://arxiv.org/abs/1911.05722), and Chen et al. 2020,
"Improved Baselines with Momentum Contrastive Learning" (MoCo v2,
https://arxiv.org/abs/2003.04297).
"""

import keras
from keras import ops

from keras_paperzoo.models.moco.moco_augmentation import MoCoAugmentation
from keras_paperzoo.layers.feature_queue import FeatureQueue
from keras_paperzoo.layers.l2_normalization import L2Normalization
from keras_paperzoo.layers.projection_head import ProjectionHead
from keras_paperzoo.losses.contrastive import contrastive_accuracy, contrastive_logits, info_nce_from_logits
from keras_paperzoo.models.checks import check_choice, check_int, check_number
from keras_paperzoo.models.moco.moco_presets import MOCO_PRESETS
from keras_paperzoo.models.self_supervised import SelfSupervisedTrainer, check_backbone
from keras_paperzoo.training.momentum import MomentumEncoder
from keras_paperzoo.training.shuffle_bn import grouped_call
from keras_paperzoo.training.ssl_sgd import contrastive_sgd

DEFAULT_TEMPERATURE = {1: 0.07, 2: 0.2}  # MoCo v1 Sec. 4 / MoCo v2 ("--moco-t 0.2")


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class MoCo(SelfSupervisedTrainer, keras.Model):
    """Momentum Contrast: a query encoder trained by InfoNCE against a queue of keys.

    One training step is MoCo's Algorithm 1:

    1. Two views of each image: x_q, x_k (given as `x=(x_q, x_k)`, or drawn here
       by `augmentation` from raw images `x`).
    2. Momentum update of the key encoder (eq. 2): theta_k <- m theta_k +
       (1 - m) theta_q, on the parameters (not on batch-norm statistics, as in
       the authors' code), at the start of the step as the official code does
       (`training/momentum.py`).
    3. q = normalize(f_q(x_q)); k = normalize(f_k(x_k)) without gradient, the key
       batch shuffled before the key encoder and un-shuffled after (Sec. 3.3).
    4. InfoNCE (eq. 1) over logits [q . k+ | q . queue^T] / tau with the
       positive at index 0; the gradient reaches the query encoder only.
    5. Enqueue the batch's keys and dequeue the oldest (`layers/feature_queue.py`):
       the queue is read for the logits before it is written.

    The query encoder is `backbone` + global average pooling (for feature maps)
    + a `ProjectionHead`: v1 a linear layer to `projection_dim` (128); v2 a
    2-layer MLP, `projection_hidden_dim` (2048) wide with ReLU and no batch
    norm. The key encoder is a `MomentumEncoder` copy of it (same
    architecture, initialised equal) whose variables are non-trainable and move
    only by the momentum update. Queue, pointer and key encoder are Keras
    variables updated with `assign` inside the step: JAX threads them through
    `fit`, and `.keras` files and `BackupAndRestore` keep them.

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
    over the global batch (synchronised statistics, not the per-GPU ones whose
    leak Shuffling BN fixes), so the per-GPU statistics come from the groups:
    set `shuffle_bn_splits` to the number of devices (or a multiple) and each
    group lies on one device. 4 devices give the same loss, queue and weights
    as one device with 4 groups (tested, 1e-5).

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
        num_classes: None, or the number of classes of an online linear
            classifier on the stop-gradient representation of x_q, trained when
            `fit` gets labels (`probe_accuracy`).
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

    batch_rule = "shuffling BN (Sec. 3.3) normalises each key over other images than its query's"
    presets = MOCO_PRESETS

    def __init__(self, backbone, version=2, queue_size=65536, momentum=0.999, temperature=None,
                 projection_dim=128, projection_hidden_dim=2048, shuffle_bn_splits=8, augmentation="default",
                 num_classes=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        _validate(type(self).__name__, backbone, version, queue_size, momentum, temperature, projection_dim,
                  projection_hidden_dim, shuffle_bn_splits)
        self.version = int(version)
        self.queue_size = int(queue_size)
        self.momentum = float(momentum)
        self.temperature = float(DEFAULT_TEMPERATURE[self.version] if temperature is None else temperature)
        self.projection_dim = int(projection_dim)
        self.projection_hidden_dim = int(projection_hidden_dim)
        self.shuffle_bn_splits = int(shuffle_bn_splits)
        self._setup(backbone, augmentation, num_classes, seed)

        # === Layers ===
        widths = (self.projection_dim,) if self.version == 1 else (self.projection_hidden_dim, self.projection_dim)
        self.head = ProjectionHead(widths, name="head")  # v2: fc - ReLU - fc, no batch norm
        self.normalize = L2Normalization(name="l2_normalize")  # finite gradient at z = 0
        inputs = keras.Input(backbone.input_shape[1:], name="images")
        self.query_encoder = keras.Model(inputs, self.query_outputs(inputs), name="query_encoder")
        self.momentum_encoder = MomentumEncoder(self.query_encoder, self.momentum, name="key_encoder")

        # === State updated outside gradient descent ===
        self.key_queue = FeatureQueue(self.queue_size, self.projection_dim, seed=seed, name="queue")
        self.shuffle_seed = keras.random.SeedGenerator(seed, name="shuffle_seed")
        self.contrastive_accuracy_tracker = keras.metrics.Mean(name="contrastive_accuracy")
        self.built = True

    def query_outputs(self, images):
        """The query encoder's output on symbolic `images`: q = normalize(head(h)) (B, C).

        The key encoder is a momentum copy of the model built from it; DenseCL adds its
        dense head here."""
        return self.normalize(self.head(self.represent(images)))

    def default_augmentation(self, image_size, **arguments):
        return MoCoAugmentation(**{"version": self.version, "seed": self.seed, "image_size": image_size,
                                   **arguments})

    # --- the parts, by their names in the paper -------------------------------------
    @property
    def key_encoder(self):
        """f_k: the momentum copy of the query encoder (backbone, pooling, head, normalisation)."""
        return self.momentum_encoder.target

    @property
    def queue(self):
        """The (K, C) queue of keys."""
        return self.key_queue.queue

    @property
    def queue_pointer(self):
        return self.key_queue.pointer

    @property
    def _momentum_pairs(self):
        return self.momentum_encoder._pairs

    # --- Algorithm 1 -------------------------------------------------------------
    def inference(self, inputs):
        """q = normalize(f_q(x)) (B, C)."""
        return self.query_encoder(self.inference_view(inputs), training=False)

    def forward_pass(self, inputs, training):
        """Step 1 and the query half of step 3: {"q": (B, C), "h": (B, D), "x_k": the key view}."""
        x_q, x_k = self.step_views(inputs, training)
        h = self._encode(self.represent, x_q, training, shuffle=False)  # (B, D)
        q = self.normalize(self.head(h))  # (B, C), the only gradient path
        return {"q": q, "h": h, "x_k": x_k}

    def step_views(self, inputs, training):
        """(x_q, x_k): two independent draws while training; the inference view twice in `evaluate()`."""
        if not training:
            view = self.inference_view(inputs)
            return view, view
        x_q, x_k = self.views(inputs, training=True)
        self._check_batch(x_q)
        return x_q, x_k

    def objective_loss(self, y_pred, training):
        q, x_k = y_pred["q"], y_pred["x_k"]
        if training:
            self.momentum_encoder.update()  # eq. 2, before the keys (as the authors' code)
        k = ops.stop_gradient(self._encode(self.key_encoder, x_k, training, shuffle=training))  # (B, C)
        queue = self.key_queue.read()  # (K, C), read before the enqueue below
        logits = contrastive_logits(q, k, queue, self.temperature)  # (B, 1 + K), positive at index 0
        loss = info_nce_from_logits(logits)  # eq. 1
        if training:
            self.key_queue.enqueue(k)
        self.contrastive_accuracy_tracker.update_state(contrastive_accuracy(logits))
        return loss

    def _check_batch(self, images):
        batch = images.shape[0]
        if batch is None:
            return  # unknown until run time (TensorFlow); the ring buffer wraps correctly anyway
        if self.queue_size % batch:
            raise ValueError(
                f"{type(self).__name__}'s queue_size {self.queue_size} must be divisible by the batch size {batch}, "
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

    # --- the paper's optimizer ----------------------------------------------------------
    def paper_optimizer(self, batch_size=256, steps_per_epoch=None, epochs=None, learning_rate=None,
                        schedule=None, weight_decay=1e-4):
        """MoCo's SGD (`moco_optimizer`) for a run of `steps_per_epoch` x `epochs` at `batch_size`."""
        return moco_optimizer(self.version, batch_size, steps_per_epoch, epochs, learning_rate=learning_rate,
                              schedule=schedule, weight_decay=weight_decay)


def moco_optimizer(version=2, batch_size=256, steps_per_epoch=None, epochs=None, learning_rate=None,
                   schedule=None, weight_decay=1e-4):
    """MoCo's SGD: momentum 0.9, coupled weight decay 1e-4, lr 0.03 x batch / 256 (`training/ssl_sgd.py`).

    v1: x0.1 at epochs 120 and 160 of 200 (`schedule="step"`, InstDisc's recipe); v2:
    cosine decay to 0 (`"cosine"`; the authors decay per epoch, this per update). The
    drops sit at the same fractions of a run of `steps_per_epoch` x `epochs` updates;
    without them, 200 epochs of ImageNet at this batch size.
    """
    schedule = schedule or ("step" if version == 1 else "cosine")
    return contrastive_sgd(batch_size, steps_per_epoch, epochs, learning_rate=learning_rate, schedule=schedule,
                           weight_decay=weight_decay)


def _validate(owner, backbone, version, queue_size, momentum, temperature, projection_dim,
              projection_hidden_dim, shuffle_bn_splits):
    """Check MoCo's arguments (DenseCL's too, `owner`); each message names the value and the rule."""
    check_backbone(owner, backbone)
    check_choice(owner, "version", version, (1, 2), named=False)
    for name, value in (("queue_size", queue_size), ("projection_dim", projection_dim),
                        ("projection_hidden_dim", projection_hidden_dim), ("shuffle_bn_splits", shuffle_bn_splits)):
        check_int(owner, name, value, named=False)
    check_number(owner, "momentum", momentum, "[0, 1]", label="momentum m", rule="in [0, 1]", named=False)
    check_number(owner, "temperature", temperature, "> 0", allow_none=True,
                 rule="> 0 (or None for the version's)", named=False)
