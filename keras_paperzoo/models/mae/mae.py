"""The MAE trainer: "Masked Autoencoders Are Scalable Vision Learners" (He et al., CVPR 2022).

https://arxiv.org/abs/2111.06377
"""

import numpy as np

import keras
from keras import ops

from keras_paperzoo.layers.patch_embedding import patchify, unpatchify
from keras_paperzoo.layers.random_masking import RandomMasking, check_mask_ratio, num_visible_tokens
from keras_paperzoo.layers.sincos_position_embedding import sincos_position_table_2d
from keras_paperzoo.losses.masked_reconstruction import masked_patch_mse, normalized_patch_targets
from keras_paperzoo.models.mae.mae_decoder import MAEDecoder
from keras_paperzoo.models.mae.mae_presets import MAE_PRESETS
from keras_paperzoo.models.trainer import Trainer
from keras_paperzoo.models.vit.vit_backbone import ViTBackbone
from keras_paperzoo.training.schedules import WarmupCosineDecay
from keras_paperzoo.training.selective_decay import SelectiveDecayAdamW

IMAGENET_TRAIN_IMAGES = 1_281_167
NORM_PIX_EPSILON = 1e-6


def paper_optimizer(batch_size=4096, steps_per_epoch=None, epochs=800, warmup_epochs=40,
                    base_learning_rate=1.5e-4, weight_decay=0.05):
    """MAE pre-training's optimizer (He et al. 2022, App. A.1, Table 8).

    AdamW (beta 0.9, 0.95), weight decay 0.05 on weights only (no decay on biases and
    norms, as the authors' code), lr = base_lr x batch / 256 with base_lr 1.5e-4,
    linear warmup (40 epochs of 800, i.e. 1/20 of the run; kept at that share for
    runs shorter than 800 epochs), then cosine decay to 0.

    Args:
        batch_size: the effective batch (4096 in the paper) for the lr scaling rule.
        steps_per_epoch: updates per epoch; default ImageNet's 1,281,167 // batch_size.
        epochs: run length (800 for the paper's ablations, 1600 for its best numbers).
    """
    if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int (the lr is 1.5e-4 x batch / 256); got {batch_size!r}.")
    steps_per_epoch = int(steps_per_epoch or max(1, IMAGENET_TRAIN_IMAGES // batch_size))
    total = steps_per_epoch * int(epochs)
    warmup = min(int(warmup_epochs * steps_per_epoch), total // 20)
    schedule = WarmupCosineDecay(base_learning_rate * batch_size / 256, warmup_steps=warmup, total_steps=total)
    return SelectiveDecayAdamW(schedule, weight_decay=weight_decay, beta_1=0.9, beta_2=0.95)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class MAE(Trainer, keras.Model):
    """Masked autoencoder pre-training of a ViT encoder (He et al. 2022).

    One training step, as Sec. 3 describes it:

    1. cut each image into patches, embed them with the encoder's patch embedding and
       add the encoder's position embeddings (before masking, so kept tokens carry
       their positions);
    2. keep a random `1 - mask_ratio` of each image's patches (`RandomMasking`:
       uniform, without replacement, per sample; 75 % removed by default);
    3. run the encoder's Transformer blocks and final norm on the visible patches
       only, with the class token prepended ("the encoder only operates on a small
       subset (~25%) of the full set");
    4. the lightweight decoder (`MAEDecoder`) adds shared mask tokens, un-shuffles to
       patch order, adds its own position embeddings and predicts every patch's
       pixels;
    5. the loss is the mean squared error on the masked patches only, against
       per-patch normalised pixels when `norm_pix_loss` (the paper's default for
       its released models).

    After pre-training the decoder is discarded: `mae.encoder` is the `ViTBackbone`,
    applied to whole images with no masking for probing or fine-tuning (the
    paper's inference; see `training.layerwise_decay` for fine-tuning).

    The trainer's own forward pass is the pre-training task, so it masks in `fit`,
    `evaluate` and `predict` alike (`evaluate` reports the reconstruction loss on
    held-out images); masks come from the trainer's seed and are the same on every
    backend (`RandomMasking`).

    Position embeddings: the paper uses fixed 2-D sin-cos embeddings in the encoder
    and the decoder. With `fixed_position_embeddings=True` (default) and an encoder
    with learned 1-D positions (`position_embedding="1d"`), the encoder's table is
    overwritten with the 2-D sin-cos values and frozen (`position_layer.trainable =
    False`); the authors' fine-tuning trains that table again, so set
    `mae.encoder.position_layer.trainable = True` before fine-tuning in the same
    session (a saved encoder loads trainable). The sin-cos values have amplitude 1
    (rms 0.71), the scale of the patch tokens of standardised images (the paper
    normalises inputs by the dataset's mean and std): feed standardised images. On raw
    [0, 1] pixels of mostly blank images (MNIST) the table drowns the patch content
    and the encoder fine-tunes far worse than the same ViT with its learned table
    (measured in `applications/mae_cifar.py`). Encoders with the factorised "2d" or
    no position embedding keep theirs. Relative-position and hybrid ViTs are not
    supported (masking drops tokens from the fixed grid those need).

    The encoder keeps its own initialisation (the official ViT code's: LeCun-normal
    patch projection, zero class token); the authors' MAE code uses Xavier-uniform
    and N(0, 0.02^2) for those two. Encoders should have no dropout in
    pre-training (the presets set `dropout_rate=0.0`).

    Args:
        encoder: a `ViTBackbone` (its layers are used directly).
        mask_ratio: fraction of patches removed, in (0, 1); 0.75 in the paper.
        decoder_depth, decoder_dim, decoder_heads: 8, 512, 16 in the paper.
        decoder_mlp_dim: the decoder MLP's width; default 4 x decoder_dim.
        norm_pix_loss: reconstruct per-patch normalised pixels (default True).
        fixed_position_embeddings: see above (default True).
        seed: int in [0, 2**31) or None, the masking seed.

    `compile()` with no arguments gives the paper's optimizer (`paper_optimizer`:
    AdamW 0.9/0.95, weight decay 0.05, lr 1.5e-4 x batch/256, warmup then cosine);
    pass `batch_size`, `steps_per_epoch` and `epochs` to fit the schedule to your run.
    The loss is always the masked-patch MSE (`compile(loss=...)` is refused).

    Presets (`MAE_PRESETS`): `MAE.from_preset(name, **overrides)` takes MAE arguments
    and encoder (`ViTBackbone`) arguments, e.g.
    `MAE.from_preset("mae_tiny", image_shape=(28, 28, 1), mask_ratio=0.8)`.

    Example:

    ```python
    import numpy as np
    from keras_paperzoo.models.mae import MAE
    mae = MAE.from_preset("mae_tiny", image_shape=(32, 32, 1))
    mae.compile(batch_size=64, steps_per_epoch=10, epochs=2)
    mae.fit(np.random.rand(640, 32, 32, 1).astype("float32"), batch_size=64, epochs=2)
    pictures = mae.reconstruct(np.random.rand(4, 32, 32, 1))  # "masked", "reconstruction", ...
    features = mae.encoder(np.random.rand(4, 32, 32, 1))      # (4, 128), whole images
    ```
    """

    backbone_class = ViTBackbone
    backbone_argument = "encoder"
    presets = MAE_PRESETS
    fixed_loss = True  # the masked-patch MSE

    def __init__(self, encoder, mask_ratio=0.75, decoder_depth=8, decoder_dim=512, decoder_heads=16,
                 decoder_mlp_dim=None, norm_pix_loss=True, fixed_position_embeddings=True, seed=None, **kwargs):
        super().__init__(**kwargs)
        _check_encoder(encoder)
        mask_ratio = check_mask_ratio(mask_ratio)
        for name, value in (("decoder_depth", decoder_depth), ("decoder_dim", decoder_dim),
                            ("decoder_heads", decoder_heads)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive int; got {value!r}.")
        if decoder_dim % decoder_heads:
            raise ValueError(f"decoder_dim {decoder_dim} should be divisible by decoder_heads {decoder_heads}.")
        if decoder_dim % 4:
            raise ValueError(f"decoder_dim {decoder_dim} should be divisible by 4 (2-D sin-cos position embeddings).")
        fix_positions = bool(fixed_position_embeddings) and encoder.position_embedding == "1d"
        if fix_positions and encoder.hidden_dim % 4:
            raise ValueError(
                f"Fixed 2-D sin-cos position embeddings need hidden_dim divisible by 4; the encoder's is "
                f"{encoder.hidden_dim}. Pass fixed_position_embeddings=False to keep its learned table."
            )
        grid = encoder.grid_size
        num_patches = grid[0] * grid[1]
        num_visible = num_visible_tokens(num_patches, mask_ratio)
        patch = encoder.patch_size if isinstance(encoder.patch_size, tuple) else (encoder.patch_size,) * 2
        channels = encoder.image_shape[-1]

        # === Layers ===
        self.encoder = encoder
        self.masking = RandomMasking(mask_ratio, seed=seed, name="random_masking")
        self.decoder = MAEDecoder(
            grid, patch[0] * patch[1] * channels, num_prefix_tokens=encoder.num_prefix_tokens,
            decoder_dim=decoder_dim, depth=decoder_depth, num_heads=decoder_heads, mlp_dim=decoder_mlp_dim,
            layer_norm_epsilon=encoder.layer_norm_epsilon, name="decoder",
        )
        self.masking.build((None, num_patches, encoder.hidden_dim))
        self.decoder.build((None, encoder.num_prefix_tokens + num_visible, encoder.hidden_dim))
        if fix_positions:
            _fix_sincos_positions(encoder)
        self.built = True

        # === Config ===
        self.mask_ratio = mask_ratio
        self.decoder_depth = int(decoder_depth)
        self.decoder_dim = int(decoder_dim)
        self.decoder_heads = int(decoder_heads)
        self.decoder_mlp_dim = decoder_mlp_dim
        self.norm_pix_loss = bool(norm_pix_loss)
        self.fixed_position_embeddings = bool(fixed_position_embeddings)
        self.seed = seed
        # Derived.
        self.patch_size = patch
        self.num_patches = num_patches
        self.num_visible = num_visible

    # --- the forward pass: Sec. 3, steps 1-4 --------------------------------------
    def call(self, images, training=None, noise=None):
        """images (B, H, W, C) -> {"pred": (B, N, P*P*C) pixels of every patch, "mask": (B, N), 1 = masked}.

        `noise`: optional (B, N) sort keys for the masking (see `RandomMasking`).
        """
        enc = self.encoder
        p = enc.num_prefix_tokens
        tokens = enc.patch_embedding(images)  # (B, N, D)
        if enc.class_token is not None:
            tokens = enc.class_token(tokens)  # (B, 1 + N, D)
        if enc.position_layer is not None:
            tokens = enc.position_layer(tokens)  # positions added before masking
        prefix, patches = tokens[:, :p, :], tokens[:, p:, :]
        # The pre-training task masks in evaluate/predict too (class docstring).
        visible, mask, ids_restore = self.masking(patches, training=True, noise=noise)  # (B, K, D), (B, N), (B, N)
        x = enc.embedding_dropout(ops.concatenate([prefix, visible], axis=1), training=training)  # (B, p + K, D)
        for block in enc.transformer_blocks:
            x = block(x, training=training)
        latent = enc.encoder_norm(x)  # (B, p + K, D)
        pred = self.decoder(latent, ids_restore, training=training)  # (B, N, P*P*C)
        return {"pred": pred, "mask": mask}

    # --- the objective: Sec. 3, "Reconstruction target" --------------------------
    def targets(self, images):
        """The pixels the decoder should predict: (B, N, P*P*C), normalised per patch if `norm_pix_loss`."""
        patches = patchify(ops.convert_to_tensor(images), self.patch_size)
        return normalized_patch_targets(patches, NORM_PIX_EPSILON) if self.norm_pix_loss else patches

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        if sample_weight is not None:
            raise ValueError("MAE's loss is the paper's masked-patch MSE; sample_weight is not supported.")
        loss = masked_patch_mse(y_pred["pred"], self.targets(x), y_pred["mask"])
        if self.losses:
            loss = loss + ops.sum(self.losses)
        return loss

    # --- compile with the paper's defaults -----------------------------------------
    def paper_optimizer(self, batch_size=4096, steps_per_epoch=None, epochs=800, warmup_epochs=40,
                        base_learning_rate=1.5e-4, weight_decay=0.05):
        """`compile()`'s default: the module's `paper_optimizer` (App. A.1, Table 8)."""
        return paper_optimizer(batch_size, steps_per_epoch, epochs, warmup_epochs, base_learning_rate, weight_decay)

    # --- pictures ---------------------------------------------------------------------
    def reconstruct(self, images, noise=None, fill_value=0.5):
        """Pictures of the pre-training task (the paper's Figs. 2-4), as NumPy (B, H, W, C) arrays.

        Returns a dict:
            "images": the input;
            "masked": the input with removed patches set to `fill_value` (what the encoder sees);
            "reconstruction": the decoder's prediction of every patch, in pixel space
                (with `norm_pix_loss` the prediction is un-normalised with each target
                patch's own mean and standard deviation, as the authors' pictures do);
            "pasted": the reconstruction with the visible patches replaced by the input;
            "mask": (B, N), 1 = removed.
        `noise` fixes the masks (see `RandomMasking`); otherwise they come from the
        trainer's seed.
        """
        images = np.asarray(images, dtype="float32")
        outputs = self(images, training=False, noise=noise)
        pred = np.asarray(ops.convert_to_numpy(outputs["pred"]), dtype="float32")  # (B, N, K)
        mask = np.asarray(ops.convert_to_numpy(outputs["mask"]), dtype="float32")[..., None]  # (B, N, 1)
        patches = np.asarray(ops.convert_to_numpy(patchify(ops.convert_to_tensor(images), self.patch_size)))
        if self.norm_pix_loss:
            mean = patches.mean(axis=-1, keepdims=True)
            std = np.sqrt(patches.var(axis=-1, ddof=1, keepdims=True) + NORM_PIX_EPSILON)
            pred = pred * std + mean
        grid, channels = self.encoder.grid_size, images.shape[-1]

        def picture(p):
            return np.asarray(ops.convert_to_numpy(unpatchify(ops.convert_to_tensor(p), self.patch_size, grid, channels)))

        return {
            "images": images,
            "masked": picture(patches * (1 - mask) + fill_value * mask),
            "reconstruction": picture(pred),
            "pasted": picture(patches * (1 - mask) + pred * mask),
            "mask": mask[..., 0],
        }


def _check_encoder(encoder):
    if not isinstance(encoder, ViTBackbone):
        raise ValueError(
            f"MAE needs a ViTBackbone encoder (it runs the ViT's layers on the visible patches only); "
            f"got {type(encoder).__name__}."
        )
    if encoder.hybrid is not None:
        raise ValueError("MAE reconstructs pixel patches; a hybrid (CNN-stem) ViT encoder is not supported.")
    if encoder.position_embedding in ("relative", "relative_1d"):
        raise ValueError(
            f"MAE drops masked tokens from the sequence; position_embedding={encoder.position_embedding!r} "
            "needs the full grid in every attention layer. Use '1d' (sin-cos fixed by MAE), '2d' or 'none'."
        )


def _fix_sincos_positions(encoder):
    """Overwrite the encoder's learned 1-D table with MAE's fixed 2-D sin-cos table and freeze it."""
    table = sincos_position_table_2d(encoder.grid_size, encoder.hidden_dim, encoder.num_prefix_tokens)
    layer = encoder.position_layer
    layer.embeddings.assign(table.astype(layer.embeddings.dtype))
    layer.trainable = False
