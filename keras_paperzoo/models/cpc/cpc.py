"""The CPC trainer: van den Oord et al. 2018, "Representation Learning with Contrastive Predictive
Coding" (https://arxiv.org/abs/1807.03748), and Henaff et al. 2019, "Data-Efficient Image
Recognition with Contrastive Predictive Coding" (CPC v2, https://arxiv.org/abs/1905.09272).
"""

import math

import keras
from keras import ops

from keras_paperzoo.losses.contrastive import contrastive_accuracy, info_nce_from_logits
from keras_paperzoo.models.cpc.cpc_augmentation import CPCAugmentation, PatchAugmentation
from keras_paperzoo.models.cpc.cpc_encoder import CPCResNet, StridedConvEncoder
from keras_paperzoo.models.cpc.cpc_layers import (
    DIRECTIONS,
    ColumnGRUContext,
    GridEncoder,
    PatchGrid,
    PixelCNNContext,
    grid_shape,
    orient,
    unorient,
)
from keras_paperzoo.models.cpc.cpc_presets import CPC_PRESETS
from keras_paperzoo.models.self_supervised import SelfSupervisedTrainer

CONTEXTS = ("pixelcnn", "gru")


def _int(name, value, low):
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"CPC {name} must be an int >= {low}; got {value!r}.")
    return int(value)


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
        kwargs.setdefault("name", "cpc")
        super().__init__(**kwargs)
        if not isinstance(backbone, keras.Model):
            raise ValueError(f"CPC needs a keras.Model backbone (the encoder g_enc); got {type(backbone).__name__}.")
        input_shape = tuple(backbone.input_shape) if isinstance(getattr(backbone, "input_shape", None), tuple) else ()
        if len(input_shape) not in (3, 4):
            raise ValueError(
                f"CPC needs a backbone taking patches (B, p, p, C) or sequences (B, T, C); {backbone.name} has input "
                f"shape {input_shape or None}."
            )
        self.sequence = len(input_shape) == 3
        if context not in CONTEXTS:
            raise ValueError(f"CPC context must be one of {CONTEXTS}; got {context!r}.")
        self.context = context
        self.context_blocks = _int("context_blocks", context_blocks, 1)
        self.context_units = _int("context_units", context_units, 1)
        self.prediction_steps = _int("prediction_steps", prediction_steps, 1)
        self.steps_to_ignore = _int("steps_to_ignore", steps_to_ignore, 0)
        if self.steps_to_ignore >= self.prediction_steps:
            raise ValueError(f"CPC steps_to_ignore must be smaller than prediction_steps ({self.prediction_steps}); "
                             f"got {steps_to_ignore!r}.")
        directions = [directions] if isinstance(directions, str) else list(directions or [])
        if not directions or any(d not in DIRECTIONS for d in directions) or len(set(directions)) < len(directions):
            raise ValueError(f"CPC directions must be distinct names among {DIRECTIONS}; got {directions!r}.")
        self.directions = directions
        if target_dim is not None:
            target_dim = _int("target_dim", target_dim, 1)
        self.target_dim = target_dim
        if isinstance(prediction_scale, bool) or not isinstance(prediction_scale, (int, float)) or \
                not prediction_scale > 0:
            raise ValueError(f"CPC prediction_scale must be a number > 0; got {prediction_scale!r}.")
        self.prediction_scale = float(prediction_scale)
        self.color_dropping = bool(color_dropping)
        if num_classes is not None and (isinstance(num_classes, bool) or not isinstance(num_classes, int)
                                        or num_classes < 2):
            raise ValueError(f"num_classes (the online linear classifier) must be an int >= 2 or None; "
                             f"got {num_classes!r}.")
        self.backbone, self.num_classes, self.seed = backbone, num_classes, seed
        self.steps = list(range(self.steps_to_ignore + 1, self.prediction_steps + 1))  # k

        # === The grid ===
        if self.sequence:
            if image_shape is not None or patch_stride is not None:
                raise ValueError(f"CPC on sequences (a backbone taking (B, T, C)) takes no image_shape or "
                                 f"patch_stride; got image_shape={image_shape!r}, patch_stride={patch_stride!r}.")
            length = backbone.output_shape[1] if len(backbone.output_shape) == 3 else "not a sequence"
            if not isinstance(length, int):
                raise ValueError(f"CPC needs a sequence backbone with a known output length (B, T', D); "
                                 f"{backbone.name} returns {backbone.output_shape}.")
            self.grid_size = (length, 1)
            self.patch_size = self.patch_stride = None
            self.image_shape = None
            if directions != ["down"]:
                raise ValueError(f"CPC on sequences predicts forward in time only: directions=['down']; "
                                 f"got {directions!r}.")
        else:
            if image_shape is None:
                raise ValueError("CPC on images needs image_shape=(H, W, C), the images the grid is cut from "
                                 f"({backbone.name} takes patches of shape {input_shape[1:]}).")
            image_shape = tuple(image_shape)
            if len(image_shape) != 3 or image_shape[-1] != input_shape[-1]:
                raise ValueError(f"CPC image_shape must be (H, W, C) with the backbone's {input_shape[-1]} channels; "
                                 f"got {image_shape!r}.")
            self.image_shape = image_shape
            self.patch_size = tuple(input_shape[1:3])
            if patch_stride is None:
                patch_stride = tuple(max(1, p // 2) for p in self.patch_size)  # "32 pixels overlap" of 64
            stride = (patch_stride, patch_stride) if isinstance(patch_stride, int) else tuple(patch_stride)
            self.grid_size = grid_shape(image_shape[:2], self.patch_size, stride, owner="CPC")
            self.patch_stride = list(stride)
        if patch_jitter is None and not self.sequence:
            patch_jitter = min(self.patch_size) // 16  # v1: a 60 x 60 subcrop of a 64 x 64 patch
        self.patch_jitter = 0 if self.sequence else _int("patch_jitter", patch_jitter, 0)
        self._check_grid()

        # === Layers ===
        if self.sequence:
            if augmentation not in (None, "default"):
                raise ValueError(f"CPC on sequences takes no augmentation (the paper augments no audio); "
                                 f"got {augmentation!r}.")
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
        self.contexts = [self._context_network(f"context_{d}") for d in directions]  # g_ar per direction
        width = target_dim or depth
        self.target_projection = None
        if target_dim is not None:  # A.2: targets = conv1x1(latents, 64)
            self.target_projection = keras.layers.Dense(target_dim, use_bias=False, name="target_projection")
        # W_k: one per direction and step (eq. 3: "a different W_k for every step k"), starting at zero.
        self.predictors = [keras.layers.Dense(width, use_bias=False, kernel_initializer="zeros",
                                              name=f"predictor_{d}_k{k}")
                           for d in directions for k in self.steps]
        self.probe = None
        if num_classes is not None:
            self.probe = keras.layers.Dense(num_classes, name="online_probe")
            self.probe_accuracy = keras.metrics.SparseCategoricalAccuracy(name="probe_accuracy")
        self.mi_bound_tracker = keras.metrics.Mean(name="mi_bound")
        self.contrastive_accuracy_tracker = keras.metrics.Mean(name="contrastive_accuracy")
        self._build_networks(depth)
        self.built = True

    # --- construction ---------------------------------------------------------------
    def _context_network(self, name):
        if self.context == "gru":
            return ColumnGRUContext(self.context_units, name=name)
        return PixelCNNContext(self.context_blocks, self.context_units, name=name)

    def _check_grid(self):
        rows, cols = self.grid_size
        for direction in self.directions:
            length, axis = (rows, "rows") if direction in ("down", "up") else (cols, "columns")
            if length <= self.prediction_steps:
                what = (f"{length} steps" if self.sequence else
                        f"the {rows} x {cols} grid of {self.image_shape[0]}-pixel images ({length} {axis})")
                raise ValueError(
                    f"CPC prediction_steps {self.prediction_steps} needs at least {self.prediction_steps + 1} "
                    f"{'steps' if self.sequence else axis} to predict '{direction}'; {what} has fewer."
                )

    def _build_networks(self, depth):
        rows, cols = self.grid_size
        for direction, context in zip(self.directions, self.contexts):
            shape = (None, rows, cols, depth) if direction in ("down", "up") else (None, cols, rows, depth)
            context.build(shape)
        context_width = depth if self.context == "pixelcnn" else self.context_units
        for predictor in self.predictors:
            predictor.build((None, context_width))
        if self.target_projection is not None:
            self.target_projection.build((None, depth))
        if self.probe is not None:
            self.probe.build((None, self.representation_width))

    @property
    def representation_width(self):
        """The width of `encoder`'s output: D (images) or the context's (sequences)."""
        if self.sequence:
            return self.context_units if self.context == "gru" else int(self.backbone.output_shape[-1])
        return int(self.backbone.output_shape[-1])

    def _make_augmentation(self, augmentation):
        if augmentation is None or isinstance(augmentation, keras.layers.Layer):
            return augmentation
        if augmentation == "default":
            augmentation = {}
        if not isinstance(augmentation, dict):
            raise ValueError("augmentation must be 'default', a dict of CPCAugmentation's arguments, a Keras layer "
                             f"or None; got {augmentation!r}.")
        return self.default_augmentation(**{"image_size": tuple(self.image_shape[:2]), **augmentation})

    def default_augmentation(self, image_size, **arguments):
        return CPCAugmentation(image_size, seed=self.seed, **arguments)

    # --- the step ------------------------------------------------------------------
    def call(self, inputs, training=False):
        """Inference: the representation (B, D) (see `encoder`). Training: {"z": the grid of encodings}."""
        if training:
            return self.forward_pass(inputs, training=True)
        z = self.encode(self.inference_view(inputs), training=False)
        return self.represent_grid(z)

    def forward_pass(self, inputs, training):
        # (Not `forward`: on PyTorch that name is torch.nn.Module's, which `model(x)` calls.)
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

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        self.check_labels(y)
        if not isinstance(y_pred, dict):
            y_pred = self.forward_pass(x, training)
        z = y_pred["z"]  # (B, rows, cols, D)
        losses, accuracies = [], []
        for _, _, logits, labels in self.prediction_logits(z):
            losses.append(info_nce_from_logits(logits, labels))  # eq. 4, mean over the predictions of this k
            accuracies.append(ops.mean(contrastive_accuracy(logits, labels)))
        loss = ops.mean(ops.stack(losses))  # mean over k and directions
        candidates = ops.cast(ops.shape(z)[0] * self.grid_size[0] * self.grid_size[1], "float32")  # N
        self.mi_bound_tracker.update_state(ops.log(candidates) - loss)  # eq. 5: I >= log N - L_N
        self.contrastive_accuracy_tracker.update_state(ops.mean(ops.stack(accuracies)))
        if self.probe is None or y is None:
            return loss
        return loss + self.probe_loss(self.represent_grid(z), y)

    # --- downstream -------------------------------------------------------------------
    @property
    def encoder(self):
        """What CPC evaluates downstream, as a new functional model on the shared backbone.

        Images (normalised, as the augmentation leaves them) -> the patch grid ->
        the backbone on every patch (mean-pooled maps) -> the mean over the grid:
        (B, D), v1's linear-probe input. Sequences (B, T, C) -> the backbone -> the
        context c (the first direction's network) -> the mean over time: (B, units).
        """
        if self.sequence:
            inputs = keras.Input(self.backbone.input_shape[1:], name="signal")
            z = keras.layers.Reshape((self.grid_size[0], 1, -1), name="as_grid")(self.backbone(inputs))
            features = keras.layers.GlobalAveragePooling2D(name="time_mean")(self.contexts[0](z))
        else:
            inputs = keras.Input(self.image_shape, name="images")
            z = GridEncoder(self.backbone, name="grid_encoder")(PatchGrid(self.patch_size, self.patch_stride,
                                                                          name="patch_grid")(inputs))
            features = keras.layers.GlobalAveragePooling2D(name="grid_mean")(z)
        return keras.Model(inputs, features, name=f"{self.name}_encoder")

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
