"""The BEiT trainer: masked image modelling, "BERT Pre-Training of Image Transformers" (Bao et al., ICLR 2022).

https://arxiv.org/abs/2106.08254
"""

import math
import numbers

import numpy as np

import keras
from keras import ops

from keras_paperzoo.layers.blockwise_masking import BlockwiseMasking
from keras_paperzoo.layers.patch_embedding import patchify
from keras_paperzoo.losses.masked_reconstruction import masked_patch_mse, normalized_patch_targets
from keras_paperzoo.models.beit.beit_backbone import BEIT_NO_DECAY_PATHS, BEiTBackbone
from keras_paperzoo.models.trainer import Trainer
from keras_paperzoo.training.schedules import WarmupCosineDecay
from keras_paperzoo.training.selective_decay import SelectiveDecayAdamW

IMAGENET_TRAIN_IMAGES = 1_281_167
TARGETS = ("tokens", "pixels")
NORM_PIX_EPSILON = 1e-6
# The official code masks 75 of the 14 x 14 = 196 patches ("about 40 %", Sec. 2.5).
OFFICIAL_MASKED_FRACTION = 75 / 196


def paper_optimizer(batch_size=2048, steps_per_epoch=None, epochs=800, warmup_epochs=10,
                    base_learning_rate=1.5e-3, weight_decay=0.05, clip_norm=3.0):
    """BEiT pre-training's optimizer (Bao et al. 2022, Sec. 2.5 and App. "Hyperparameters for pre-training").

    AdamW (beta 0.9, 0.999), peak lr 1.5e-3 at batch 2048 (scaled linearly here:
    1.5e-3 x batch / 2048), 10 warmup epochs of 800 (kept at that 1/80 share for
    shorter runs), then cosine decay to 0, weight decay 0.05 on weight matrices only
    (not on biases, norms, LayerScale, the relative position tables, [S], [M] and
    E_pos), gradient clipping at global norm 3.0. Deviation: the official schedule
    ends at a minimum lr of 1e-5 rather than 0 and also has a weight-decay schedule
    (constant 0.05 in the paper's runs).

    Args:
        batch_size: the effective batch for the lr scaling rule.
        steps_per_epoch: updates per epoch; default ImageNet's 1,281,167 // batch_size.
        epochs: run length (800 in the paper).
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int (the lr is 1.5e-3 x batch / 2048); got {batch_size!r}.")
    steps_per_epoch = int(steps_per_epoch or max(1, IMAGENET_TRAIN_IMAGES // batch_size))
    total = steps_per_epoch * int(epochs)
    warmup = min(int(warmup_epochs * steps_per_epoch), total // 80)
    schedule = WarmupCosineDecay(base_learning_rate * batch_size / 2048, warmup_steps=warmup, total_steps=total)
    return SelectiveDecayAdamW(schedule, weight_decay=weight_decay, beta_1=0.9, beta_2=0.999,
                               global_clipnorm=clip_norm, no_decay_paths=BEIT_NO_DECAY_PATHS)


def _num_masking_patches(value, num_patches):
    """None (75/196 of N), an int count or a float fraction in (0, 1) -> a count in [1, N)."""
    if value is None:
        count = int(math.floor(OFFICIAL_MASKED_FRACTION * num_patches + 0.5))
    elif isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"BEiT num_masking_patches must be None, an int or a fraction in (0, 1); got {value!r}.")
    elif isinstance(value, (int, np.integer)):
        count = int(value)
    else:
        if not 0.0 < value < 1.0:
            raise ValueError(f"BEiT num_masking_patches as a fraction must be in (0, 1); got {value!r}.")
        count = int(math.floor(value * num_patches + 0.5))
    if not 1 <= count < num_patches:
        raise ValueError(
            f"BEiT num_masking_patches={value!r} masks {count} of {num_patches} patches; it must mask 1 to "
            f"{num_patches - 1}.")
    return count


def _tokenizer_grid(tokenizer, backbone):
    grid = getattr(tokenizer, "grid_size", None)
    if grid is None:  # one image through the tokenizer
        grid = tuple(ops.shape(tokenizer.tokenize(ops.zeros((1,) + backbone.image_shape))))[1:]
    return tuple(int(g) for g in grid)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class BEiT(Trainer, keras.Model):
    """Masked image modelling (MIM) pre-training of a `BEiTBackbone` (Bao et al. 2022, Sec. 2.2-2.5).

    One training step:

    1. the frozen `tokenizer` turns each image into an h x w grid of visual tokens z
       (the DALL-E dVAE in the paper, |V| = 8192; Sec. 2.1.2);
    2. `BlockwiseMasking` picks the masked set M per image (Algorithm 1: blocks of
       >= 16 patches, aspect ratio in [0.3, 1/0.3], `num_masking_patches` in all, 75
       of 196 by default);
    3. the backbone embeds the patches, replaces those in M by the learnable e_[M]
       and runs the Transformer: `backbone.encode(images, mask)`, H^L after the
       final norm;
    4. the MIM head, a linear layer D -> |V| (W_c, b_c; N(0, 0.02^2) truncated
       init), gives p_MIM(z' | x^M) = softmax(W_c h_i^L + b_c) at every patch;
    5. the loss is the cross-entropy -log p_MIM(z_i | x^M) averaged over the masked
       positions of the batch (the official code's `CrossEntropyLoss` over
       `x[bool_masked_pos]`); `mim_accuracy` is the share of masked positions whose
       argmax is z_i.

    `target="pixels"` is the paper's ablation baseline (Table 4, "predicting pixels
    instead of visual tokens"): a linear head D -> P^2 C regresses each masked
    patch's pixels, normalised per patch (mean 0, std 1, as `MAE`'s `norm_pix_loss`),
    with the mean squared error on the masked patches; no tokenizer is needed.

    The trainer's forward pass is the pre-training task, so it masks in `fit`,
    `evaluate` and `predict` alike (pass `patch_mask=` to fix it). Masks come from the
    trainer's seed by a counter-based hash, the same on every backend; a resumed run
    repeats them with the `EpochSeeds` callback (which also re-seeds drop path).
    After pre-training, `beit.backbone` (also `beit.encoder`) is fine-tuned with
    `BEiTClassifier`.

    `compile()` with no arguments gives the paper's optimizer (`paper_optimizer`:
    AdamW 0.9/0.999, lr 1.5e-3 x batch/2048, 10 warmup epochs then cosine, weight
    decay 0.05, clipping at global norm 3); pass `batch_size`, `steps_per_epoch`
    and `epochs` to fit the schedule to your run. The loss is fixed.

    Args:
        backbone: a `BEiTBackbone`.
        tokenizer: a frozen Keras layer or model with `tokenize(images) -> (B, h, w)`
            int ids and `vocabulary_size`, (h, w) = the backbone's patch grid
            (e.g. `VisualTokenizer`); may be None with `target="pixels"`. It receives
            the same images as the backbone (the official code feeds the dVAE a
            112 x 112 resize of the same crop: a tokenizer may resize inside).
        num_masking_patches: None (75/196 of the N patches, the official 75 of 196),
            an int in [1, N) or a fraction in (0, 1).
        target: "tokens" (the paper) or "pixels" (its ablation baseline).
        seed: int in [0, 2**31) or None, the masking seed.

    Example:

    ```python
    backbone = BEiTBackbone.from_preset("beit_tiny_digits")
    beit = BEiT(backbone, tokenizer, seed=0)            # tokenizer: (B, 8, 8) ids
    beit.compile(batch_size=64, steps_per_epoch=100, epochs=10)
    beit.fit(images, batch_size=64, epochs=10)          # logs loss and mim_accuracy
    features = beit.backbone(images)                    # (B, 64) for fine-tuning
    ```
    """

    backbone_class = BEiTBackbone
    presets = {}
    fixed_loss = True  # the MIM cross-entropy (or the pixel baseline's MSE)

    def __init__(self, backbone, tokenizer=None, num_masking_patches=None, target="tokens", seed=None, **kwargs):
        if not isinstance(backbone, BEiTBackbone):
            raise ValueError(f"BEiT needs a BEiTBackbone; got {type(backbone).__name__}.")
        if target not in TARGETS:
            raise ValueError(f"BEiT target must be 'tokens' or 'pixels'; got target={target!r}.")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))
                                 or not 0 <= seed < 2**31):
            raise ValueError(f"BEiT seed must be None or an int in [0, 2**31); got {seed!r}.")
        count = _num_masking_patches(num_masking_patches, backbone.num_patches)
        if target == "tokens":
            if tokenizer is None or not hasattr(tokenizer, "tokenize") or not hasattr(tokenizer, "vocabulary_size"):
                raise ValueError(
                    "BEiT target='tokens' needs a tokenizer with tokenize(images) -> (B, h, w) ids and "
                    f"vocabulary_size; got {type(tokenizer).__name__}.")
            grid = _tokenizer_grid(tokenizer, backbone)
            if grid != tuple(backbone.grid_size):
                raise ValueError(
                    f"BEiT's tokenizer gives a {grid} token grid; the backbone's patch grid is "
                    f"{tuple(backbone.grid_size)} (one visual token per patch, Sec. 2.1).")
            vocabulary_size = int(tokenizer.vocabulary_size)
            if vocabulary_size < 2:
                raise ValueError(f"BEiT's tokenizer vocabulary_size must be >= 2; got {vocabulary_size}.")
        super().__init__(**kwargs)
        # === Layers ===
        self.backbone = backbone
        self.tokenizer = tokenizer
        if tokenizer is not None and hasattr(tokenizer, "_flatten_layers"):
            # Frozen (the dVAE is trained before BEiT, Sec. 2.4). Each sublayer is set: on TensorFlow,
            # `tokenizer.trainable = False` leaves the sublayers of a layer built with trainable=False as they were.
            for layer in tokenizer._flatten_layers(include_self=True):
                layer.trainable = False
        self.masking = BlockwiseMasking(backbone.grid_size, num_masking_patches=count, seed=seed,
                                        name="blockwise_masking")
        patch = backbone.patch_size
        outputs = vocabulary_size if target == "tokens" else patch * patch * backbone.image_shape[-1]
        self.head = keras.layers.Dense(
            outputs, kernel_initializer=keras.initializers.TruncatedNormal(stddev=0.02),
            name="mim_head" if target == "tokens" else "pixel_head")
        self.head.build((None, backbone.num_patches, backbone.hidden_dim))
        self.masking.build((None, backbone.num_patches, 1))
        if target == "tokens":
            self.mim_accuracy_tracker = keras.metrics.Mean(name="mim_accuracy")
        self.built = True
        # === Config ===
        self.num_masking_patches = num_masking_patches
        self.target = target
        self.seed = None if seed is None else int(seed)
        # Derived.
        self.masked_patches = count
        self.vocabulary_size = vocabulary_size if target == "tokens" else None

    @property
    def encoder(self):
        """The backbone, to fine-tune (as `MAE.encoder`)."""
        return self.backbone

    # --- the forward pass: Sec. 2.2 ------------------------------------------------------
    def sample_mask(self, batch_size):
        """(B, N) float, 1 = in M: blockwise masks from the trainer's seed."""
        return self.masking(ops.zeros((batch_size, self.backbone.num_patches, 1)), training=True)

    def call(self, images, training=None, patch_mask=None):
        """images (B, H, W, C) -> {"logits": (B, N, |V|) or "pred": (B, N, P*P*C), "mask": (B, N), 1 = masked}.

        `patch_mask` (B, N), 1 = masked, fixes M (otherwise blockwise masks are drawn from the seed).
        """
        images = ops.convert_to_tensor(images)
        mask = self.sample_mask(ops.shape(images)[0]) if patch_mask is None else patch_mask
        mask = ops.cast(mask, "float32")
        hidden = self.backbone.encode(images, mask, training=training)[:, 1:, :]  # h_i^L, (B, N, D)
        key = "logits" if self.target == "tokens" else "pred"
        return {key: self.head(hidden), "mask": mask}

    # --- the objective -------------------------------------------------------------------
    def visual_tokens(self, images):
        """The tokenizer's z: (B, N) int32 in raster order."""
        ids = self.tokenizer.tokenize(images)  # (B, h, w)
        return ops.stop_gradient(ops.reshape(ops.cast(ids, "int32"), (ops.shape(ids)[0], -1)))

    def pixel_targets(self, images):
        """The pixel baseline's targets: (B, N, P*P*C) patches, each normalised to mean 0, std 1."""
        patches = patchify(ops.convert_to_tensor(images), (self.backbone.patch_size,) * 2)
        return normalized_patch_targets(patches, NORM_PIX_EPSILON)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        if sample_weight is not None:
            raise ValueError("BEiT's loss is the paper's masked-position objective; sample_weight is not supported.")
        mask = ops.cast(y_pred["mask"], "float32")  # (B, N)
        if self.target == "pixels":
            loss = masked_patch_mse(y_pred["pred"], self.pixel_targets(x), mask)
        else:
            logits = ops.cast(y_pred["logits"], "float32")  # (B, N, |V|)
            tokens = self.visual_tokens(x)  # z, (B, N)
            nll = keras.losses.sparse_categorical_crossentropy(tokens, logits, from_logits=True)  # (B, N)
            count = ops.maximum(ops.sum(mask), 1.0)
            loss = ops.sum(nll * mask) / count  # mean over the masked positions of the batch
            hits = ops.cast(ops.equal(ops.cast(ops.argmax(logits, axis=-1), "int32"), tokens), "float32")
            self.mim_accuracy_tracker.update_state(ops.sum(hits * mask) / count)
        if self.losses:
            loss = loss + ops.sum(self.losses)
        return loss

    # --- compile with the paper's defaults ---------------------------------------------
    def paper_optimizer(self, batch_size=2048, steps_per_epoch=None, epochs=800, warmup_epochs=10,
                        base_learning_rate=1.5e-3, weight_decay=0.05, clip_norm=3.0):
        """`compile()`'s default: the module's `paper_optimizer`."""
        return paper_optimizer(batch_size, steps_per_epoch, epochs, warmup_epochs, base_learning_rate,
                               weight_decay, clip_norm)
