"""GPT-1 (Radford et al. 2018) and GPT-2 (Radford et al. 2019): the decoder-only Transformer.

GPT-1, "Improving Language Understanding by Generative Pre-Training", Sec. 3.1, eq. (2):

    h_0 = U W_e + W_p
    h_l = transformer_block(h_{l-1}),  l = 1..n
    P(u) = softmax(h_n W_e^T)

GPT-2, "Language Models are Unsupervised Multitask Learners", Sec. 2.3: the same
model with "layer normalization moved to the input of each sub-block ... and an
additional layer normalization added after the final self-attention block", and
"the weights of residual layers at initialization scaled by a factor of 1/sqrt(N)
where N is the number of residual layers" (two per block: N = 2 x num_layers).
"""

import math

import numpy as np

import keras
from keras import ops

import keras_hub

from keras_paperzoo.models.backbone import Backbone, transformer_layer_stack
from keras_paperzoo.models.gpt.gpt_presets import GPT_PRESETS

INITIALIZER_RANGE = 0.02  # GPT-1 Sec. 4.1: "weights initialized ... N(0, 0.02)"


@keras.saving.register_keras_serializable(package="keras_paperzoo")
def gelu_approximate(x):
    """GELU in its tanh form, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): GPT-1 and GPT-2's code."""
    return keras.activations.gelu(x, approximate=True)


def _positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"GPTBackbone {name} must be a positive int; got {name}={value!r}.")
    return int(value)


def gpt_parameter_count(vocabulary_size, num_layers, hidden_dim, intermediate_dim, max_sequence_length,
                        norm_first=True, **unused):
    """Parameters of a `GPTBackbone` from its config, without building it (tied output embedding).

    Per block: q, k, v, output projections with biases 4(D^2 + D), two LayerNorms 4D,
    the MLP D F + F + F D + D; embeddings V D + P D; GPT-2's final LayerNorm 2D.
    Example: `gpt_parameter_count(**GPT_PRESETS["gpt2_xl"]["config"])` -> 1,557,611,200.
    """
    d, f = hidden_dim, intermediate_dim
    block = 4 * (d * d + d) + 4 * d + (d * f + f + f * d + d)
    final_norm = 2 * d if norm_first else 0
    return vocabulary_size * d + max_sequence_length * d + num_layers * block + final_norm


ATTENTION_PATTERNS = ("dense", "alternating_banded", "banded")


