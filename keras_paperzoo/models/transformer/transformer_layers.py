"""The Transformer's encoder and decoder layers: keras-hub's, post-norm, with the paper's dropout.

Vaswani et al. 2017, Sec. 3.1 and 5.4. Each sub-layer is `LayerNorm(x + Dropout(Sublayer(x)))`
("Add & Norm", post-norm): self-attention then the position-wise FFN
`max(0, x W1 + b1) W2 + b2` (eq. 2) in the encoder; masked self-attention, attention over
the encoder output, then the FFN in the decoder. Attention is scaled dot-product,
softmax(Q K^T / sqrt(d_k)) V (eq. 1), in h heads of d_k = d_model / h (Sec. 3.2.2).

These are `keras_hub.layers.TransformerEncoder` / `TransformerDecoder` (post-norm with
`normalize_first=False`; the decoder keeps a key/value cache for decoding) with one
difference: keras-hub applies its single `dropout` rate to the attention probabilities
too, while the paper's "residual dropout" (Sec. 5.4) is on each sub-layer output (and
on the embedding sums) only. Here attention-probability dropout is its own argument,
`attention_dropout`, 0 by default (tensor2tensor's `transformer_base_v1` also has
attention dropout 0; its later `_v2` hparams use 0.1).

Kernels use Xavier-uniform counted on the (d_model, d_model) matrices
(`AttentionGlorotUniform`), as tensor2tensor does; biases start at zero.
"""

import keras
import keras_hub

from keras_paperzoo.layers.transformer_block import AttentionGlorotUniform


def _set_attention_dropout(attention, rate):
    # keras.layers.MultiHeadAttention reads `_dropout` to choose its path and
    # `_dropout_layer` (made in build) to apply it.
    attention._dropout = float(rate)
    attention._dropout_layer.rate = float(rate)


def _paper_arguments(owner, dropout, attention_dropout, kwargs):
    """The rates checked, and `kwargs` over the paper's keras-hub arguments: ReLU FFN (eq. 2), post-norm
    LayerNorm(x + Sublayer(x)) with eps 1e-6, Glorot-uniform attention kernels (`AttentionGlorotUniform`)."""
    _check_rate(owner, "dropout", dropout)
    _check_rate(owner, "attention_dropout", attention_dropout)
    defaults = {"activation": "relu", "layer_norm_epsilon": 1e-6, "normalize_first": False}
    if "kernel_initializer" not in kwargs:
        defaults["kernel_initializer"] = AttentionGlorotUniform()
    return {**defaults, **kwargs}


def _check_rate(owner, name, value):
    if not 0.0 <= value < 1.0:
        raise ValueError(f"{owner} {name} must be in [0, 1); got {name}={value!r}.")


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class TransformerEncoderLayer(keras_hub.layers.TransformerEncoder):
    """One encoder layer of the Transformer (post-norm, ReLU FFN, attention dropout separate).

    Args:
        intermediate_dim: int, d_ff (2048 in the base model).
        num_heads: int, h; the input width d_model must be divisible by it.
        dropout: float, the paper's P_drop on each sub-layer output.
        attention_dropout: float, dropout on the attention probabilities (0 in the paper).
        **kwargs: the other `keras_hub.layers.TransformerEncoder` arguments.

    Example:

    ```python
    layer = TransformerEncoderLayer(intermediate_dim=64, num_heads=4)
    layer(keras.ops.ones((2, 7, 32)), padding_mask=keras.ops.ones((2, 7), "bool")).shape  # (2, 7, 32)
    ```
    """

    def __init__(self, intermediate_dim, num_heads, dropout=0.1, attention_dropout=0.0, **kwargs):
        kwargs = _paper_arguments("TransformerEncoderLayer", dropout, attention_dropout, kwargs)
        super().__init__(intermediate_dim, num_heads, dropout=dropout, **kwargs)
        self.attention_dropout = float(attention_dropout)

    def build(self, inputs_shape):
        super().build(inputs_shape)
        _set_attention_dropout(self._self_attention_layer, self.attention_dropout)

    def get_config(self):
        return {**super().get_config(), "attention_dropout": self.attention_dropout}


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class TransformerDecoderLayer(keras_hub.layers.TransformerDecoder):
    """One decoder layer of the Transformer: masked self-attention, encoder-decoder attention, FFN.

    Call it as keras-hub's `TransformerDecoder`: `layer(decoder_sequence, encoder_sequence,
    decoder_padding_mask=..., encoder_padding_mask=...)`; the causal mask is on by default;
    `self_attention_cache` / `cross_attention_cache` with their update indices give
    cached decoding (see `transformer_decoding`).

    Args: as `TransformerEncoderLayer`.

    Example:

    ```python
    layer = TransformerDecoderLayer(intermediate_dim=64, num_heads=4)
    layer(keras.ops.ones((2, 5, 32)), keras.ops.ones((2, 7, 32))).shape  # (2, 5, 32)
    ```
    """

    def __init__(self, intermediate_dim, num_heads, dropout=0.1, attention_dropout=0.0, **kwargs):
        kwargs = _paper_arguments("TransformerDecoderLayer", dropout, attention_dropout, kwargs)
        super().__init__(intermediate_dim, num_heads, dropout=dropout, **kwargs)
        self.attention_dropout = float(attention_dropout)

    def build(self, decoder_sequence_shape, encoder_sequence_shape=None):
        super().build(decoder_sequence_shape, encoder_sequence_shape)
        _set_attention_dropout(self._self_attention_layer, self.attention_dropout)
        if self._cross_attention_layer is not None:
            _set_attention_dropout(self._cross_attention_layer, self.attention_dropout)

    def get_config(self):
        return {**super().get_config(), "attention_dropout": self.attention_dropout}
