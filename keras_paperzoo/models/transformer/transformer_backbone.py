"""The encoder-decoder Transformer of "Attention Is All You Need" (Vaswani et al. 2017).

https://arxiv.org/abs/1706.03762
"""

import math
import types

import keras
import keras_hub
from keras import ops

from keras_paperzoo.models.backbone import Backbone, check_positive_ints
from keras_paperzoo.models.transformer.transformer_layers import TransformerDecoderLayer, TransformerEncoderLayer
from keras_paperzoo.models.transformer.transformer_presets import TRANSFORMER_PRESETS


def transformer_parameter_count(vocabulary_size, num_layers, hidden_dim, intermediate_dim,
                                source_vocabulary_size=None, **unused):
    """Parameters of `TransformerBackbone(...)` from its configuration, without building it.

    Embeddings (one shared table, or a source and a target table), then per encoder
    layer one attention (4 d^2 + 4 d), the FFN (2 d d_ff + d_ff + d) and two LayerNorms
    (4 d); per decoder layer two attentions and three LayerNorms. The output projection
    is the target embedding (Sec. 3.4): no extra parameters.
    """
    d, f = hidden_dim, intermediate_dim
    attention = 4 * d * d + 4 * d
    ffn = 2 * d * f + f + d
    encoder = num_layers * (attention + ffn + 2 * 2 * d)
    decoder = num_layers * (2 * attention + ffn + 3 * 2 * d)
    embeddings = vocabulary_size * d + (source_vocabulary_size or 0) * d
    return embeddings + encoder + decoder


# The graph, written once for the functional model and for cached decoding. `m` is the
# backbone (or, while it is being built, the namespace of its layers).
def _embed(m, token_ids, source=False, start_index=0, training=None):
    table = m.source_embedding if (source and m.source_embedding is not None) else m.token_embedding
    x = table(token_ids) * ops.cast(math.sqrt(m.hidden_dim), table.compute_dtype)  # (B, L, d)
    x = x + m.position_encoding(x, start_index=start_index)  # + PE, Sec. 3.5
    dropout = m.encoder_embedding_dropout if source else m.decoder_embedding_dropout
    return dropout(x, training=training)


def _padding_mask(m, token_ids):
    return ops.not_equal(token_ids, m.padding_id)  # (B, L) bool, True = a real token


def _encode(m, encoder_ids, training=None):
    mask = _padding_mask(m, encoder_ids)
    x = _embed(m, encoder_ids, source=True, training=training)
    for layer in m.encoder_layers:
        x = layer(x, padding_mask=mask, training=training)
    return x, mask  # (B, S, d), (B, S)


