"""The CMC trainer: Tian, Krishnan and Isola, "Contrastive Multiview Coding"
(https://arxiv.org/abs/1906.05849, ECCV 2020), on the L and ab views of images.
"""

import keras
from keras import ops

from keras_paperzoo.data.indexed import split_indexed
from keras_paperzoo.layers.l2_normalization import L2Normalization
from keras_paperzoo.layers.memory_bank import MemoryBank
from keras_paperzoo.layers.nce_normalizer import NCENormalizer
from keras_paperzoo.layers.projection_head import ProjectionHead
from keras_paperzoo.losses.contrastive import contrastive_accuracy, contrastive_logits, info_nce_from_logits
from keras_paperzoo.losses.nce import nce_loss
from keras_paperzoo.models.checks import check_choice, check_int, check_number
from keras_paperzoo.models.cmc.cmc_augmentation import CMCAugmentation
from keras_paperzoo.models.cmc.cmc_encoders import VIEW_CHANNELS, cmc_encoder, view_backbones
from keras_paperzoo.models.cmc.cmc_layers import LabViews, check_rgb
from keras_paperzoo.models.cmc.cmc_optimizer import cmc_optimizer
from keras_paperzoo.models.cmc.cmc_presets import CMC_PRESETS
from keras_paperzoo.models.self_supervised import SelfSupervisedTrainer, pool_features

