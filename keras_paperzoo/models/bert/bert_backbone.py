"""BERT: "Pre-training of Deep Bidirectional Transformers for Language Understanding"
(Devlin et al., NAACL 2019), https://arxiv.org/abs/1810.04805."""

import keras
import keras_hub

from keras_paperzoo.models.backbone import Backbone, transformer_layer_stack
from keras_paperzoo.models.bert.bert_presets import BERT_PRESETS

ACTIVATIONS = ("gelu", "gelu_approximate", "relu")


def bert_initializer(stddev=0.02):
    """N(0, 0.02^2) truncated at two standard deviations: the reference code's `initializer_range`."""
    return keras.initializers.TruncatedNormal(stddev=stddev)


def activation_function(name):
    """The Keras activation for an `activation` argument: keras-hub's tanh-approximate GELU for "gelu_approximate"."""
    if name == "gelu_approximate":
        return keras_hub.src.utils.keras_utils.gelu_approximate
    return name


def check_dropout(owner, dropout):
    """A dropout rate in [0, 1), or a ValueError naming `owner`."""
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"{owner} dropout {dropout!r} should be in [0, 1).")


def _positive_int(owner, name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{owner} {name} must be a positive int; got {name}={value!r}.")
    return value


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class BertBackbone(Backbone):
    """BERT encoder: token ids -> per-token states (B, T, H) and the pooled [CLS] state (B, H).

    The input representation is the sum of token, segment (A/B) and learned position
    embeddings (Sec. 3, Fig. 2), then LayerNorm and dropout; L post-norm Transformer
    encoder blocks follow ("Add & Norm": x = LN(x + MHA(x)), x = LN(x + FFN(x)), FFN =
    Dense(4H) -> GELU -> Dense(H), Vaswani et al. 2017), each attending only to
    non-padding tokens. The pooled output is tanh(W h_[CLS] + b), the "C" of Fig. 1 that
    next-sentence prediction and sentence classification read. Dropout 0.1 on the
    embeddings, the attention probabilities and every sub-layer output (the reference
    code's `hidden_dropout_prob` and `attention_probs_dropout_prob`); weights
    N(0, 0.02^2) truncated, biases zero, LayerNorm epsilon 1e-12 as in the reference code.

    Built from keras-hub's `TransformerEncoder` (post-norm, the same dropout places as the
    reference code), `PositionEmbedding` and `ReversibleEmbedding` (so the masked-LM head
    can tie its output matrix to the token embedding, as BERT does); the same graph and
    input names as `keras_hub.models.BertBackbone`, so keras-hub's BERT preprocessors
    feed it. Two differences from keras-hub's: the activation is the exact GELU by
    default (Hugging Face's `hidden_act="gelu"`; the reference TF code and keras-hub use
    the tanh approximation, `activation="gelu_approximate"`), and the pooled output is
    an output of this model, not a separate task layer.

    Args:
        vocabulary_size: int, V (30,522 for the uncased WordPiece vocabulary).
        num_layers: int, L.
        num_heads: int, A; H must be divisible by it.
        hidden_dim: int, H.
        intermediate_dim: int, the feed-forward width (4H in the paper).
        dropout: float, 0.1 (all dropout places, see above).
        max_sequence_length: int, the learned position table's length (512).
        num_segments: int, segment embeddings (2: sentence A and B).
        activation: "gelu" (exact, default), "gelu_approximate" (tanh form of the
            reference code) or "relu".
        layer_norm_epsilon: float, 1e-12.

    Inputs: a dict of int tensors (B, T): `token_ids`, `segment_ids` (0 for sentence A,
    1 for B) and `padding_mask` (1 for real tokens, 0 for padding); T <= max_sequence_length.
    Outputs: a dict `{"sequence_output": (B, T, H), "pooled_output": (B, H)}`.

    Examples:

    ```python
    backbone = BertBackbone.from_preset("bert_base")   # 109,482,240 parameters
    tiny = BertBackbone(vocabulary_size=99, num_layers=2, num_heads=4, hidden_dim=32,
                        intermediate_dim=37, max_sequence_length=64)
    inputs = {"token_ids": np.ones((2, 16), "int32"), "segment_ids": np.zeros((2, 16), "int32"),
              "padding_mask": np.ones((2, 16), "int32")}
    out = tiny(inputs)
    out["sequence_output"].shape, out["pooled_output"].shape  # (2, 16, 32), (2, 32)
    ```
    """

    presets = BERT_PRESETS

    def __init__(
        self,
        vocabulary_size,
        num_layers,
        num_heads,
        hidden_dim,
        intermediate_dim,
        dropout=0.1,
        max_sequence_length=512,
        num_segments=2,
        activation="gelu",
        layer_norm_epsilon=1e-12,
        **kwargs,
    ):
        owner = type(self).__name__
        for name, value in (
            ("vocabulary_size", vocabulary_size),
            ("num_layers", num_layers),
            ("num_heads", num_heads),
            ("hidden_dim", hidden_dim),
            ("intermediate_dim", intermediate_dim),
            ("max_sequence_length", max_sequence_length),
            ("num_segments", num_segments),
        ):
            _positive_int(owner, name, value)
        if hidden_dim % num_heads:
            raise ValueError(f"{owner} hidden_dim {hidden_dim} should be divisible by num_heads {num_heads}.")
        check_dropout(owner, dropout)
        if activation not in ACTIVATIONS:
            raise ValueError(f"{owner} activation {activation!r} should be one of {', '.join(ACTIVATIONS)}.")
        if not layer_norm_epsilon > 0:
            raise ValueError(f"{owner} layer_norm_epsilon {layer_norm_epsilon!r} should be positive.")

        # === Layers ===
        token_embedding = keras_hub.layers.ReversibleEmbedding(
            vocabulary_size, hidden_dim, embeddings_initializer=bert_initializer(), name="token_embedding"
        )
        position_embedding = keras_hub.layers.PositionEmbedding(
            max_sequence_length, initializer=bert_initializer(), name="position_embedding"
        )
        segment_embedding = keras.layers.Embedding(
            num_segments, hidden_dim, embeddings_initializer=bert_initializer(), name="segment_embedding"
        )
        embeddings_layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, name="embeddings_layer_norm"
        )
        embeddings_dropout = keras.layers.Dropout(dropout, name="embeddings_dropout")
        transformer_layers = transformer_layer_stack(
            keras_hub.layers.TransformerEncoder, num_layers, intermediate_dim, num_heads, dropout,
            activation_function(activation), layer_norm_epsilon, bert_initializer,
            normalize_first=False,  # post-norm, "Add & Norm"
        )
        pooled_dense = keras.layers.Dense(
            hidden_dim, activation="tanh", kernel_initializer=bert_initializer(), name="pooled_dense"
        )

        # === Functional Model ===
        token_ids = keras.Input((None,), dtype="int32", name="token_ids")
        segment_ids = keras.Input((None,), dtype="int32", name="segment_ids")
        padding_mask = keras.Input((None,), dtype="int32", name="padding_mask")
        tokens = token_embedding(token_ids)  # (B, T, H)
        x = keras.layers.Add(name="embeddings_add")(
            (tokens, position_embedding(tokens), segment_embedding(segment_ids))
        )  # token + position + segment embeddings, Fig. 2
        x = embeddings_dropout(embeddings_layer_norm(x))
        for layer in transformer_layers:
            x = layer(x, padding_mask=padding_mask)  # (B, T, H)
        pooled = pooled_dense(x[:, 0, :])  # C = tanh(W h_[CLS] + b), (B, H)
        super().__init__(
            inputs={"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask},
            outputs={"sequence_output": x, "pooled_output": pooled},
            **kwargs,
        )

        # === Config ===
        self.vocabulary_size = vocabulary_size
        self.num_layers = num_layers
        self.num_heads = num_heads
        self.hidden_dim = hidden_dim
        self.intermediate_dim = intermediate_dim
        self.dropout = dropout
        self.max_sequence_length = max_sequence_length
        self.num_segments = num_segments
        self.activation = activation
        self.layer_norm_epsilon = layer_norm_epsilon
        # The layers, for heads and converters (assigned after the functional init: torch modules).
        self.token_embedding = token_embedding
        self.position_embedding = position_embedding
        self.segment_embedding = segment_embedding
        self.embeddings_layer_norm = embeddings_layer_norm
        self.embeddings_dropout = embeddings_dropout
        self.transformer_layers = transformer_layers
        self.pooled_dense = pooled_dense

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "num_layers": self.num_layers,
                "num_heads": self.num_heads,
                "hidden_dim": self.hidden_dim,
                "intermediate_dim": self.intermediate_dim,
                "dropout": self.dropout,
                "max_sequence_length": self.max_sequence_length,
                "num_segments": self.num_segments,
                "activation": self.activation,
                "layer_norm_epsilon": self.layer_norm_epsilon,
            }
        )
        return config


