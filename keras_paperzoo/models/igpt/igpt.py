"""iGPT, "Generative Pretraining from Pixels" (Chen et al., ICML 2020): the pre-training trainer."""

import numbers

import numpy as np

import keras
from keras import ops

import keras_hub

from keras_paperzoo.layers.counter_random import hashed_bits, seed_stream, unit_uniform
from keras_paperzoo.models.gpt.gpt_backbone import GPTBackbone
from keras_paperzoo.models.gpt.gpt_causal_lm import GPTCausalLM
from keras_paperzoo.models.igpt.igpt_presets import IGPT_PRESETS
from keras_paperzoo.models.trainer import Trainer
from keras_paperzoo.training.schedules import WarmupCosineDecay

OBJECTIVES = ("autoregressive", "bert")


def paper_optimizer(total_steps=1_000_000, warmup_steps=5000, peak_learning_rate=1e-3):
    """Adam (beta_1 0.9, beta_2 0.95), linear warmup, then cosine decay to 0 over `total_steps`.

    The paper (Sec. 3, "Pre-training") trains iGPT-S/M/L for 1M iterations at batch 128
    (iGPT-XL: 2M at 64) and sweeps the learning rate per model; Adam with
    beta_2 = 0.95, the peak 1e-3 and the warmup length here are our defaults, not
    checked against the paper: pass your own. Warmup is capped at a tenth of the run.
    """
    total_steps = int(total_steps)
    if total_steps < 1:
        raise ValueError(f"total_steps must be a positive number of updates; got {total_steps}.")
    schedule = WarmupCosineDecay(peak_learning_rate, warmup_steps=min(int(warmup_steps), total_steps // 10),
                                 total_steps=total_steps)
    return keras.optimizers.Adam(schedule, beta_1=0.9, beta_2=0.95)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class IGPT(Trainer, keras.Model):
    """iGPT pre-training: palette ids (B, n) in raster order -> {"logits": (B, n, k), "mask": (B, n)}.

    A GPT-2 decoder (`GPTBackbone`, pre-norm, learned position embeddings, Sec. 2.2)
    over a sequence of colour-palette ids (`ColorPalette`, Sec. 3, "Context Reduction"), then
    n^L = layer_norm(h^L) (the backbone's final norm) and "a learned projection to
    logits" (untied from the input embedding, zero-initialised as in the released
    code). The backbone's vocabulary is the palette plus one id, `special_token_id`
    = k, used as:

    - `objective="autoregressive"` (Sec. 2.1, L_AR = E[-log p(x)], raster order):
      the input is the sequence shifted right behind a start-of-sequence token
      (id k, the released code's `sos`), so the logits at t give p(x_t | x_<t); the
      backbone is causal. The loss is the mean next-pixel cross-entropy (nats).
    - `objective="bert"` (Sec. 2.1, L_BERT = E_M sum_{i in M} -log p(x_i | x_[n]\\M)):
      each position enters M independently with probability `mask_probability`
      (0.15), the backbone attends without a causal mask (`GPTBackbone(causal=False)`),
      and the loss is the cross-entropy on the masked positions only (averaged per
      image over its masked positions, then over the batch, as the released code).
      Deviation: the paper zeroes the content embedding of a masked position
      (Sec. 2.2); here its id becomes k, whose embedding is a learned vector (BERT's
      [MASK], BEiT's e_[M]); the position embedding is added in both.

    The trainer's forward pass is the pre-training task: the BERT mask is drawn in
    `fit`, `evaluate` and `predict` alike (pass `bert_mask=` to fix it), from the
    trainer's seed by a counter-based hash (`layers/counter_random.py`), the same on
    every backend. `compile()` gives `paper_optimizer`; the loss is fixed.

    Also: `complete(top_ids)` samples the rest of an image from an AR model (the
    paper's Fig. 1 completions), with GPT's sampling code (`GPTCausalLM.generate_step`,
    keras-hub samplers, the backbone's key/value cache); `features(ids, layer)` gives
    the linear-probe features f^l = <n^l_i>_i (Sec. 2.4).

    Args:
        backbone: a `GPTBackbone` whose `vocabulary_size` is the palette size + 1,
            causal for "autoregressive", not causal for "bert".
        objective: "autoregressive" or "bert".
        mask_probability: float in (0, 1), the BERT mask rate (0.15).
        seed: int in [0, 2**31) or None, the BERT masks' seed.

    Example:

    ```python
    igpt = IGPT.from_preset("igpt_mnist_tiny")              # 16 colours, 28x28, AR
    igpt.compile(total_steps=1000)
    igpt.fit(palette.encode(images), batch_size=32)         # (B, 784) ids, no labels
    bert = IGPT.from_preset("igpt_mnist_tiny", objective="bert", seed=0)   # non-causal backbone
    ```
    """

    backbone_class = GPTBackbone
    presets = IGPT_PRESETS
    fixed_loss = True  # L_AR or L_BERT
    # Completion reuses GPT's cached sampling loop; it calls `call_with_cache` below.
    make_generate_function = keras_hub.models.CausalLM.make_generate_function
    generate_step = GPTCausalLM.generate_step

    def __init__(self, backbone, objective="autoregressive", mask_probability=0.15, seed=None, **kwargs):
        if not isinstance(backbone, GPTBackbone):
            raise ValueError(f"IGPT needs a GPTBackbone; got {type(backbone).__name__}.")
        if objective not in OBJECTIVES:
            raise ValueError(f"IGPT objective must be one of {OBJECTIVES}; got objective={objective!r}.")
        if backbone.causal != (objective == "autoregressive"):
            raise ValueError(
                f"IGPT objective={objective!r} needs a GPTBackbone with causal={objective == 'autoregressive'} "
                f"(a causal mask for L_AR, none for L_BERT); got causal={backbone.causal}.")
        if isinstance(mask_probability, bool) or not isinstance(mask_probability, numbers.Real) \
                or not 0.0 < mask_probability < 1.0:
            raise ValueError(f"IGPT mask_probability must be in (0, 1); got mask_probability={mask_probability!r}.")
        if backbone.vocabulary_size < 2:
            raise ValueError("IGPT needs a backbone vocabulary of palette size + 1 >= 2.")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**31):
            raise ValueError(f"IGPT seed must be None or an int in [0, 2**31); got {seed!r}.")
        super().__init__(**kwargs)
        # === Layers ===
        self.backbone = backbone
        self.palette_size = backbone.vocabulary_size - 1
        self.special_token_id = self.palette_size  # SOS (AR) or mask token (BERT)
        self.logits_projection = keras.layers.Dense(
            self.palette_size, use_bias=False, kernel_initializer="zeros", name="logits_projection")
        self.logits_projection.build((None, None, backbone.hidden_dim))
        self.seed_generator = keras.random.SeedGenerator(seed, name="bert_mask_seed")
        # === Config ===
        self.objective = objective
        self.mask_probability = float(mask_probability)
        self.seed = None if seed is None else int(seed)
        self.sampler = keras_hub.samplers.get("random")
        self.generate_function = None
        self.built = True  # every weight exists: the backbone is functional, the projection built

    @classmethod
    def from_preset(cls, name, **overrides):
        """`Trainer.from_preset`; `objective="bert"` also builds the preset's backbone without a causal mask."""
        if overrides.get("objective") == "bert" and "backbone" not in overrides:
            overrides.setdefault("causal", False)
        return super().from_preset(name, **overrides)

    # --- the forward pass: Sec. 2.1-2.2 ---------------------------------------------
    def sample_bert_mask(self, batch_size, sequence_length):
        """(B, n) float, 1 = in M: each position independently with probability `mask_probability`."""
        stream = seed_stream(self.seed_generator)  # () int32, from (seed, counter)
        index = ops.reshape(ops.arange(batch_size * sequence_length, dtype="int32"), (batch_size, sequence_length))
        uniform = unit_uniform(hashed_bits(stream, index))  # (B, n) in [0, 1), the same on every backend
        return ops.cast(uniform < self.mask_probability, self.compute_dtype)

    def model_inputs(self, pixel_ids, bert_mask=None):
        """(backbone token ids (B, n), loss mask (B, n)) for the objective."""
        pixel_ids = ops.cast(pixel_ids, "int32")
        batch_size, length = ops.shape(pixel_ids)[0], ops.shape(pixel_ids)[1]
        if self.objective == "autoregressive":
            sos = ops.full((batch_size, 1), self.special_token_id, dtype="int32")
            inputs = ops.concatenate([sos, pixel_ids[:, :-1]], axis=1)  # (B, n): SOS, x_1 .. x_{n-1}
            return inputs, ops.ones((batch_size, length), dtype=self.compute_dtype)
        mask = self.sample_bert_mask(batch_size, length) if bert_mask is None else ops.cast(bert_mask, self.compute_dtype)
        inputs = ops.where(mask > 0, self.special_token_id, pixel_ids)  # (B, n): masked ids -> mask token
        return inputs, mask

    def call(self, pixel_ids, training=None, bert_mask=None):
        """pixel_ids (B, n) -> {"logits": (B, n, k), "mask": (B, n) positions in the loss}.

        AR: logits[:, t] predict x_t from x_<t. BERT: `bert_mask` (B, n), 1 = masked,
        fixes M (otherwise drawn from the seed).
        """
        inputs, mask = self.model_inputs(pixel_ids, bert_mask)
        hidden = self.backbone(inputs, training=training)  # n^L, (B, n, d)
        return {"logits": self.logits_projection(hidden), "mask": mask}

    # --- the objective ---------------------------------------------------------------
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """L_AR (mean over every pixel) or L_BERT (mean over each image's masked pixels, then the batch)."""
        if sample_weight is not None:
            raise ValueError("IGPT's loss is the paper's L_AR / L_BERT; sample_weight is not supported.")
        logits, mask = y_pred["logits"], y_pred["mask"]  # (B, n, k), (B, n)
        batch_size, length = ops.shape(logits)[0], ops.shape(logits)[1]
        # Cross-entropy on (B n, k): contiguous classes (see GPTCausalLM.compute_loss).
        nll = keras.losses.sparse_categorical_crossentropy(
            ops.reshape(ops.cast(x, "int32"), (-1,)), ops.reshape(logits, (-1, self.palette_size)), from_logits=True)
        nll = ops.reshape(ops.cast(nll, "float32"), (batch_size, length))  # -log p(x_i | ...)
        mask = ops.cast(mask, "float32")
        per_image = ops.sum(nll * mask, axis=1) / ops.maximum(ops.sum(mask, axis=1), 1.0)  # (B,)
        loss = ops.mean(per_image)
        if self.losses:
            loss = loss + ops.sum(self.losses)
        return loss

    def paper_optimizer(self, total_steps=1_000_000, warmup_steps=5000, peak_learning_rate=1e-3):
        """`compile()`'s default: the module's `paper_optimizer`."""
        return paper_optimizer(total_steps, warmup_steps, peak_learning_rate)

    # --- linear probes: Sec. 2.4 ----------------------------------------------------
    def features(self, pixel_ids, layer=None):
        """f^l = <n^l_i>_i: layer l's normalised states n^l = layer_norm(h^l), averaged over positions.

        `layer` in [0, L] (default L, n^L: the backbone's output, the fine-tuning
        features); for l < L, n^l is block l+1's input LayerNorm applied to h^l (the
        pre-norm block's own layer_norm(h^l), Sec. 2.2). The paper finds the best
        linear-probe features in the middle layers. BERT models see the
        whole image (no mask). Returns (B, d).
        """
        num_layers = self.backbone.num_layers
        layer = num_layers if layer is None else layer
        if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 0 <= layer <= num_layers:
            raise ValueError(f"IGPT.features layer must be an int in [0, {num_layers}]; got layer={layer!r}.")
        states = self._layer_states()(self._probe_inputs(ops.convert_to_tensor(pixel_ids, "int32")))
        return self._pooled(states[layer], layer)  # (B, d)

    def layer_features(self, pixel_ids, batch_size=256):
        """[f^0 .. f^L] (`features` of every layer) from one compiled pass per batch: L + 1 NumPy arrays (N, d).

        What a probe of every layer needs (the paper's Fig. 3): the backbone runs once
        per batch (`predict_on_batch`), not once per layer.
        """
        ids = np.asarray(ops.convert_to_numpy(pixel_ids), dtype="int32")
        if ids.ndim != 2:
            raise ValueError(f"IGPT.layer_features needs (N, n) palette ids; got shape {ids.shape}.")
        model, chunks = self._layer_states(), []
        for start in range(0, len(ids), batch_size):
            inputs = ops.convert_to_numpy(self._probe_inputs(ops.convert_to_tensor(ids[start:start + batch_size])))
            states = model.predict_on_batch(inputs)  # [h^0 .. h^{L-1}, n^L], each (b, n, d)
            chunks.append([ops.convert_to_numpy(self._pooled(h, l)) for l, h in enumerate(states)])
        return [np.concatenate(layer) for layer in zip(*chunks)]

    def _probe_inputs(self, pixel_ids):
        """The backbone's ids for probing: AR shifted behind SOS; BERT unmasked (the whole image)."""
        bert_mask = ops.zeros(ops.shape(pixel_ids)) if self.objective == "bert" else None
        return self.model_inputs(pixel_ids, bert_mask)[0]

    def _layer_states(self):
        """backbone ids -> [h^0 .. h^{L-1}, n^L], a functional model on the backbone's layers, built once.

        Kept outside Keras's tracking (it is not a part of the model and is not saved).
        """
        model = getattr(self, "_states_model", None)
        if model is None:
            backbone = self.backbone
            states = [backbone.embeddings_dropout.output] + [b.output for b in backbone.transformer_layers[:-1]]
            model = keras.Model(backbone.inputs, states + [backbone.output])
            object.__setattr__(self, "_states_model", model)
        return model

    def _pooled(self, states, layer):
        """f^l: h^l (l < L) through block l+1's input LayerNorm, n^L as it is; averaged over positions."""
        if layer < self.backbone.num_layers:
            states = self.backbone.transformer_layers[layer]._self_attention_layer_norm(states)  # n^l
        return ops.mean(states, axis=1)  # (B, d)

    # --- image completion ----------------------------------------------------------------
    def call_with_cache(self, token_ids, cache, cache_update_index):
        """(logits (B, t, k), hidden (B, t, d), cache) for `token_ids` placed at `cache_update_index`.

        The sampling sequence is [SOS, x_1 .. x_n] (n + 1 ids over n positions): its last
        id is only ever an output, so the prompt pass drops what lies past the context.
        """
        token_ids = token_ids[:, :self.backbone.max_sequence_length]
        hidden, cache = self.backbone.call_with_cache(token_ids, cache, cache_update_index)
        return self.logits_projection(hidden), hidden, cache

    def complete(self, pixel_ids, sampler="random"):
        """Sample the rest of each image given its first m pixels in raster order (the top rows).

        Args:
            pixel_ids: (B, m) palette ids, 1 <= m < n (e.g. the top half: m = n / 2).
            sampler: a `keras_hub.samplers` name or object; "random" samples from the
                model's distribution at temperature 1 (the paper's completions).

        Returns (B, n) int32 ids: the given pixels, then the sampled ones.
        """
        if self.objective != "autoregressive":
            raise ValueError("IGPT.complete needs objective='autoregressive' (L_BERT gives no sampling order).")
        prompts = np.asarray(ops.convert_to_numpy(pixel_ids), dtype="int32")
        length = self.backbone.max_sequence_length
        if prompts.ndim != 2 or not 1 <= prompts.shape[1] < length:
            raise ValueError(f"IGPT.complete needs (B, m) pixel ids with 1 <= m < {length}; got {prompts.shape}.")
        batch, given = prompts.shape
        token_ids = np.zeros((batch, length + 1), "int32")  # [SOS, x_1 .. x_n]
        token_ids[:, 0], token_ids[:, 1:given + 1] = self.special_token_id, prompts
        padding_mask = np.zeros((batch, length + 1), bool)
        padding_mask[:, :given + 1] = True
        self.sampler = keras_hub.samplers.get(sampler) if isinstance(sampler, (str, dict)) else sampler
        self.generate_function = None
        out = self.make_generate_function()({"token_ids": token_ids, "padding_mask": padding_mask})
        return np.asarray(ops.convert_to_numpy(out["token_ids"]), dtype="int32")[:, 1:]