def _decode(m, decoder_ids, encoder_output, encoder_mask, training=None):
    x = _embed(m, decoder_ids, training=training)
    mask = _padding_mask(m, decoder_ids)
    for layer in m.decoder_layers:
        x = layer(x, encoder_output, decoder_padding_mask=mask, encoder_padding_mask=encoder_mask,
                  training=training)
    return x  # (B, T, d)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class TransformerBackbone(Backbone):
    """Encoder-decoder Transformer (Vaswani et al. 2017, Sec. 3), token ids in, hidden states out.

    - Embeddings (Sec. 3.4): learned, multiplied by sqrt(d_model), plus the sinusoidal
      position encoding PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) =
      cos(...) (Sec. 3.5, keras-hub's `SinePositionEncoding`), then dropout P_drop
      (Sec. 5.4). One embedding table is shared by the encoder, the decoder and the
      pre-softmax projection (Sec. 3.4); with `source_vocabulary_size` set the source
      gets its own table (for vocabularies that differ), the target table stays tied
      to the output projection.
    - N post-norm encoder layers, N post-norm decoder layers with causal self-attention
      and encoder-decoder attention (Sec. 3.1, `transformer_layers`).
    - Padding masks everywhere: token id `padding_id` (0) is never attended to, in the
      encoder, the decoder's self-attention and the encoder-decoder attention.

    Embedding initialisation N(0, d_model^-0.5) (tensor2tensor's; the paper does not
    say), so scaled embeddings have unit variance beside the +-1 position encoding.

    Inputs: dict `encoder_token_ids` (B, S) and `decoder_token_ids` (B, T) int.
    Outputs: dict `encoder_sequence_output` (B, S, d_model), `decoder_sequence_output`
    (B, T, d_model). `TransformerTranslator` adds the tied softmax projection.

    Args:
        vocabulary_size: int, the (shared, or target) vocabulary size.
        num_layers: int, N, layers in the encoder and in the decoder (6).
        hidden_dim: int, d_model (512).
        intermediate_dim: int, d_ff (2048).
        num_heads: int, h (8); hidden_dim must be divisible by it.
        dropout: float, P_drop (0.1 base, 0.3 big).
        attention_dropout: float, dropout on attention probabilities (0, as in the paper).
        source_vocabulary_size: None (share the target table, the paper) or int.
        layer_norm_epsilon: float (1e-6, tensor2tensor's).
        padding_id: int, the padding token id (0).

    Example:

    ```python
    backbone = TransformerBackbone.from_preset("transformer_base")  # 63,082,496 parameters
    tiny = TransformerBackbone(vocabulary_size=100, num_layers=2, hidden_dim=32,
                               intermediate_dim=64, num_heads=4)
    out = tiny({"encoder_token_ids": np.ones((2, 7), "int32"),
                "decoder_token_ids": np.ones((2, 5), "int32")})
    out["decoder_sequence_output"].shape  # (2, 5, 32)
    ```
    """

    presets = TRANSFORMER_PRESETS

    def __init__(
        self,
        vocabulary_size,
        num_layers=6,
        hidden_dim=512,
        intermediate_dim=2048,
        num_heads=8,
        dropout=0.1,
        attention_dropout=0.0,
        source_vocabulary_size=None,
        layer_norm_epsilon=1e-6,
        padding_id=0,
        **kwargs,
    ):
        owner = "TransformerBackbone"
        check_positive_ints(owner, "vocabulary_size", [vocabulary_size])
        check_positive_ints(owner, "num_layers", [num_layers])
        check_positive_ints(owner, "hidden_dim", [hidden_dim])
        check_positive_ints(owner, "intermediate_dim", [intermediate_dim])
        check_positive_ints(owner, "num_heads", [num_heads])
        if source_vocabulary_size is not None:
            check_positive_ints(owner, "source_vocabulary_size", [source_vocabulary_size])
        if hidden_dim % num_heads:
            raise ValueError(
                f"{owner} hidden_dim {hidden_dim} should be divisible by num_heads {num_heads} "
                "(d_k = d_model / h)."
            )
        for name, value in (("dropout", dropout), ("attention_dropout", attention_dropout)):
            if not 0.0 <= value < 1.0:
                raise ValueError(f"{owner} {name} must be in [0, 1); got {name}={value!r}.")
        if not 0 <= padding_id < min(vocabulary_size, source_vocabulary_size or vocabulary_size):
            raise ValueError(f"{owner} padding_id must be a token id in the vocabulary; got {padding_id}.")

        # === Layers ===
        # Collected in a namespace first: torch-backed Keras models cannot hold layers
        # before `super().__init__`; they become attributes after it.
        parts = types.SimpleNamespace(hidden_dim=hidden_dim, padding_id=padding_id)
        initializer = keras.initializers.RandomNormal(stddev=hidden_dim**-0.5)
        parts.token_embedding = keras_hub.layers.ReversibleEmbedding(
            vocabulary_size, hidden_dim, tie_weights=True, embeddings_initializer=initializer,
            name="token_embedding",
        )
        parts.source_embedding = None
        if source_vocabulary_size is not None:
            parts.source_embedding = keras.layers.Embedding(
                source_vocabulary_size, hidden_dim, embeddings_initializer=initializer,
                name="source_embedding",
            )
        parts.position_encoding = keras_hub.layers.SinePositionEncoding(name="position_encoding")
        parts.encoder_embedding_dropout = keras.layers.Dropout(dropout, name="encoder_embedding_dropout")
        parts.decoder_embedding_dropout = keras.layers.Dropout(dropout, name="decoder_embedding_dropout")
        layer_args = dict(
            intermediate_dim=intermediate_dim, num_heads=num_heads, dropout=dropout,
            attention_dropout=attention_dropout, layer_norm_epsilon=layer_norm_epsilon,
        )
        parts.encoder_layers = [TransformerEncoderLayer(**layer_args, name=f"encoder_layer_{i}") for i in range(num_layers)]
        parts.decoder_layers = [TransformerDecoderLayer(**layer_args, name=f"decoder_layer_{i}") for i in range(num_layers)]

        # === Functional Model ===
        encoder_ids = keras.Input((None,), dtype="int32", name="encoder_token_ids")
        decoder_ids = keras.Input((None,), dtype="int32", name="decoder_token_ids")
        encoder_output, encoder_mask = _encode(parts, encoder_ids)
        decoder_output = _decode(parts, decoder_ids, encoder_output, encoder_mask)
        super().__init__(
            inputs={"encoder_token_ids": encoder_ids, "decoder_token_ids": decoder_ids},
            outputs={"encoder_sequence_output": encoder_output, "decoder_sequence_output": decoder_output},
            **kwargs,
        )
        for name, value in vars(parts).items():
            setattr(self, name, value)

        # === Config ===
        self.vocabulary_size = vocabulary_size
        self.num_layers = num_layers
        self.hidden_dim = hidden_dim
        self.intermediate_dim = intermediate_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.attention_dropout = attention_dropout
        self.source_vocabulary_size = source_vocabulary_size
        self.layer_norm_epsilon = layer_norm_epsilon
        self.padding_id = padding_id

    # --- pieces shared by the graph and by cached decoding -----------------------------
    def embed(self, token_ids, source=False, start_index=0, training=None):
        """sqrt(d_model) * embedding + PE (Sec. 3.4-3.5), then dropout; (B, L) -> (B, L, d)."""
        return _embed(self, token_ids, source, start_index, training)

    def padding_mask(self, token_ids):
        return _padding_mask(self, token_ids)

    def encode(self, encoder_token_ids, training=False):
        """The encoder alone: (B, S) ids -> ((B, S, d_model) states, (B, S) padding mask)."""
        return _encode(self, ops.convert_to_tensor(encoder_token_ids, "int32"), training=training)

    def logits(self, decoder_output):
        """The pre-softmax projection, tied to the target embedding: (B, T, d) -> (B, T, V)."""
        return self.token_embedding(decoder_output, reverse=True)

    def get_config(self):
        return {
            **super().get_config(),
            "vocabulary_size": self.vocabulary_size,
            "num_layers": self.num_layers,
            "hidden_dim": self.hidden_dim,
            "intermediate_dim": self.intermediate_dim,
            "num_heads": self.num_heads,
            "dropout": self.dropout,
            "attention_dropout": self.attention_dropout,
            "source_vocabulary_size": self.source_vocabulary_size,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "padding_id": self.padding_id,
        }