def banded_layers(attention_pattern, num_layers):
    """Indices of the blocks with locally banded attention: none, the odd ones (1, 3, ...), or all."""
    if attention_pattern == "dense":
        return []
    return [i for i in range(num_layers) if attention_pattern == "banded" or i % 2 == 1]


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class LocalBandMask(keras.layers.Layer):
    """The locally banded attention mask: query position t may attend to key positions j > t - w.

    (B, T, D) queries -> (B, T, S) int mask, 1 where key position j satisfies
    t - j < `window` with t = `start_index` + query index; S is `key_length` (a key/value
    cache's length) or T. It is combined with the causal mask (j <= t) by the
    attention layer, which leaves the band [t - w + 1, t]: the local attention of the
    Sparse Transformer (Child et al. 2019, Sec. 4.2), used by GPT-3 (Brown et al. 2020,
    Sec. 2.1) in every other layer.
    """

    def __init__(self, window, **kwargs):
        super().__init__(**kwargs)
        self.window = int(window)

    def call(self, x, start_index=0, key_length=None):
        batch, length = ops.shape(x)[0], ops.shape(x)[1]
        keys = length if key_length is None else key_length
        t = ops.expand_dims(ops.arange(length, dtype="int32") + ops.cast(start_index, "int32"), 1)  # (T, 1)
        j = ops.expand_dims(ops.arange(keys, dtype="int32"), 0)  # (1, S)
        mask = ops.cast(ops.less(t - j, self.window), "int32")  # (T, S)
        return ops.broadcast_to(ops.expand_dims(mask, 0), (batch, length, keys))  # (B, T, S)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], input_shape[1], input_shape[1])

    def get_config(self):
        config = super().get_config()
        config.update({"window": self.window})
        return config


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class GPTBackbone(Backbone):
    """Decoder-only causal Transformer: token ids (B, T) -> hidden states (B, T, D).

    Token embedding W_e plus a learned position table W_p (GPT-1 eq. 2; "learned
    position embeddings instead of the sinusoidal version"), embedding dropout, then
    `num_layers` masked self-attention blocks (`keras_hub.layers.TransformerDecoder`
    without cross-attention, causal mask): post-norm with `norm_first=False` (GPT-1,
    the original Transformer's "Add & Norm"), pre-norm with a final LayerNorm with
    `norm_first=True` (GPT-2 Sec. 2.3). MLP: Dense(4D) -> GELU (tanh form, as both
    papers' code) -> Dense(D). Dropout `dropout` on the embeddings, the attention
    probabilities and each residual branch (GPT-1 Sec. 4.1: "residual, embedding, and
    attention dropouts with a rate of 0.1").

    Initialisation: every kernel and both embeddings N(0, 0.02^2), biases zero,
    LayerNorm (1, 0) (GPT-1 Sec. 4.1); with `norm_first=True`, the two residual output
    projections of each block (attention output, MLP output) are then scaled by
    1/sqrt(2 num_layers) (GPT-2 Sec. 2.3, as in the released code and `transformers`).
    Deviation: GPT-2's released TensorFlow code draws the position table from
    N(0, 0.01^2); we use 0.02 for both tables, as `transformers` does.

    The output embedding is tied to the input one (P(u) = softmax(h_n W_e^T)):
    `backbone.token_embedding(h, reverse=True)` gives the logits (see `GPTCausalLM`).
    Right padding needs no mask: attention is causal, so padding after a token never
    reaches it.

    GPT-3's sparse attention (Brown et al. 2020, Sec. 2.1: "alternating dense and
    locally banded sparse attention patterns in the layers of the transformer, similar
    to the Sparse Transformer"): `attention_pattern="alternating_banded"` makes the odd
    blocks (1, 3, ...; the first block stays dense, as in EleutherAI's GPT-Neo
    replication) attend only to a band of `local_window` positions, t to
    [t - w + 1, t] (`LocalBandMask`, combined with the causal mask); `"banded"` bands
    every block. The paper gives neither the band width nor which layers come first;
    GPT-Neo uses 256. The band is a mask over dense attention: the same outputs as a
    sparse kernel, not its memory or speed.

    Differences from `keras_hub.models.GPT2Backbone`: GPT-1's post-norm blocks, the
    residual-projection scaling (keras-hub initialises every kernel alike), no
    `padding_mask` input (causal attention makes it unnecessary for right padding).

    Args:
        vocabulary_size: int, V (40,478 for GPT-1, 50,257 for GPT-2).
        num_layers: int, the number of blocks.
        hidden_dim: int, D; divisible by `num_heads`.
        num_heads: int, attention heads.
        intermediate_dim: int, the MLP width (4D in both papers).
        max_sequence_length: int, the context: rows of the position table (512, 1024).
        dropout: float in [0, 1), 0.1 in both papers' released models.
        norm_first: bool, False = GPT-1 (post-norm, no final norm, no residual
            scaling), True = GPT-2 (pre-norm, final LayerNorm, scaled residual init).
        layer_norm_epsilon: float, 1e-5 in both released models.
        causal: bool, True (GPT): each position attends to itself and earlier ones.
            False: full self-attention, for iGPT's BERT objective (Chen et al. 2020,
            Sec. 2.2: with BERT "no attention logit masking is required");
            `call_with_cache` (generation) needs True.
        attention_pattern: "dense" (default: every block attends to all earlier
            positions), "alternating_banded" (GPT-3 Sec. 2.1: blocks 1, 3, ... locally
            banded) or "banded" (every block).
        local_window: int, the band width w of the banded blocks (needed with a banded
            pattern, None with "dense").

    Example:

    ```python
    backbone = GPTBackbone.from_preset("gpt2_small")   # 124,439,808 parameters
    tiny = GPTBackbone(vocabulary_size=99, num_layers=2, hidden_dim=32, num_heads=4,
                       intermediate_dim=64, max_sequence_length=16)
    tiny(np.zeros((2, 10), "int32")).shape              # (2, 10, 32)
    ```
    """

    presets = GPT_PRESETS

    def __init__(self, vocabulary_size, num_layers, hidden_dim, num_heads, intermediate_dim,
                 max_sequence_length, dropout=0.1, norm_first=True, layer_norm_epsilon=1e-5, causal=True,
                 attention_pattern="dense", local_window=None, **kwargs):
        vocabulary_size = _positive_int(vocabulary_size, "vocabulary_size")
        num_layers = _positive_int(num_layers, "num_layers")
        hidden_dim = _positive_int(hidden_dim, "hidden_dim")
        num_heads = _positive_int(num_heads, "num_heads")
        intermediate_dim = _positive_int(intermediate_dim, "intermediate_dim")
        max_sequence_length = _positive_int(max_sequence_length, "max_sequence_length")
        if hidden_dim % num_heads:
            raise ValueError(f"GPTBackbone hidden_dim {hidden_dim} should be divisible by num_heads {num_heads}.")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"GPTBackbone dropout must be in [0, 1); got dropout={dropout!r}.")
        if not layer_norm_epsilon > 0:
            raise ValueError(f"GPTBackbone layer_norm_epsilon must be positive; got {layer_norm_epsilon!r}.")
        if attention_pattern not in ATTENTION_PATTERNS:
            raise ValueError(
                f"GPTBackbone attention_pattern must be one of {', '.join(ATTENTION_PATTERNS)}; "
                f"got attention_pattern={attention_pattern!r}."
            )
        if attention_pattern == "dense" and local_window is not None:
            raise ValueError(
                f"GPTBackbone local_window is the band width of a banded attention_pattern; got "
                f"local_window={local_window!r} with attention_pattern='dense'."
            )
        if attention_pattern != "dense":
            local_window = _positive_int(local_window, "local_window")
            if not causal:
                raise ValueError(
                    f"GPTBackbone attention_pattern={attention_pattern!r} is a causal band; it needs causal=True."
                )
        normal = lambda: keras.initializers.RandomNormal(stddev=INITIALIZER_RANGE)  # noqa: E731

        # === Layers ===
        token_embedding = keras.layers.ReversibleEmbedding(
            vocabulary_size, hidden_dim, tie_weights=True, embeddings_initializer=normal(), name="token_embedding"
        )  # W_e, also the output projection
        position_embedding = keras_hub.layers.PositionEmbedding(
            max_sequence_length, initializer=normal(), name="position_embedding"
        )  # W_p
        embeddings_dropout = keras.layers.Dropout(dropout, name="embeddings_dropout")
        blocks = transformer_layer_stack(
            keras_hub.layers.TransformerDecoder, num_layers, intermediate_dim, num_heads, dropout, gelu_approximate,
            layer_norm_epsilon, normal, normalize_first=bool(norm_first),
        )
        final_norm = (
            keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, name="layer_norm") if norm_first else None
        )
        banded = banded_layers(attention_pattern, num_layers)
        band_mask = LocalBandMask(local_window, name="local_band_mask") if banded else None

        # === Functional Model ===
        token_ids = keras.Input((None,), dtype="int32", name="token_ids")
        x = token_embedding(token_ids)  # U W_e, (B, T, D)
        x = embeddings_dropout(x + position_embedding(x))  # h_0 = U W_e + W_p
        band = None if band_mask is None else band_mask(x)  # (B, T, T), 1 inside the band
        for i, block in enumerate(blocks):
            mask = band if i in banded else None  # GPT-3's banded blocks: causal mask and band
            x = block(x, decoder_attention_mask=mask, use_causal_mask=bool(causal))  # h_l, self-attention + MLP
        if final_norm is not None:
            x = final_norm(x)  # GPT-2's extra LayerNorm after the last block
        super().__init__(inputs=token_ids, outputs=x, **kwargs)

        # === Config ===
        self.vocabulary_size = vocabulary_size
        self.num_layers = num_layers
        self.hidden_dim = hidden_dim
        self.num_heads = num_heads
        self.intermediate_dim = intermediate_dim
        self.max_sequence_length = max_sequence_length
        self.dropout = dropout
        self.norm_first = bool(norm_first)
        self.layer_norm_epsilon = layer_norm_epsilon
        self.causal = bool(causal)
        self.attention_pattern = attention_pattern
        self.local_window = local_window
        self.banded_layers = banded
        self.band_mask = band_mask
        self.token_embedding = token_embedding
        self.position_embedding = position_embedding
        self.embeddings_dropout = embeddings_dropout
        self.transformer_layers = blocks
        self.layer_norm = final_norm
        if self.norm_first:
            self._scale_residual_projections()

    def _scale_residual_projections(self):
        """GPT-2 Sec. 2.3: residual-branch output weights x 1/sqrt(N), N = 2 num_layers residual layers."""
        scale = 1.0 / math.sqrt(2 * self.num_layers)
        for block in self.transformer_layers:
            for kernel in (block._self_attention_layer._output_dense.kernel, block._feedforward_output_dense.kernel):
                kernel.assign(ops.convert_to_numpy(kernel) * scale)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "num_layers": self.num_layers,
                "hidden_dim": self.hidden_dim,
                "num_heads": self.num_heads,
                "intermediate_dim": self.intermediate_dim,
                "max_sequence_length": self.max_sequence_length,
                "dropout": self.dropout,
                "norm_first": self.norm_first,
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "causal": self.causal,
                "attention_pattern": self.attention_pattern,
                "local_window": self.local_window,
            }
        )
        return config

    @property
    def head_dim(self):
        return self.hidden_dim // self.num_heads

    def call_with_cache(self, token_ids, cache, cache_update_index, training=False):
        """Hidden states of `token_ids` placed at `cache_update_index`, reading and updating a key/value cache.

        Args:
            token_ids: int (B, t), the tokens at positions index..index+t-1.
            cache: float (B, num_layers, 2, max_length, heads, head_dim), keys and values
                of every earlier position (see `empty_cache`).
            cache_update_index: int or scalar tensor, the position of `token_ids[:, 0]`.

        Returns (hidden (B, t, D), updated cache). Agrees with the full forward pass on
        the same positions (tested).
        """
        x = self.token_embedding(token_ids)  # (B, t, D)
        x = self.embeddings_dropout(x + self.position_embedding(x, start_index=cache_update_index), training=training)
        caches = []
        band = None  # (B, t, max_length): the band around positions index..index+t-1
        if self.band_mask is not None:
            band = self.band_mask(x, start_index=cache_update_index, key_length=ops.shape(cache)[3])
        for i, block in enumerate(self.transformer_layers):
            x, layer_cache = block(
                x,
                decoder_attention_mask=band if i in self.banded_layers else None,
                self_attention_cache=cache[:, i, ...],  # (B, 2, max_length, heads, head_dim)
                self_attention_cache_update_index=cache_update_index,
                training=training,
            )
            caches.append(layer_cache)
        if self.layer_norm is not None:
            x = self.layer_norm(x)
        return x, ops.stack(caches, axis=1)

    def empty_cache(self, batch_size, max_length, dtype=None):
        """A zero key/value cache (B, num_layers, 2, max_length, heads, head_dim)."""
        shape = (batch_size, self.num_layers, 2, max_length, self.num_heads, self.head_dim)
        return ops.zeros(shape, dtype=dtype or self.compute_dtype)
