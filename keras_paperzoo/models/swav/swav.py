"""The SwAV trainer: Caron et al. 2020, "Unsupervised Learning of Visual Features by Contrasting
Cluster Assignments" (https://arxiv.org/abs/2006.09882).
"""

import math

import keras
from keras import ops

from keras_paperzoo.models.swav.swav_augmentation import swav_views
from keras_paperzoo.layers.feature_queue import FeatureQueue
from keras_paperzoo.layers.l2_normalization import L2Normalization
from keras_paperzoo.layers.multi_crop import (check_assignment_crops, check_crop_sizes, crop_sizes, encode_crops,
                                               full_size_crops)
from keras_paperzoo.layers.projection_head import ProjectionHead
from keras_paperzoo.layers.prototypes import Prototypes
from keras_paperzoo.losses.sinkhorn import check_sinkhorn_arguments, sinkhorn
from keras_paperzoo.losses.swav import swav_loss
from keras_paperzoo.models.backbone import check_image_shape
from keras_paperzoo.models.checks import check_int, check_int_list, check_number
from keras_paperzoo.models.self_supervised import SelfSupervisedTrainer, check_backbone
from keras_paperzoo.models.swav.swav_presets import SWAV_PRESETS
from keras_paperzoo.training.lars_schedule import IMAGENET_IMAGES, lars_warmup_cosine, run_length