def check_task(owner, backbone, dropout=0.0):
    """A BERT task's `backbone`, a `BertBackbone` (Sec. 4: every task fine-tunes one), and its output `dropout`."""
    if not isinstance(backbone, BertBackbone):
        raise ValueError(f"{owner} needs a BertBackbone; got a {type(backbone).__name__}.")
    check_dropout(owner, dropout)


def task_inputs(backbone, shape=(None,)):
    """{name: int32 keras.Input(shape)} for each of `backbone`'s inputs (token_ids, segment_ids, padding_mask)."""
    return {name: keras.Input(shape, dtype="int32", name=name) for name in backbone.input}


def task_head(backbone, output, units, dropout, name):
    """A fine-tuning head of Sec. 4.1 / Fig. 4: W dropout(h) + b on the backbone's `output` h.

    `output` is "pooled_output" (C, the [CLS] state: sequence classification) or
    "sequence_output" (T_i, every token: tagging); dropout as the reference
    `run_classifier.py` (layer "output_dropout"), W initialised N(0, 0.02^2) (layer `name`).
    Returns (inputs, logits) for the task's functional model.
    """
    inputs = task_inputs(backbone)  # token_ids, segment_ids, padding_mask: (B, T) each
    features = backbone(inputs)[output]  # C (B, H) or T_i (B, T, H)
    features = keras.layers.Dropout(dropout, name="output_dropout")(features)
    logits = keras.layers.Dense(units, kernel_initializer=bert_initializer(), name=name)(features)  # (B, [T,] K)
    return inputs, logits
