"""The CPC trainer: van den Oord et al. 2018, "Representation Learning with Contrastive Predictive
Coding" (https://arxiv.org/abs/1807.03748), and Henaff et al. 2019, "Data-Efficient Image
Recognition with Contrastive Predictive Coding" (CPC v2, https://arxiv.org/abs/1905.09272).
"""

import math

import keras
from keras import ops

from keras_paperzoo.losses.contrastive import contrastive_accuracy, info_nce_from_logits
from keras_paperzoo.models.checks import check_choice, check_int, check_num_classes, check_number
from keras_paperzoo.models.cpc.cpc_augmentation import CPCAugmentation, PatchAugmentation
from keras_paperzoo.models.cpc.cpc_encoder import CPCResNet, StridedConvEncoder
from keras_paperzoo.models.cpc.cpc_layers import (
    GridEncoder,
    PatchGrid,
    build_context,
    cpc_encoder,
    orient,
    prediction_networks,
    unorient,
)
from keras_paperzoo.models.cpc.cpc_grid import check_cpc_backbone, check_directions, cpc_grid
from keras_paperzoo.models.cpc.cpc_presets import CPC_PRESETS
from keras_paperzoo.models.self_supervised import SelfSupervisedTrainer

CONTEXTS = ("pixelcnn", "gru")


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class CPC(SelfSupervisedTrainer, keras.Model):
    """Contrastive Predictive Coding: predict the encodings of patches (or time steps) k rows ahead.

    One training step (v1, Sec. 2 and 3.2; v2, Sec. 3 and Appendix A.2):

    1. Images: augment (`augmentation`: random crop, flip, grayscale,
       normalisation), cut into an overlapping grid of patches (`PatchGrid`; v1:
       a 7 x 7 grid of 64 x 64 patches at stride 32 from 256 x 256 images),
       augment each patch (v1's jitter, v2's colour dropping), and encode each
       with the backbone g_enc, mean-pooled to one vector: z, (B, rows, cols, D).
       Sequences (a backbone taking (B, T, C)): z = g_enc(x), (B, T', D), a grid
       with one column.
    2. For each prediction direction (v1: down the rows; v2 also up, right and
       left, the grid turned so that the direction points down), the context
       c = g_ar(z): a PixelCNN-style masked convolution network (`PixelCNNContext`)
       or a GRU down the columns (`ColumnGRUContext`), so that c at row r sees
       rows <= r only.
    3. For k = `steps_to_ignore` + 1 .. `prediction_steps`, the prediction W_k c
       at (r, col) scores every candidate z_j of the batch with the log-bilinear
       f_k = exp(z_j^T W_k c) (eq. 3; v2: both sides projected to `target_dim`,
       the prediction scaled by `prediction_scale`). The candidates are the
       encodings of every position of every image in the batch (v2: "negative
       samples are taken from other locations in the image and other images in
       the mini-batch"), N = B x rows x cols of them; the positive is z at
       (r + k, col) of the same image.
    4. InfoNCE (eq. 4): the cross-entropy of picking the positive among the N,
       averaged over the predictions of each k, then over the k and directions.
       (The paper sums over k; the mean keeps the loss comparable to log N, and
       Adam is invariant to the loss's scale.)

    Logged: `loss`; `mi_bound` = log N - loss, the lower bound on the mutual
    information I(x_{t+k}; c_t) (eq. 5; averaged over the steps); and
    `contrastive_accuracy`, how often the positive has the top score (Fig. 3).
    The W_k start at zero (our choice; the papers do not give their
    initialisation), so every candidate starts with the same score: the loss
    starts at log N and the bound at 0 (with random W_k and unnormalised
    encodings the first scores can be large, and the first bound estimates well
    below 0); it rises as the encoder learns what the rows share.

    Downstream (`encoder`, and `model(x)`): images -> the grid's encodings z
    mean-pooled over the grid, (B, D) (v1, Sec. 3.2: "we first spatially
    mean-pool the 7x7x1024 representation to a single 1024 dimensional vector");
    sequences -> the contexts c mean-pooled over time, (B, context_units) (the
    paper's audio probes use c_t).

    Batch norm in the patch encoder lets a patch's encoding depend on the other
    patches of the batch (in training mode), the rows below included: v2
    replaces it with layer norm ("batch normalization allows these models to find
    a trivial solution to CPC"); v1 used no normalisation. `CPCResNet` offers
    all three.

    Args:
        backbone: the encoder g_enc. Images: a Keras model taking one patch
            (b, p, p, C) to (b, D) or to maps (b, h, w, D) (mean-pooled); its
            input size is the patch size. Sequences: a Keras model taking
            (b, T, C) with a known T to (b, T', D).
        image_shape: (H, W, C) of the images (images only); the grid of
            `backbone`'s patches at `patch_stride` must fit it.
        patch_stride: int or (height, width); None for half the patch (v1: 32 of 64).
        context: `"pixelcnn"` (images, v1/v2) or `"gru"` (sequences, v1's audio;
            also possible down the columns of an image grid).
        context_blocks: PixelCNN residual blocks (5, Appendix A.2).
        context_units: PixelCNN inner width (256, A.2) or GRU state size (256,
            v1's audio).
        prediction_steps: K, the farthest row (time step) predicted (v1 images: 5,
            "We predict up to five rows"; audio: 12).
        steps_to_ignore: the nearest rows not predicted (0; A.2's pseudo-code: 2,
            as row r + 1 shares half its pixels with row r).
        directions: subset of ("down", "up", "right", "left"): where the predicted
            rows lie (v1: ("down",); v2: all four).
        target_dim: None (v1: W_k c in z's space) or the width both sides are
            projected to (A.2: 64).
        prediction_scale: the predictions' factor (A.2's `emb_scale`: 0.1; v1: 1).
        patch_jitter: pixels j of v1's per-patch jitter ((p - j)-pixel subcrops);
            None for p / 16 (v1: 4 of 64); 0 for none.
        color_dropping: v2's per-patch colour dropping.
        augmentation: `"default"` (`CPCAugmentation` at `image_shape`), a dict of
            its arguments, a Keras layer on images, or None (images given
            normalised). Sequences: None (the paper augments no audio).
        num_classes: None, or the classes of an online linear classifier on the
            stop-gradient representation (`probe_accuracy`).
        seed: int or None.

    Example:

    ```python
    from keras_paperzoo.models import CPC
    cpc = CPC.from_preset("cpc_v2_cifar")            # 32 x 32 images: 7 x 7 grid of 8-pixel patches
    cpc.compile()                                    # Adam, lr 2e-4
    cpc.fit(images, batch_size=32, epochs=10)        # raw images in [0, 1]; logs loss, mi_bound, contrastive_accuracy
    h = cpc.encoder.predict(normalised_images)       # (N, 256): z mean-pooled over the grid
    ```
    """

    min_batch_size = 1  # the smallest batch (SelfSupervisedTrainer.check_batch_size)
    batch_rule = "its negatives include the image's other positions"
    backbone_class = CPCResNet
    presets = CPC_PRESETS

    def __init__(self, backbone, image_shape=None, patch_stride=None, context="pixelcnn", context_blocks=5,
                 context_units=256, prediction_steps=5, steps_to_ignore=0, directions=("down",), target_dim=None,
                 prediction_scale=1.0, patch_jitter=None, color_dropping=False, augmentation="default",
                 num_classes=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        check_cpc_backbone(backbone)
        self.context = check_choice("CPC", "context", context, CONTEXTS, rule=f"one of {CONTEXTS}", named=False)
        self.context_blocks = check_int("CPC", "context_blocks", context_blocks, named=False)
        self.context_units = check_int("CPC", "context_units", context_units, named=False)
        self.prediction_steps = check_int("CPC", "prediction_steps", prediction_steps, named=False)
        self.steps_to_ignore = check_int("CPC", "steps_to_ignore", steps_to_ignore, low=0, named=False)
        if self.steps_to_ignore >= self.prediction_steps:
            raise ValueError(f"CPC steps_to_ignore must be smaller than prediction_steps ({self.prediction_steps}); "
                             f"got {steps_to_ignore!r}.")
        self.directions = directions = check_directions(directions)
        self.target_dim = check_int("CPC", "target_dim", target_dim, allow_none=True, named=False)
        self.prediction_scale = check_number("CPC", "prediction_scale", prediction_scale, "> 0", named=False)
        self.color_dropping = bool(color_dropping)
        self.num_classes = check_num_classes("CPC", num_classes)
        self.backbone, self.seed = backbone, seed
        self.steps = list(range(self.steps_to_ignore + 1, self.prediction_steps + 1))  # k

        # === The grid ===
        grid = cpc_grid(backbone, image_shape, patch_stride, patch_jitter, directions, self.prediction_steps,
                        augmentation)
        for name, value in grid.items():  # sequence, grid_size, image_shape, patch_size, patch_stride, patch_jitter
            setattr(self, name, value)

        # === Layers ===
        if self.sequence:
            self.augmentation = None
            self.grid = self.grid_encoder = self.patch_augmentation = None
        else:
            self.augmentation = self._make_augmentation(augmentation)
            self.grid = PatchGrid(self.patch_size, self.patch_stride, name="patch_grid")
            self.grid_encoder = GridEncoder(backbone, name="grid_encoder")
            self.patch_augmentation = None
            if self.patch_jitter or self.color_dropping:
                self.patch_augmentation = PatchAugmentation(self.patch_jitter, self.color_dropping, seed=seed,
                                                            name="patch_augmentation")
        depth = int(backbone.output_shape[-1])  # D
        self.contexts, self.target_projection, self.predictors = prediction_networks(
            depth, directions, self.steps, context, context_blocks, self.context_units, target_dim)  # g_ar, W_k
        self.add_probe(self.representation_width)  # the online classifier, if num_classes
        for direction, network in zip(directions, self.contexts):  # after the probe is made, as it always was
            build_context(network, depth, self.grid_size, direction)
        self.mi_bound_tracker = keras.metrics.Mean(name="mi_bound")
        self.contrastive_accuracy_tracker = keras.metrics.Mean(name="contrastive_accuracy")
        self.built = True

    @property
    def representation_width(self):
        """The width of `encoder`'s output: D (images) or the context's (sequences)."""
        if self.sequence:
            return self.context_units if self.context == "gru" else int(self.backbone.output_shape[-1])
        return int(self.backbone.output_shape[-1])

    def augmentation_image_size(self):
        return tuple(self.image_shape[:2])

    def default_augmentation(self, image_size, **arguments):
        return CPCAugmentation(image_size, seed=self.seed, **arguments)

    # --- the step ------------------------------------------------------------------
    def inference(self, inputs):
        """The representation (B, D) (see `encoder`)."""
        return self.represent_grid(self.encode(self.inference_view(inputs), training=False))

    def forward_pass(self, inputs, training):
        """{"z": the grid of encodings}."""
        if isinstance(inputs, (list, tuple)):
            raise ValueError(f"CPC takes one batch of {'sequences' if self.sequence else 'images'}, not views; "
                             f"got {len(inputs)} tensors.")
        if not self.sequence and self.augmentation is not None:
            inputs = self.augmentation(inputs, training=training)  # crop, flip, grayscale; normalised
        return {"z": self.encode(inputs, training=training)}

    def encode(self, inputs, training=False):
        """z: the grid of encodings (B, rows, cols, D); for sequences (B, T', 1, D)."""
        if self.sequence:
            return ops.expand_dims(self.backbone(inputs, training=training), 2)  # (B, T', 1, D)
        patches = self.grid(inputs)  # (B, rows, cols, p, p, C)
        if training and self.patch_augmentation is not None:
            patches = self.patch_augmentation(patches, training=True)
        return self.grid_encoder(patches, training=training)  # (B, rows, cols, D)

    def context_of(self, z, direction="down"):
        """c = g_ar(z) for `direction`, in the grid's own layout: (B, rows, cols, D or units)."""
        index = self.directions.index(direction)
        return unorient(self.contexts[index](orient(z, direction)), direction)

    def represent_grid(self, z):
        """The downstream representation of a grid: mean z (images) or mean c (sequences), (B, width)."""
        if self.sequence:
            z = self.contexts[0](z)  # c_t, (B, T', 1, units)
        return ops.mean(z, axis=(1, 2))

    def prediction_logits(self, z):
        """[(direction, k, logits (M, N), labels (M,))]: eq. 3's scores of each prediction against all N candidates.

        Row m of `logits` is the prediction W_k c at (b, r, col) (r < rows - k) in
        the direction's layout, scored against the encodings of all N = B x rows x
        cols positions of the batch (in that layout's order); `labels[m]` is the
        column of its positive, z at (b, r + k, col).
        """
        out = []
        for d, direction in enumerate(self.directions):
            z_d = orient(z, direction)  # (B, R, C, D): the predicted rows lie below
            rows, cols = z_d.shape[1], z_d.shape[2]
            c_d = self.contexts[d](z_d)  # (B, R, C, D or units): row r sees rows <= r
            targets = z_d if self.target_projection is None else self.target_projection(z_d)  # (B, R, C, Dt)
            candidates = ops.reshape(targets, (-1, targets.shape[-1]))  # (N, Dt): every position, every image
            for i, k in enumerate(self.steps):
                predictor = self.predictors[d * len(self.steps) + i]  # W_k
                context = ops.reshape(c_d[:, : rows - k], (-1, c_d.shape[-1]))  # (M, Dc), M = B (R - k) C
                predictions = predictor(context) * self.prediction_scale  # (M, Dt)
                logits = ops.matmul(ops.cast(predictions, "float32"),
                                    ops.transpose(ops.cast(candidates, "float32")))  # (M, N): z_j^T W_k c
                index = ops.arange(ops.shape(logits)[0], dtype="int32")  # m = (b (R - k) + r) C + col
                per_image = (rows - k) * cols
                labels = (index // per_image) * (rows * cols) + k * cols + index % per_image  # (b, r + k, col)
                out.append((direction, k, logits, labels))
        return out

    def objective_loss(self, y_pred, training):
        z = y_pred["z"]  # (B, rows, cols, D)
        losses, accuracies = [], []
        for _, _, logits, labels in self.prediction_logits(z):
            losses.append(info_nce_from_logits(logits, labels))  # eq. 4, mean over the predictions of this k
            accuracies.append(ops.mean(contrastive_accuracy(logits, labels)))
        loss = ops.mean(ops.stack(losses))  # mean over k and directions
        candidates = ops.cast(ops.shape(z)[0] * self.grid_size[0] * self.grid_size[1], "float32")  # N
        self.mi_bound_tracker.update_state(ops.log(candidates) - loss)  # eq. 5: I >= log N - L_N
        self.contrastive_accuracy_tracker.update_state(ops.mean(ops.stack(accuracies)))
        return loss

    def probe_features(self, outputs):
        return self.represent_grid(outputs["z"])

    # --- downstream -------------------------------------------------------------------
    @property
    def encoder(self):
        """What CPC evaluates downstream, as a new functional model on the shared backbone.

        Images (normalised, as the augmentation leaves them) -> the patch grid ->
        the backbone on every patch (mean-pooled maps) -> the mean over the grid:
        (B, D), v1's linear-probe input. Sequences (B, T, C) -> the backbone -> the
        context c (the first direction's network) -> the mean over time: (B, units).
        """
        return cpc_encoder(self.backbone, self.contexts[0], self.grid_size, self.image_shape, self.patch_size,
                           self.patch_stride, name=f"{self.name}_encoder")

    # --- the paper's optimizer --------------------------------------------------------------
    def paper_optimizer(self, batch_size=None, steps_per_epoch=None, epochs=None, learning_rate=2e-4):
        """Adam, lr 2e-4, constant (v1: vision Sec. 3.2 and audio Sec. 3.1; the batch and length do not change it)."""
        return keras.optimizers.Adam(learning_rate)

    @classmethod
    def log_candidates(cls, batch_size, grid_size):
        """log N, N = batch x rows x cols: InfoNCE's value when all scores are equal."""
        return math.log(batch_size * grid_size[0] * grid_size[1])

    @classmethod
    def backbone_class_for(cls, preset):
        """`StridedConvEncoder` for the sequence presets' encoders, else `CPCResNet`."""
        return StridedConvEncoder if preset in StridedConvEncoder.presets else CPCResNet