DEFAULT_STEPS_PER_EPOCH = IMAGENET_IMAGES // 256  # ImageNet at batch 256 (the authors' 5005 iterations)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class SwAV(SelfSupervisedTrainer, keras.Model):
    """SwAV: the codes of one crop, from an equipartitioned clustering, are predicted from every other crop.

    One training step (Sec. 3.1-3.2, Algorithm 1 of the appendix, the authors' `main_swav.py`):

    1. V crops of each image (multi-crop, Sec. 3.2: `crop_counts` (2, 6), two
       full-size crops then six small ones; `swav_views`), or `x=(crop_1, ..., crop_V)`.
    2. Each group of same-size crops goes through the backbone together (h, then
       global average pooling), then all crops through the projector (2048 - BN -
       ReLU - 128) at once, as the authors' code; z = normalize(projector(h)).
    3. Scores s = z . C against K unit-norm prototypes (`Prototypes`, re-normalised
       after every update, frozen for the first `freeze_prototypes_epochs`).
    4. Codes q = sinkhorn(s, eps, 3 iterations) of each assignment crop
       (`crops_for_assign`, the two full-size crops), without gradient (eq. 3), the
       batch preceded by the queue of past features when there is one.
    5. The swapped prediction loss (eq. 1-2, 4): -sum_k q_s^(k) log softmax(s_t /
       tau)^(k), averaged over every pair (assignment crop s, other crop t != s), as
       the authors average it (`losses/swav.py`): ln K when every prediction is
       uniform.
    6. Queue (`queue_length` > 0; the authors' 3840 at batch 256): each assignment
       crop's z enters its own `FeatureQueue` every step; from `queue_start_epoch`
       (15), once the queue holds only features from that epoch on (queue_length /
       B steps later, as the authors wait for it to fill), the codes are computed
       over [queue scores; batch scores] and the batch's rows kept.

    The collapse the authors document (the loss stuck at ln K, every prediction
    uniform) is logged beside the loss: `loss_over_ln_k` (about 1 at
    initialisation and when collapsed; falls as the crops' predictions agree)
    and `prediction_entropy`, the mean entropy of softmax(s / tau) over the
    crops divided by ln K (1: uniform predictions).

    Deviations, named: the prototypes are left out of LARS's weight decay (the
    authors decay them by 1e-6; a column re-normalised every step loses nothing
    to the decay, and leaving it out keeps a frozen prototype's optimizer state
    untouched). The queue starts as FeatureQueue's random unit vectors, not
    zeros; it is not read before it has been refilled, so this changes nothing.
    Epochs are counted in steps of `steps_per_epoch`, which every `compile()` sets
    (`set_run_length`; ImageNet's 5004 at batch 256 until then).

    Inference (`model(images)`) returns z (B, 128) of the images (the first crop's
    pipeline in inference mode: resized and normalised); `encoder` is backbone +
    pooling at the full-size crops' size, what the paper evaluates.

    Args:
        backbone: a Keras model with a known image input shape returning (B, D)
            features or (B, h, w, C) maps; multi-crop needs one that takes any size
            (`image_shape=(None, None, 3)`).
        projection_dims: the projector's widths ((2048, 128)): Dense - BN - ReLU
            between, a plain Dense last.
        num_prototypes: K (3000).
        temperature: tau of the softmax over prototypes (0.1).
        epsilon: eps of Sinkhorn-Knopp, > 0 (0.05; the authors' remedy for
            collapse is 0.03; a large eps gives uniform codes and collapse).
        sinkhorn_iterations: 3.
        crop_counts: the crops per size, full-size first ((2, 6); (2,) is SwAV
            without multi-crop).
        crops_for_assign: the crops whose codes are targets ((0, 1)).
        queue_length: past features kept per assignment crop for Sinkhorn (0; the
            authors' 3840 at batch 256), a multiple of the batch size.
        queue_start_epoch: the epoch from which the queue is filled (15).
        freeze_prototypes_epochs: epochs during which the prototypes get no update (1).
        augmentation: "default" (`swav_views` at the backbone's input size, or at
            the dict's `image_size` for a backbone of any size), a dict of
            `swav_views` arguments, a Keras layer returning the V crops, or None
            (then `x` holds the crops).
        num_classes: None, or the classes of an online linear classifier on the
            stop-gradient representation of the first crop (`probe_accuracy`).
        seed: int or None.

    Example:

    ```python
    from keras_paperzoo.models import SwAV
    swav = SwAV.from_preset("swav_tiny")                     # 2 x 16 + 2 x 7 crops, 8 prototypes
    swav.compile(batch_size=32, steps_per_epoch=10, epochs=5)  # LARS 0.6 x 32 / 256, cosine to 1/1000
    swav.fit(images, batch_size=32, epochs=5)                # images (N, 16, 16, 3) in [0, 1]
    h = swav.encoder.predict(images)
    ```
    """

    batch_rule = ("the Sinkhorn codes spread the batch equally over the prototypes, and the projector "
                  "batch-normalises over the batch")
    presets = SWAV_PRESETS

    def __init__(self, backbone, projection_dims=(2048, 128), num_prototypes=3000, temperature=0.1, epsilon=0.05,
                 sinkhorn_iterations=3, crop_counts=(2, 6), crops_for_assign=(0, 1), queue_length=0,
                 queue_start_epoch=15, freeze_prototypes_epochs=1, augmentation="default", num_classes=None,
                 seed=None, **kwargs):
        super().__init__(**kwargs)
        check_backbone("SwAV", backbone)
        self.projection_dims = check_int_list("SwAV", "projection_dims", projection_dims)
        self.num_prototypes = check_int("SwAV", "num_prototypes", num_prototypes, label="num_prototypes (K)")
        self.temperature = check_number("SwAV", "temperature", temperature, "> 0")
        check_sinkhorn_arguments(epsilon, sinkhorn_iterations, owner="SwAV")
        self.crop_counts = check_int_list("SwAV", "crop_counts", crop_counts)
        self.crops_for_assign = check_int_list("SwAV", "crops_for_assign", crops_for_assign, low=0)
        check_assignment_crops("SwAV", self.crop_counts, self.crops_for_assign)
        self.epsilon = float(epsilon)
        self.sinkhorn_iterations = int(sinkhorn_iterations)
        self.queue_length = check_int("SwAV", "queue_length", queue_length, low=0)
        self.queue_start_epoch = check_int("SwAV", "queue_start_epoch", queue_start_epoch, low=0)
        self.freeze_prototypes_epochs = check_int("SwAV", "freeze_prototypes_epochs", freeze_prototypes_epochs, low=0)
        self.num_crops = sum(self.crop_counts)  # V
        self._setup(backbone, augmentation, num_classes, seed)
        check_crop_sizes("SwAV", backbone, crop_sizes(self.augmentation))

        # === Layers ===
        feature_width = self.projection_dims[-1]
        self.projector = ProjectionHead(self.projection_dims, batch_norm=True, name="projector")
        self.projector.build((None, int(backbone.output_shape[-1])))
        self.normalize = L2Normalization(name="l2_normalize")
        self.prototypes = Prototypes(self.num_prototypes, freeze_steps=self.freeze_prototypes_epochs *
                                     DEFAULT_STEPS_PER_EPOCH, seed=seed, name="prototypes")
        self.prototypes.build((None, feature_width))
        self.feature_queues = [  # one per assignment crop, as the authors' queue[i]
            FeatureQueue(self.queue_length, feature_width, seed=seed, name=f"queue_{i}")
            for i in range(len(self.crops_for_assign))
        ] if self.queue_length else []
        self.steps_per_epoch = self.add_weight(
            shape=(), initializer=keras.initializers.Constant(DEFAULT_STEPS_PER_EPOCH), dtype="int32",
            trainable=False, autocast=False, name="steps_per_epoch")
        self.loss_over_ln_k = keras.metrics.Mean(name="loss_over_ln_k")
        self.prediction_entropy = keras.metrics.Mean(name="prediction_entropy")
        self.built = True

    def default_augmentation(self, image_size, **arguments):
        small = min((image_size,) if isinstance(image_size, int) else image_size) < 96
        arguments.setdefault("crop_counts", list(self.crop_counts))
        arguments.setdefault("color_strength", 0.5 if small else 1.0)  # SimCLR's CIFAR strength on small images
        arguments.setdefault("blur", not small)
        return swav_views(image_size, seed=self.seed, **arguments)

    @classmethod
    def from_preset(cls, name, **overrides):
        """`Trainer.from_preset`; `image_shape=(H, W, C)` sets the full-size crops' size, the backbone takes any.

        Multi-crop feeds the backbone crops of several sizes, so the presets' backbones
        take (None, None, C) images; an `image_shape` given here (a recipe's images)
        becomes the augmentation's `image_size` instead of fixing the backbone's input.
        """
        image_shape = overrides.get("image_shape")
        if image_shape is not None and overrides.get("backbone") is None:
            image_shape = check_image_shape(cls.__name__, image_shape)  # (before the crops' int sizes)
            augmentation = overrides.get("augmentation", cls._preset(name).get("arguments", {}).get("augmentation"))
            overrides.update(full_size_crops(image_shape, augmentation))
        return super().from_preset(name, **overrides)

    def encoder_input_shape(self):
        """The full-size crops' (H, W, C) when the backbone takes any size (multi-crop): `encoder`, what the
        paper evaluates, takes the images a downstream user gives it, and exports to SavedModel / LiteRT
        (`paperzoo export`), which need every dimension but the batch."""
        shape, sizes = tuple(self.backbone.input_shape[1:]), crop_sizes(self.augmentation)
        return (*sizes[0], shape[2]) if None in shape[:2] and sizes else shape

    # --- one step ------------------------------------------------------------------------
    def inference(self, inputs):
        """z = normalize(projector(h)) (B, 128)."""
        h = self.represent(self.inference_view(inputs), training=False)  # (B, D)
        return self.normalize(self.projector(h, training=False))

    def forward_pass(self, inputs, training):
        """{"h": (B, D) of crop 1, "z": (V B, 128), "scores": (V B, K)}, crops stacked in order."""
        crops = self.views(inputs, training, count=self.num_crops)
        check_crop_sizes("SwAV", self.backbone, [tuple(c.shape[1:3]) for c in crops])
        # The backbone once per run of same-size crops, as the authors' code: (V B, D).
        h = encode_crops(lambda group: self.represent(group, training=training), crops)
        z = self.normalize(self.projector(h, training=training))  # (V B, 128): one BN over all crops
        scores = self.prototypes(z, training=training)  # (V B, K): z . C, counts a step when training
        return {"h": ops.split(h, self.num_crops, axis=0)[0], "z": z, "scores": scores}

    def codes(self, scores, features, training):
        """Sinkhorn codes (B, K) of each assignment crop (step 4); enqueue its features (step 6)."""
        codes = []
        for i, crop in enumerate(self.crops_for_assign):
            out = ops.stop_gradient(ops.cast(scores[crop], "float32"))  # (B, K)
            batch = out.shape[0]
            if batch is not None and self.num_prototypes > self.queue_length + batch:
                raise ValueError(
                    f"SwAV's {self.num_prototypes} prototypes are more than the queue ({self.queue_length}) and batch "
                    f"({batch}) can assign: equipartition needs num_prototypes <= queue_length + batch size "
                    "(add a queue, a larger batch, or fewer prototypes)."
                )
            q = sinkhorn(out, self.epsilon, self.sinkhorn_iterations)  # (B, K)
            if self.feature_queues and training:
                queue = self.feature_queues[i]
                past = queue.read()  # (L, 128), read before this step's write
                past_scores = ops.cast(self.prototypes.scores(past), "float32")  # (L, K)
                q_queue = sinkhorn(ops.concatenate([past_scores, out], axis=0), self.epsilon,
                                   self.sinkhorn_iterations)[self.queue_length:]  # (B, K): the batch's rows
                q = ops.where(self._queue_in_use(ops.shape(out)[0]), q_queue, q)
                queue.enqueue(ops.stop_gradient(ops.cast(features[crop], "float32")))
            codes.append(q)
        return codes

    def _queue_in_use(self, batch):
        """Whether this step's codes read the queue: it has been refilled since `queue_start_epoch`."""
        step = ops.convert_to_tensor(self.prototypes.step) - 1  # this step's index (the call counted it)
        start = ops.convert_to_tensor(self.steps_per_epoch) * self.queue_start_epoch
        return (step - start) * ops.cast(batch, "int32") >= self.queue_length

    def objective_loss(self, y_pred, training):
        scores = ops.split(y_pred["scores"], self.num_crops, axis=0)  # V x (B, K)
        features = ops.split(y_pred["z"], self.num_crops, axis=0)  # V x (B, 128)
        codes = self.codes(scores, features, training)
        loss = swav_loss(scores, codes, self.crops_for_assign, self.temperature)  # eq. 1-2, 4
        # The collapse symptom (the loss stuck at ln K with uniform predictions), beside the loss.
        log_k = math.log(self.num_prototypes) if self.num_prototypes > 1 else 1.0
        self.loss_over_ln_k.update_state(loss / log_k)
        log_p = ops.log_softmax(ops.cast(y_pred["scores"], "float32") / self.temperature, axis=-1)  # (V B, K)
        entropy = -ops.sum(ops.exp(log_p) * log_p, axis=-1)  # (V B,)
        self.prediction_entropy.update_state(ops.mean(entropy) / log_k)
        return loss

    # --- the paper's optimizer ---------------------------------------------------------------
    def set_steps_per_epoch(self, steps_per_epoch):
        """The run's steps per epoch: the prototypes' freeze and the queue's start are counted in them."""
        check_int("SwAV", "steps_per_epoch", steps_per_epoch, named=False)
        self.steps_per_epoch.assign(int(steps_per_epoch))
        self.prototypes.set_freeze_steps(self.freeze_prototypes_epochs * int(steps_per_epoch))

    def set_run_length(self, batch_size=256, steps_per_epoch=None, epochs=None):
        """`set_steps_per_epoch` of the run (ImageNet's at `batch_size`); called by every `compile()`."""
        steps, _ = run_length(batch_size, steps_per_epoch, epochs, default_epochs=800)
        self.set_steps_per_epoch(steps)

    def paper_optimizer(self, batch_size=256, steps_per_epoch=None, epochs=None, learning_rate=None,
                        warmup_epochs=0, weight_decay=1e-6):
        """LARS, lr 0.6 x B / 256, cosine to 0.0006 x B / 256 (a thousandth), wd 1e-6 (800 epochs).

        The authors' batch-256 commands (`--base_lr 0.6 --final_lr 0.0006 --wd 0.000001
        --warmup_epochs 0`); at batch 4096 they warm up for 10 epochs from 0.3
        (`warmup_epochs=10` here warms up from 0). LARS as their apex LARC (trust
        coefficient 0.001, no clipping) on every parameter, batch norm and biases
        included; the prototypes out of the decay (see the class docstring).
        """
        optimizer = lars_warmup_cosine(0.6, batch_size, steps_per_epoch, epochs, default_epochs=800,
                                       warmup_epochs=warmup_epochs, weight_decay=weight_decay,
                                       learning_rate=learning_rate, final_rate=0.001)
        optimizer.exclude_bias_and_norm_from_decay = False  # LARC decays and adapts every parameter
        optimizer.exclude_bias_and_norm_from_adaptation = False
        optimizer.exclude_from_decay_names = ("prototypes",)
        return optimizer
