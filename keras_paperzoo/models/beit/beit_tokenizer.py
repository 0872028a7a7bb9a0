"""BEiT's visual tokenizer: a discrete VAE (dVAE) trained as DALL-E's, on `keras.ops`.

BEiT ("BERT Pre-Training of Image Transformers", Bao et al. 2021, arXiv 2106.08254,
Sec. 2.1.2) predicts discrete visual tokens z in V^{h x w}, |V| = 8192, one per image
patch, produced by the tokenizer q_phi(z|x) of a dVAE whose decoder p_psi(x|z)
reconstructs the image; BEiT uses the released DALL-E tokenizer (Ramesh et al. 2021,
"Zero-Shot Text-to-Image Generation", arXiv 2102.12092). Those weights cannot be
downloaded here, so this module trains its own.
"""

import inspect
import math
import numbers

import numpy as np

import keras
from keras import ops

from keras_paperzoo.callbacks.image_grid import image_grid, save_png
from keras_paperzoo.models.backbone import check_image_shape
from keras_paperzoo.models.beit.beit_tokenizer_presets import VISUAL_TOKENIZER_PRESETS
from keras_paperzoo.models.trainer import Trainer


def cosine_anneal(step, start, end, steps):
    """`end + (start - end) (1 + cos(pi min(step / steps, 1))) / 2`: start at step 0, end from `steps` on.

    DALL-E's annealing shape (App. A.2 anneals tau, beta and the step size by cosine schedules); `steps` = 0
    gives `end` at once. `step` may be a number or a tensor; returns a float32 tensor.
    """
    step = ops.cast(step, "float32")
    progress = ops.clip(step / float(max(steps, 1)), 0.0, 1.0) if steps > 0 else ops.ones_like(step)
    return end + (start - end) * (1.0 + ops.cos(math.pi * progress)) / 2.0


def kl_to_uniform(logits):
    """KL(q || U) = sum_k q_k log q_k + log K, q = softmax(logits) over the last axis (K codes); nats, (...,)."""
    logits = ops.cast(logits, "float32")
    log_q = ops.log_softmax(logits, axis=-1)
    return ops.sum(ops.exp(log_q) * log_q, axis=-1) + math.log(logits.shape[-1])