LOSSES = ("nce", "softmax")


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class CMC(SelfSupervisedTrainer, keras.Model):
    """Contrastive Multiview Coding with two views, L and ab, one encoder and one memory bank per view.

    One training step, as the authors' `train_CMC.py` and `NCEAverage` (HobbitLong/CMC):

    1. One view of each RGB image (a random resized crop and flip,
       `CMCAugmentation`), split into its Lab channels, each normalised to about
       [-1, 1] (`LabViews`): v1 = L (B, H, W, 1), v2 = ab (B, H, W, 2).
    2. z1 = normalize(W1 pool(f1(v1))), z2 = normalize(W2 pool(f2(v2))): one
       encoder per view (`backbone` for L, `ab_backbone` for ab) and a linear
       layer to `feature_dim` (128) on each, as the authors' `fc` + `l2norm`.
    3. The paper's two-view loss L(V1, V2) = L^{V1,V2} + L^{V2,V1}, with the
       critic h({v1, v2}) = exp(z1 . z2 / tau) on unit features: z1 is scored against
       the ab memory bank, the row of its own image (the positive) and m =
       `num_negatives` rows drawn uniformly (`MemoryBank.sample`), and z2 against
       the L bank at the same rows. (The authors' `NCEAverage` scores the L
       features against `memory_ab` and the ab features against `memory_l`, with
       one draw of indices for both; so does this.) Each direction is either
       - NCE (`loss="nce"`, the paper's default): P = exp(s) / Z with one Z per
         direction, estimated on the first batch and then fixed
         (`NCENormalizer`), and InstDisc's NCE loss with noise P_n = 1 / n
         (`losses/nce.py`, the authors' `NCECriterion`); or
       - a softmax over the 1 + m scores with the positive as the target
         (`loss="softmax"`, the authors' `NCESoftmaxLoss`), on the same rows.
    4. Both banks move toward the batch's features: v <- normalize(m v + (1 - m) z)
       with m = `bank_momentum` (0.5, `--nce_m`), after they were read for the
       scores (`MemoryBank.update`).

    The data must say which image is which: x = {"images": ..., "index": ...}
    (`keras_paperzoo.data.indexed.with_index(images)`, or
    `EpochShuffledBatches(..., with_index=True)`), each index in [0, num_data).
    `fit` checks the indices of arrays and of `EpochShuffledBatches` before
    training (a traced step cannot: JAX clamps an index outside the bank).
    Banks, Zs and the negatives' `SeedGenerator` are Keras variables: `.keras`
    files and checkpoints keep them, so a resumed run continues exactly (with
    `EpochSeeds`, as `paperzoo train cmc` runs it).

    The representation evaluated downstream is the concatenation of both
    encoders' pooled features (the authors' `LinearProbing.py` concatenates
    `feat_l` and `feat_ab`): `encoder`, RGB images as the augmentation leaves them
    (normalised, when it normalises) -> (B, D_L + D_ab). Inference
    (`model(images)`) returns [z1 | z2], the two normalised embeddings.

    Args:
        backbone: the L view's encoder: a Keras model with a known input shape
            (B, H, W, 1) returning (B, h, w, C) maps or (B, D) features.
        num_data: n, the number of training images: the rows of each bank.
        ab_backbone: the ab view's encoder, input (B, H, W, 2); None builds one
            like `backbone` for two channels (package backbones from their config,
            `keras.Sequential` and functional models by `clone_model`), with new
            weights.
        num_negatives: m, noise samples per image (4096), at most `num_data`.
        temperature: tau > 0 (0.07 on ImageNet; the authors use 0.1 on STL-10).
        feature_dim: the width of z (128).
        bank_momentum: m of the bank update, in [0, 1) (0.5).
        loss: "nce" (the paper's) or "softmax".
        augmentation: "default" (`CMCAugmentation` at the backbone's input size),
            a dict of its arguments, a Keras layer returning RGB images, or None
            (the images are used as given). A layer that normalises the images
            must expose its per-channel `mean` and `std` (as `CMCAugmentation`
            does), which the Lab conversion undoes.
        num_classes: None, or the classes of an online linear classifier on the
            stop-gradient representation (both views' features), trained when
            `fit` gets labels (`probe_accuracy`).
        seed: int or None: the banks' initial rows and the negatives.

    Metrics: `loss` (L^{V1,V2} + L^{V2,V1}), `l_loss` and `ab_loss` (the L and
    the ab features' terms) and `contrastive_accuracy` (how often the positive
    row scores highest of the 1 + m, both directions averaged).

    Example:

    ```python
    from keras_paperzoo.data.indexed import with_index
    from keras_paperzoo.models import CMC
    cmc = CMC.from_preset("cmc_tiny", image_shape=(32, 32, 3), num_data=len(images))
    cmc.compile(batch_size=64, steps_per_epoch=len(images) // 64, epochs=10)
    cmc.fit(with_index(images), batch_size=64, epochs=10)   # RGB images in [0, 1]
    features = cmc.encoder.predict(images)                  # (N, 16): [L features | ab features]
    ```
    """

    min_batch_size = 1  # the smallest batch (SelfSupervisedTrainer.check_batch_size)
    batch_rule = 'its negatives come from the memory banks'
    presets = CMC_PRESETS
    argument_attributes = {"loss": "objective"}
    indexed = True  # x = {"images", "index"}: each image's rows in the banks

    def __init__(self, backbone, num_data, ab_backbone=None, num_negatives=4096, temperature=0.07, feature_dim=128,
                 bank_momentum=0.5, loss="nce", augmentation="default", num_classes=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        _validate(num_data, num_negatives, temperature, feature_dim, bank_momentum, loss)
        backbone, ab_backbone = view_backbones(backbone, ab_backbone)
        self.set_bank_arguments(num_data, num_negatives, temperature, feature_dim, bank_momentum, loss)
        self._setup(backbone, augmentation, num_classes, seed, build_probe=False)  # the probe: on both views
        self.ab_backbone = ab_backbone

        # === Layers ===
        self.lab_views = LabViews.undoing(self.augmentation, name="lab_views")
        widths = [int(b.output_shape[-1]) for b in (backbone, ab_backbone)]  # D_L, D_ab
        self.l_head = ProjectionHead((self.feature_dim,), name="l_head")  # the authors' fc: linear
        self.ab_head = ProjectionHead((self.feature_dim,), name="ab_head")
        self.l_head.build((None, widths[0]))
        self.ab_head.build((None, widths[1]))
        self.normalize = L2Normalization(name="l2_normalize")
        self.add_probe(sum(widths))  # on [h_l | h_ab], if num_classes

        # === State updated outside gradient descent ===
        self.l_bank = MemoryBank(self.num_data, self.feature_dim, self.bank_momentum, seed=seed, name="l_bank")
        self.ab_bank = MemoryBank(self.num_data, self.feature_dim, self.bank_momentum,
                                  seed=None if seed is None else seed + 1, name="ab_bank")  # other initial rows
        if self.objective == "nce":  # one Z per direction (the authors' Z_l, Z_ab)
            self.l_normalizer = NCENormalizer(self.num_data, name="l_normalizer")
            self.ab_normalizer = NCENormalizer(self.num_data, name="ab_normalizer")
        self.l_loss_tracker = keras.metrics.Mean(name="l_loss")
        self.ab_loss_tracker = keras.metrics.Mean(name="ab_loss")
        self.contrastive_accuracy_tracker = keras.metrics.Mean(name="contrastive_accuracy")
        self.built = True

    def default_augmentation(self, image_size, **arguments):
        return CMCAugmentation(**{"image_size": image_size, "seed": self.seed, **arguments})

    # --- the parts, by their names in the paper ------------------------------------
    def embed(self, images, training=False):
        """RGB images (as the augmentation leaves them) -> {"h_l", "h_ab": pooled features, "z_l", "z_ab": (B, C)}."""
        luminance, chroma = self.lab_views(images)  # v1 (B, H, W, 1), v2 (B, H, W, 2)
        h_l = pool_features(self.backbone(luminance, training=training), "CMC")  # (B, D_L)
        h_ab = pool_features(self.ab_backbone(chroma, training=training), "CMC")  # (B, D_ab)
        return {"h_l": h_l, "h_ab": h_ab,
                "z_l": self.normalize(self.l_head(h_l)), "z_ab": self.normalize(self.ab_head(h_ab))}

    def represent(self, images, training=False):
        """[pool(f1(L)) | pool(f2(ab))]: (B, D_L + D_ab), the representation CMC evaluates."""
        parts = self.embed(images, training)
        return ops.concatenate([parts["h_l"], parts["h_ab"]], axis=-1)

    def scores(self, z_l, z_ab, index, negative_index):
        """{"l", "ab"}: (B, 1 + m) logits, positive first, each view's features against the *other* view's bank.

        z_l (B, C) against the ab bank's rows `index` (B,) and `negative_index`
        (B, m); z_ab against the L bank's same rows (the authors' `out_l`,
        `out_ab`). Divided by tau.
        """
        l_logits = contrastive_logits(z_l, self.ab_bank.read(index), self.ab_bank.read(negative_index),
                                      self.temperature)  # L^{V1,V2}: anchor L, candidates from the ab bank
        ab_logits = contrastive_logits(z_ab, self.l_bank.read(index), self.l_bank.read(negative_index),
                                       self.temperature)  # L^{V2,V1}
        return {"l": l_logits, "ab": ab_logits}

    # --- one step ---------------------------------------------------------------------
    def inference(self, inputs):
        """[z1 | z2] (B, 2 C)."""
        images = inputs.get("images") if isinstance(inputs, dict) else inputs
        check_rgb(images)
        parts = self.embed(self.inference_view(images), training=False)
        return ops.concatenate([parts["z_l"], parts["z_ab"]], axis=-1)

    def forward_pass(self, inputs, training):
        """Steps 1-2: {"z_l", "z_ab": (B, C), "h": (B, D_L + D_ab), "index": (B,)}."""
        images, index = split_indexed(inputs, "CMC")
        check_rgb(images)
        if training and self.augmentation is not None:
            view = self.augmentation(images, training=True)  # one crop and flip for both views
        else:
            view = self.inference_view(images)
        parts = self.embed(view, training=training)
        return {"z_l": parts["z_l"], "z_ab": parts["z_ab"], "index": index,
                "h": ops.concatenate([parts["h_l"], parts["h_ab"]], axis=-1)}

    def objective_loss(self, y_pred, training):
        z_l, z_ab = y_pred["z_l"], y_pred["z_ab"]  # (B, C) each
        index = ops.cast(y_pred["index"], "int32")  # (B,)
        negative_index = self.l_bank.sample(ops.shape(index)[0], self.num_negatives)  # (B, m), both directions
        logits = self.scores(z_l, z_ab, index, negative_index)  # (B, 1 + m) each
        if self.objective == "nce":  # eq. 6 of InstDisc in each direction, Z fixed after the first batch
            l_loss = nce_loss(self.l_normalizer(ops.exp(logits["l"])), self.num_data)
            ab_loss = nce_loss(self.ab_normalizer(ops.exp(logits["ab"])), self.num_data)
        else:  # softmax cross-entropy over the same 1 + m rows, positive at 0
            l_loss, ab_loss = info_nce_from_logits(logits["l"]), info_nce_from_logits(logits["ab"])
        if training:  # after the reads above: the batch's rows move toward its features
            self.l_bank.update(index, z_l)
            self.ab_bank.update(index, z_ab)
        self.l_loss_tracker.update_state(l_loss)
        self.ab_loss_tracker.update_state(ab_loss)
        accuracy = (contrastive_accuracy(logits["l"]) + contrastive_accuracy(logits["ab"])) / 2.0
        self.contrastive_accuracy_tracker.update_state(accuracy)
        return l_loss + ab_loss  # L(V1, V2) = L^{V1,V2} + L^{V2,V1}

    # --- downstream -------------------------------------------------------------------------
    @property
    def encoder(self):
        """RGB images -> [pool(f1(L)) | pool(f2(ab))]: the representation the kNN, the linear probe and export use.

        It takes images as the augmentation leaves them (normalised, when it normalises).
        """
        return cmc_encoder(self.lab_views, self.backbone, self.ab_backbone, name=f"{self.name}_encoder")

    # --- config and presets -------------------------------------------------------------------
    @classmethod
    def _network_arguments(cls):
        return ("backbone", "ab_backbone")

    @classmethod
    def build_backbones(cls, backbone_spec, overrides):
        """A preset's network built twice: for L (1 channel, `backbone`) and for ab (2 channels, `ab_backbone`)."""
        shape = overrides.get("image_shape", backbone_spec.get("overrides", {}).get("image_shape"))
        if shape is None and backbone_spec.get("preset"):  # the backbone preset's own size, with 1 or 2 channels
            shape = cls.backbone_class.presets[backbone_spec["preset"]]["config"].get("image_shape")
        networks = {}
        for argument, channels in VIEW_CHANNELS:
            view = dict(overrides)
            if shape is not None:
                view["image_shape"] = tuple(shape[:2]) + (channels,)
            networks[argument] = super().build_backbones(backbone_spec, view)["backbone"]
            networks[argument].name = "l_backbone" if channels == 1 else "ab_backbone"  # distinct in `encoder`
        return networks

    # --- the paper's optimizer ----------------------------------------------------------------
    def paper_optimizer(self, batch_size=128, steps_per_epoch=None, epochs=None, learning_rate=None,
                        weight_decay=1e-4):
        """CMC's SGD (`cmc_optimizer`) for `steps_per_epoch` x `epochs` updates (default: n / batch x 240)."""
        steps_per_epoch = steps_per_epoch or max(1, self.num_data // batch_size)
        return cmc_optimizer(steps_per_epoch, epochs, learning_rate=learning_rate, weight_decay=weight_decay)


def _validate(num_data, num_negatives, temperature, feature_dim, bank_momentum, loss):
    """Check CMC's arguments; each message names the value and the rule."""
    for name, value in (("num_data", num_data), ("num_negatives", num_negatives), ("feature_dim", feature_dim)):
        check_int("CMC", name, value)
    if num_negatives > num_data:
        raise ValueError(
            f"CMC draws num_negatives={num_negatives} rows per image from memory banks of num_data={num_data} rows "
            "(one per training image): the banks must have at least as many rows as negatives."
        )
    check_number("CMC", "temperature", temperature, "> 0", named=False)
    check_number("CMC", "bank_momentum", bank_momentum, "[0, 1)", named=False)
    check_choice("CMC", "loss", loss, LOSSES, named=False)