def code_perplexity(ids, vocabulary_size):
    """exp(H(p)), p the code usage of `ids` (any shape, ints in [0, K)) pooled over all of them.

    1 when every id is the same (vocabulary collapse), K when the K codes are used
    equally often. Pure `keras.ops` (a `segment_sum` with a static K), so it runs in a
    traced training step on every backend.
    """
    ids = ops.reshape(ops.cast(ids, "int32"), (-1,))  # (N,)
    counts = ops.segment_sum(ops.ones_like(ids, dtype="float32"), ids, num_segments=vocabulary_size)  # (K,)
    usage = counts / ops.maximum(ops.sum(counts), 1.0)  # p, (K,)
    entropy = -ops.sum(usage * ops.log(ops.maximum(usage, 1e-30)))  # 0 log 0 = 0
    return ops.exp(entropy)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class VisualTokenizer(Trainer, keras.Model):
    """A discrete VAE whose encoder maps an image to a grid of codebook ids: BEiT's visual tokens.

    The tokenizer of BEiT (Bao et al. 2021, Sec. 2.1.2; 2.4, eq. 2, stage 1): a dVAE
    trained first, on images alone, then frozen while BEiT learns to predict its
    tokens. Trained as DALL-E's dVAE (Ramesh et al. 2021, Sec. 2.1 and App. A.2):

    - the encoder gives logits over the K = `vocabulary_size` codes at every position of
      an h x w grid, q_phi(z_ij | x) = softmax(logits_ij). The grid is BEiT's patch
      grid: h, w = H / P, W / P (`grid_size`), so token (i, j) describes patch (i, j);
    - in training the discrete z is replaced by its Gumbel-softmax relaxation
      y = softmax((logits + g) / tau), g ~ Gumbel(0, 1), in the forward and the backward
      pass alike (as A. Ramesh describes DALL-E's training, openai/DALL-E issue 1), with tau
      annealed from `temperature_start` (1) to `temperature_end` (1/16) over
      `temperature_steps` updates (150,000 in DALL-E) by a cosine schedule (DALL-E's shape);
    - the decoder reconstructs the image from the relaxed one-hot codes through an
      embedding of the codebook (a 1 x 1 convolution from K to `hidden_dim`: for a
      hard one-hot, the lookup of code z's embedding);
    - the KL term is KL(q_phi(z | x) || U(K)) against a uniform prior over the codebook
      at every position (DALL-E's p_psi at stage 1; BEiT Sec. 2.1.2: "a uniform
      prior"), weighted by beta, raised from 0 to `kl_weight` (6.6 in DALL-E) over the
      first `kl_warmup_steps` updates (5,000 in DALL-E), by the cosine schedule too.

    At inference the tokenizer is the argmax (BEiT Sec. 2.4: z_hat = argmax_z
    q_phi(z|x)): `tokenize(images)` -> (B, h, w) int32 ids, `decode(ids)` -> images,
    and `call(images)` = `decode(tokenize(images))`.

    The loss (what `fit` minimises), per image and per pixel value (D = H W C):

        loss = (sum_pixels (x - x_hat)^2 + beta(t) sum_positions KL(q || U)) / D
             = reconstruction_loss + beta(t) * kl * (h w) / D,

    with `reconstruction_loss` the mean squared error and `kl` the mean KL per grid
    position (nats), so that beta weighs the image's total KL against its total
    reconstruction term, as in DALL-E's ELBO (eq. 1, beta > 1).

    Deviations from DALL-E, and why:
    - Likelihood: DALL-E's decoder parameterises a logit-Laplace distribution (Sec. 2.1,
      App. A.3) on pixels squashed into (eps, 1 - eps); here it is a Gaussian of fixed
      variance 1/2, whose negative log-likelihood is the squared error (up to a
      constant): one output per pixel, no squashing, the likelihood of most
      autoencoder code. Its pull is weaker than a sharp logit-Laplace's, so DALL-E's
      beta = 6.6 is not calibrated for it (the small preset uses 0.1; see the presets).
    - Network: DALL-E's dVAE is a ResNet (four groups of bottleneck blocks, 256-2048
      wide, downsampling 8 x 8 to a 32 x 32 grid on 256 x 256 images). Ours is small and
      plain: a stem 3 x 3 convolution, then log2(P) stages of a stride-2 3 x 3
      convolution and `num_res_blocks` residual blocks (ReLU, 3 x 3, ReLU, 1 x 1), then a
      1 x 1 convolution to K logits; the decoder mirrors it (codebook embedding,
      residual blocks, log2(P) stages of nearest-neighbour upsampling and a 3 x 3
      convolution, a 1 x 1 convolution to C channels). So the grid equals BEiT's patch
      grid for any power-of-two patch size.
    - Schedule step: the anneals read the tokenizer's own update counter
      (`schedule_step`, a non-trainable variable advanced once per training step by
      `compute_loss`), not the optimizer's `iterations`: on JAX the forward pass is
      traced without the optimizer's state, so its count would be a constant of the
      trace. Under `fit` the two are equal; the counter is saved with the model and
      restored by `BackupAndRestore`, so a resumed run continues the schedules exactly.

    `compile()` with no arguments gives DALL-E's optimizer (App. A.2, `paper_optimizer`):
    AdamW (beta_1 0.9, beta_2 0.999, eps 1e-8, weight decay 1e-4), the step size annealed
    from 1e-4 to 1.25e-6 over 1,200,000 updates by a cosine schedule; pass
    `total_steps=` to fit it to your run. The loss is fixed (`compile(loss=...)` is
    refused). Logs: `loss`, `reconstruction_loss` (MSE), `kl` (nats per position),
    `temperature` (tau of the step), `perplexity` (exp of the entropy of the
    batch's code usage under the hard argmax ids; 1 means every position got the same
    code: vocabulary collapse; K means all codes used equally), each averaged over the
    epoch's batches. The Gumbel noise comes from the tokenizer's `SeedGenerator`
    (`seed`); with `EpochSeeds` a resumed run draws the noise of the uninterrupted one.

    Args:
        image_shape: (H, W, C) of the images, H and W multiples of `patch_size`.
        patch_size: P, a power of two >= 2: one token per P x P patch (16 in BEiT).
        vocabulary_size: K >= 2 codes (8192 in BEiT / DALL-E).
        hidden_dim: the width of every convolution of both networks.
        num_res_blocks: residual blocks after each resolution stage (>= 0).
        temperature_start, temperature_end: tau's anneal, 0 < end <= start (1 and 1/16).
        temperature_steps: updates over which tau anneals (>= 0; 0: `temperature_end` at once).
        kl_weight: beta's final value (>= 0; 6.6 in DALL-E).
        kl_warmup_steps: updates over which beta rises from 0 (>= 0).
        seed: int in [0, 2**31) or None, the Gumbel noise's seed.

    Example:

    ```python
    import numpy as np
    from keras_paperzoo.models.beit import VisualTokenizer
    tokenizer = VisualTokenizer.from_preset("beit_tokenizer_digits", seed=0)
    tokenizer.compile(total_steps=500)
    images = np.random.rand(64, 32, 32, 1).astype("float32")
    tokenizer.fit(images, batch_size=32, epochs=1)
    ids = tokenizer.tokenize(images[:4])         # (4, 8, 8) int32 in [0, 64)
    pictures = tokenizer.decode(ids)             # (4, 32, 32, 1)
    tokenizer.save_reconstructions(images[:8], "reconstructions.png")
    ```
    """

    presets = VISUAL_TOKENIZER_PRESETS
    fixed_loss = True  # the beta-weighted ELBO

    def __init__(self, image_shape=(224, 224, 3), patch_size=16, vocabulary_size=8192, hidden_dim=256,
                 num_res_blocks=1, temperature_start=1.0, temperature_end=1.0 / 16, temperature_steps=150_000,
                 kl_weight=6.6, kl_warmup_steps=5000, seed=None, **kwargs):
        image_shape, num_stages = _check_arguments(
            image_shape, patch_size, vocabulary_size, hidden_dim, num_res_blocks, temperature_start,
            temperature_end, temperature_steps, kl_weight, kl_warmup_steps, seed)
        super().__init__(**kwargs)
        height, width, channels = image_shape
        grid = (height // patch_size, width // patch_size)

        # === Layers ===
        self.encoder = _encoder(image_shape, num_stages, vocabulary_size, hidden_dim, num_res_blocks)
        self.decoder = _decoder(grid, channels, num_stages, vocabulary_size, hidden_dim, num_res_blocks)
        self.seed_generator = keras.random.SeedGenerator(seed, name="gumbel_seed")
        # === State updated outside gradient descent: the anneals' step ===
        self.schedule_step = self.add_weight(shape=(), dtype="int32", initializer="zeros", trainable=False,
                                             name="schedule_step")
        self.reconstruction_tracker = keras.metrics.Mean(name="reconstruction_loss")
        self.kl_tracker = keras.metrics.Mean(name="kl")
        self.temperature_tracker = keras.metrics.Mean(name="temperature")
        self.perplexity_tracker = keras.metrics.Mean(name="perplexity")
        self.built = True  # both networks are functional and built

        # === Config ===
        self.image_shape = image_shape
        self.patch_size = int(patch_size)
        self.vocabulary_size = int(vocabulary_size)
        self.hidden_dim = int(hidden_dim)
        self.num_res_blocks = int(num_res_blocks)
        self.temperature_start = float(temperature_start)
        self.temperature_end = float(temperature_end)
        self.temperature_steps = int(temperature_steps)
        self.kl_weight = float(kl_weight)
        self.kl_warmup_steps = int(kl_warmup_steps)
        self.seed = None if seed is None else int(seed)
        # Derived.
        self.grid_size = grid
        self._step_terms = None  # what the last forward pass leaves for compute_loss (see call)

    # --- the anneals: DALL-E App. A.2 --------------------------------------------------
    def temperature(self, step=None):
        """tau at update `step` (default: the current `schedule_step`): cosine from start to end."""
        step = self.schedule_step if step is None else step
        return cosine_anneal(step, self.temperature_start, self.temperature_end, self.temperature_steps)

    def beta(self, step=None):
        """The KL weight at update `step` (default: the current one): cosine from 0 to `kl_weight`."""
        step = self.schedule_step if step is None else step
        return cosine_anneal(step, 0.0, self.kl_weight, self.kl_warmup_steps)

    # --- inference: BEiT Sec. 2.4, z_hat = argmax q_phi(z | x) --------------------------
    def logits(self, images, training=False):
        """The encoder's logits over the codebook at every grid position, (B, h, w, K)."""
        return self.encoder(self._check_images(images), training=training)

    def tokenize(self, images):
        """images (B, H, W, C) -> visual tokens (B, h, w) int32 in [0, K): the argmax of the logits, no noise."""
        return ops.cast(ops.argmax(self.logits(images), axis=-1), "int32")

    def decode(self, ids):
        """Visual tokens (B, h, w) -> reconstructed images (B, H, W, C) (the decoder on hard one-hot codes).

        Concrete ids (NumPy arrays, lists) are checked: shape (B, h, w), values in [0, K);
        tensors are not (inside a traced step their values are unknown), and an id out of
        range there decodes as the all-zero code.
        """
        if isinstance(ids, (np.ndarray, list, tuple)):
            ids = self._check_ids(np.asarray(ids))
        codes = ops.one_hot(ops.cast(ids, "int32"), self.vocabulary_size, dtype=self.compute_dtype)  # (B, h, w, K)
        return self.decoder(codes, training=False)

    # --- the forward pass ---------------------------------------------------------------
    def call(self, images, training=None):
        """images (B, H, W, C) -> reconstruction (B, H, W, C).

        Training: the decoder sees the Gumbel-softmax relaxation of the codes at the
        current temperature. Otherwise the hard argmax one-hot: `decode(tokenize(x))`.
        """
        logits = self.logits(images, training=training)  # (B, h, w, K)
        temperature = self.temperature()
        if training:
            codes = self.gumbel_softmax(logits, temperature)  # (B, h, w, K), relaxed one-hot
        else:
            codes = ops.one_hot(ops.argmax(logits, axis=-1), self.vocabulary_size, dtype="float32")
        reconstruction = self.decoder(ops.cast(codes, self.compute_dtype), training=training)  # (B, H, W, C)
        # The loss needs the logits and tau of this very pass: kept for `compute_loss`, which
        # uses them only for this output (in `fit`, the same traced step).
        object.__setattr__(self, "_step_terms", (reconstruction, logits, temperature))
        return reconstruction

    def gumbel_softmax(self, logits, temperature):
        """softmax((logits + g) / tau), g ~ Gumbel(0, 1) i.i.d. from the tokenizer's seed; float32."""
        logits = ops.cast(logits, "float32")
        uniform = keras.random.uniform(ops.shape(logits), minval=1e-7, maxval=1.0, seed=self.seed_generator)
        gumbel = -ops.log(-ops.log(uniform))
        return ops.softmax((logits + gumbel) / temperature, axis=-1)

    # --- the objective: DALL-E eq. 1 with beta, stage 1 ------------------------------------
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """MSE + beta(t) KL (h w / D); also advances `schedule_step` when training. Labels are ignored."""
        if sample_weight is not None:
            raise ValueError("VisualTokenizer's loss is the dVAE's ELBO; sample_weight is not supported.")
        terms = self._step_terms
        object.__setattr__(self, "_step_terms", None)
        if terms is not None and terms[0] is y_pred:
            _, logits, temperature = terms
        else:  # y_pred not from this model's last call: the logits again, at the current temperature
            logits, temperature = self.logits(x, training=training), self.temperature()
        step = self.schedule_step.value
        images = ops.cast(x, "float32")
        reconstruction_loss = ops.mean(ops.square(ops.cast(y_pred, "float32") - images))
        kl = ops.mean(kl_to_uniform(logits))  # nats per position
        height, width, channels = self.image_shape
        positions_per_value = self.grid_size[0] * self.grid_size[1] / (height * width * channels)
        loss = reconstruction_loss + self.beta(step) * kl * positions_per_value
        if training:
            self.schedule_step.assign(step + 1)
        ids = ops.argmax(logits, axis=-1)  # (B, h, w), the hard tokens
        self.reconstruction_tracker.update_state(reconstruction_loss)
        self.kl_tracker.update_state(kl)
        self.temperature_tracker.update_state(temperature)
        self.perplexity_tracker.update_state(code_perplexity(ids, self.vocabulary_size))
        if self.losses:
            loss = loss + ops.sum(self.losses)
        return loss

    def paper_optimizer(self, total_steps=1_200_000, learning_rate=1e-4, final_learning_rate=1.25e-6,
                        weight_decay=1e-4):
        """DALL-E's dVAE optimizer (App. A.2): AdamW (0.9, 0.999, eps 1e-8, decay 1e-4), lr 1e-4 -> 1.25e-6, cosine."""
        if isinstance(total_steps, bool) or not isinstance(total_steps, numbers.Integral) or total_steps < 1:
            raise ValueError(f"total_steps must be a positive int (updates); got total_steps={total_steps!r}.")
        schedule = keras.optimizers.schedules.CosineDecay(
            learning_rate, decay_steps=int(total_steps), alpha=final_learning_rate / learning_rate)
        return keras.optimizers.AdamW(schedule, weight_decay=weight_decay, beta_1=0.9, beta_2=0.999, epsilon=1e-8)

    # --- pictures --------------------------------------------------------------------------
    def save_reconstructions(self, images, path, value_range=(0.0, 1.0), scale=1):
        """Write a PNG: the images in the top row, `call(images)` (hard tokens) below; returns the path.

        `value_range` (low, high) maps pixel values to black..white; `scale` enlarges.
        """
        low, high = value_range
        if not high > low:
            raise ValueError(f"value_range must be (low, high) with high > low; got {value_range!r}.")
        images = np.asarray(images, dtype="float32")
        reconstructions = np.asarray(ops.convert_to_numpy(self(images, training=False)), dtype="float32")
        tiles = np.concatenate([images, reconstructions], axis=0)  # (2B, H, W, C): originals, then reconstructions
        return save_png(image_grid((tiles - low) / (high - low), columns=len(images), gap=1), path, scale=scale)

    # --- presets: no backbone, every value is an argument --------------------------------------
    @classmethod
    def build_backbones(cls, backbone_spec, overrides):
        if overrides:
            raise ValueError(
                f"Unknown override(s) {sorted(overrides)} for VisualTokenizer.from_preset; it takes "
                f"{', '.join(sorted(_own_arguments()))}."
            )
        return {}

    @classmethod
    def _network_arguments(cls):
        return ()

    # --- input checks ------------------------------------------------------------------------
    def _check_images(self, images):
        shape = tuple(images.shape) if hasattr(images, "shape") else np.shape(images)
        expected = tuple(self.image_shape)
        if len(shape) != 4 or any(s is not None and s != e for s, e in zip(shape[1:], expected)):
            height, width = shape[1:3] if len(shape) == 4 else (None, None)
            why = ""
            if any(s is not None and s % self.patch_size for s in (height, width)):
                why = f" (its height and width must be multiples of patch_size {self.patch_size})"
            raise ValueError(f"VisualTokenizer takes images of shape (B, {', '.join(map(str, expected))}); got "
                             f"{shape}{why}.")
        return images

    def _check_ids(self, ids):
        expected = (None,) + tuple(self.grid_size)
        if ids.ndim != 3 or tuple(ids.shape[1:]) != tuple(self.grid_size):
            raise ValueError(f"VisualTokenizer.decode takes ids of shape {expected}; got {ids.shape}.")
        if not np.issubdtype(ids.dtype, np.integer):
            raise ValueError(f"VisualTokenizer.decode takes integer ids; got dtype {ids.dtype}.")
        if ids.size and (ids.min() < 0 or ids.max() >= self.vocabulary_size):
            raise ValueError(f"VisualTokenizer.decode ids must be in [0, vocabulary_size={self.vocabulary_size}); "
                             f"got values in [{ids.min()}, {ids.max()}].")
        return ids.astype("int32")


def _own_arguments():
    return [p for p in inspect.signature(VisualTokenizer.__init__).parameters if p not in ("self", "kwargs")]


# --- the two networks --------------------------------------------------------------------------
def _residual_block(x, hidden_dim, name):
    """x + conv1x1(relu(conv3x3(relu(x)))): a small ResNet block at constant width."""
    h = keras.layers.ReLU(name=f"{name}_relu_1")(x)
    h = keras.layers.Conv2D(hidden_dim, 3, padding="same", name=f"{name}_conv_1")(h)
    h = keras.layers.ReLU(name=f"{name}_relu_2")(h)
    h = keras.layers.Conv2D(hidden_dim, 1, name=f"{name}_conv_2")(h)
    return keras.layers.Add(name=f"{name}_add")([x, h])


def _encoder(image_shape, num_stages, vocabulary_size, hidden_dim, num_res_blocks):
    """(B, H, W, C) -> logits (B, H / 2^s, W / 2^s, K): stem, s x (stride-2 conv, residual blocks), 1 x 1 conv."""
    images = keras.Input(image_shape, name="images")
    x = keras.layers.Conv2D(hidden_dim, 3, padding="same", name="stem")(images)
    for stage in range(num_stages):
        x = keras.layers.Conv2D(hidden_dim, 3, strides=2, padding="same", activation="relu",
                                name=f"stage_{stage}_downsample")(x)  # halves H and W
        for block in range(num_res_blocks):
            x = _residual_block(x, hidden_dim, f"stage_{stage}_block_{block}")
    x = keras.layers.ReLU(name="head_relu")(x)
    logits = keras.layers.Conv2D(vocabulary_size, 1, name="logits")(x)  # (B, h, w, K)
    return keras.Model(images, logits, name="encoder")


def _decoder(grid, channels, num_stages, vocabulary_size, hidden_dim, num_res_blocks):
    """(relaxed) one-hot codes (B, h, w, K) -> images (B, h 2^s, w 2^s, C), the encoder mirrored."""
    codes = keras.Input((*grid, vocabulary_size), name="codes")
    x = keras.layers.Conv2D(hidden_dim, 1, use_bias=False, name="codebook_embedding")(codes)  # sum_k y_k e_k
    for stage in range(num_stages):
        for block in range(num_res_blocks):
            x = _residual_block(x, hidden_dim, f"stage_{stage}_block_{block}")
        x = keras.layers.UpSampling2D(2, interpolation="nearest", name=f"stage_{stage}_upsample")(x)
        x = keras.layers.Conv2D(hidden_dim, 3, padding="same", activation="relu", name=f"stage_{stage}_conv")(x)
    images = keras.layers.Conv2D(channels, 1, name="pixels")(x)  # the Gaussian's mean
    return keras.Model(codes, images, name="decoder")


def _is_int(value):
    return not isinstance(value, bool) and isinstance(value, numbers.Integral)


def _is_number(value):
    return not isinstance(value, bool) and isinstance(value, numbers.Real) and math.isfinite(value)


def _check_arguments(image_shape, patch_size, vocabulary_size, hidden_dim, num_res_blocks, temperature_start,
                     temperature_end, temperature_steps, kl_weight, kl_warmup_steps, seed):
    """((H, W, C), number of stride-2 stages); each message names the value and the rule."""
    if not _is_int(patch_size) or patch_size < 2 or patch_size & (patch_size - 1):
        raise ValueError(f"VisualTokenizer patch_size must be a power of two >= 2 (one stride-2 stage per factor "
                         f"of 2); got patch_size={patch_size!r}.")
    image_shape = check_image_shape("VisualTokenizer", image_shape, fixed_size=True)
    height, width, _ = image_shape
    if height % patch_size or width % patch_size:
        raise ValueError(f"VisualTokenizer image height {height} and width {width} should be multiples of "
                         f"patch_size {patch_size} (one token per patch).")
    if not _is_int(vocabulary_size) or vocabulary_size < 2:
        raise ValueError(f"VisualTokenizer vocabulary_size must be an int >= 2; got vocabulary_size="
                         f"{vocabulary_size!r}.")
    for name, value, low in (("hidden_dim", hidden_dim, 1), ("num_res_blocks", num_res_blocks, 0),
                             ("temperature_steps", temperature_steps, 0), ("kl_warmup_steps", kl_warmup_steps, 0)):
        if not _is_int(value) or value < low:
            raise ValueError(f"VisualTokenizer {name} must be an int >= {low}; got {name}={value!r}.")
    if not (_is_number(temperature_start) and _is_number(temperature_end)) or not 0 < temperature_end:
        raise ValueError(f"VisualTokenizer temperatures must be positive numbers; got temperature_start="
                         f"{temperature_start!r}, temperature_end={temperature_end!r}.")
    if temperature_end > temperature_start:
        raise ValueError(f"VisualTokenizer anneals the temperature down: temperature_end must be <= "
                         f"temperature_start; got {temperature_end} > {temperature_start}.")
    if not _is_number(kl_weight) or kl_weight < 0:
        raise ValueError(f"VisualTokenizer kl_weight (beta) must be a number >= 0; got kl_weight={kl_weight!r}.")
    if seed is not None and (not _is_int(seed) or not 0 <= seed < 2**31):
        raise ValueError(f"VisualTokenizer seed must be None or an int in [0, 2**31); got seed={seed!r}.")
    return image_shape, int(patch_size).bit_length() - 1
