"""The Transformer encoder block, pre-norm (ViT, MAE, BEiT, iGPT, GPT-2) or post-norm (Transformer, BERT).

Pre-norm, ViT eqs. (2)-(3):

    z' = z + MSA(LN(z))
    z  = z' + MLP(LN(z'))

Post-norm, Vaswani et al. 2017 / BERT ("Add & Norm"):

    z' = LN(z + MSA(z))
    z  = LN(z' + MLP(z'))

MLP = Dense(mlp_dim) -> activation -> Dense(D). Dropout as in the ViT paper (App. B.1):
after every dense layer except the q, k, v projections (the attention output
projection, both MLP layers), plus optional dropout on the attention probabilities.

BEiT's options (Bao et al. 2022, Sec. 2.6 and App. "Hyperparameters"), all off by
default: LayerScale and stochastic depth on both residual branches,

    z' = z + DropPath(gamma_1 * MSA(LN(z))),   z = z' + DropPath(gamma_2 * MLP(LN(z'))),

a per-head relative position bias in the attention (`relative_position="bias"`), and
the truncated-normal initialisation with the output projections rescaled by
`output_scale` (BEiT: 1 / sqrt(2 l) in layer l).
"""

import math

import keras
from keras import ops

from keras_paperzoo.layers.drop_path import DropPath
from keras_paperzoo.layers.position_embedding import RelativePositionMultiHeadAttention
from keras_paperzoo.layers.relative_position_bias import RelativePositionBiasAttention


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class AttentionGlorotUniform(keras.initializers.Initializer):
    """Glorot (Xavier) uniform for `MultiHeadAttention`'s 3-D kernels, counted as the matrices they are.

    The official ViT code initialises the q, k, v and output projections with
    `xavier_uniform` on the (D, heads * head_dim) matrix: limit sqrt(6 / (D + heads *
    head_dim)). Keras's `GlorotUniform` reads a 3-D kernel as a convolution and gives
    a limit about 6x too small for ViT-B. A (D, heads, head_dim) input kernel has
    fan_in + fan_out = a + b*c, a (heads, head_dim, D) output kernel a*b + c; the
    smaller of the two is the right one in both cases (heads, head_dim >= 2).
    """

    def __init__(self, seed=None):
        self.seed = seed

    def __call__(self, shape, dtype=None):
        if len(shape) == 3:
            a, b, c = shape
            fans = min(a + b * c, a * b + c)
        elif len(shape) == 2:
            fans = shape[0] + shape[1]
        else:
            raise ValueError(f"AttentionGlorotUniform expects a 2-D or 3-D kernel; got shape {shape}.")
        limit = math.sqrt(6.0 / fans)
        return keras.initializers.RandomUniform(-limit, limit, seed=self.seed)(shape, dtype=dtype)

    def get_config(self):
        return {"seed": self.seed}


_GELU_APPROXIMATE = "gelu_approximate"


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class TransformerBlock(keras.layers.Layer):
    """One Transformer encoder block: multi-head self-attention then an MLP, each residual.

    `norm_first=True` (default) is the pre-norm block of ViT (eqs. 2-3; also MAE,
    BEiT, iGPT, GPT-2); `norm_first=False` is the post-norm block of the original
    Transformer and BERT. Attention is `keras.layers.MultiHeadAttention` (q, k, v
    biases, the output projection), or `RelativePositionMultiHeadAttention` when
    `relative_position` is set (the ViT paper's App. D.4 relative attention).

    Initialisation follows the official ViT code: Xavier uniform for every kernel (the
    attention kernels counted as (D, D) matrices, see `AttentionGlorotUniform`), zero
    attention biases, N(0, 1e-6^2) MLP biases, LayerNorm (1, 0).

    Args:
        num_heads: int, attention heads; the input width D must be divisible by it.
        mlp_dim: int, the MLP's hidden width (4D in ViT and BERT).
        dropout_rate: float, dropout after the attention output projection and after
            the MLP output (the paper's "after every dense layer").
        attention_dropout: float, dropout on the attention probabilities.
        activation_dropout: float or None, dropout after the MLP activation; None uses
            `dropout_rate` (ViT); BERT and the Transformer use 0.
        layer_norm_epsilon: float, 1e-6 as in the official ViT code (BERT: 1e-12).
        norm_first: bool, pre-norm (True) or post-norm (False).
        activation: the MLP activation: "gelu" is the exact x * Phi(x) (the GELU paper's
            definition, PyTorch/timm `nn.GELU()`, Keras's default); "gelu_approximate"
            the tanh form (Flax `nn.gelu`'s default, which the official JAX ViT code
            uses); or any `keras.activations` name ("relu" for the Transformer).
        relative_position: None, "2d" or "1d": use relative attention with that offset
            kind; "bias": BEiT's per-head relative position bias table
            (`RelativePositionBiasAttention`).
        grid_size: (h, w) patch grid, needed with `relative_position`.
        num_prefix_tokens: tokens before the patches (the class token), with `relative_position`.
        layer_scale_init: None (no LayerScale) or float: learned per-channel gammas
            gamma_1, gamma_2 of shape (D,) multiplying the attention and MLP branch
            outputs, initialised to this value (BEiT: 0.1; Touvron et al. 2021, CaiT).
        drop_path_rate: float in [0, 1), stochastic depth on both residual branches
            (`DropPath`, per sample).
        kernel_initializer: None (the ViT scheme above) or an initializer for every
            kernel (q, k, v, output, both MLP layers) with zero biases: BEiT's
            `TruncatedNormal(stddev=0.02)`.
        output_scale: float > 0: the attention output projection's and the second MLP
            layer's kernels are multiplied by it after initialisation (BEiT's
            1 / sqrt(2 l) for layer l, counted from 1).

    Call arguments: `inputs` (B, T, D); `attention_mask` (B, T, T) bool, True = attend;
    `use_causal_mask`; `return_attention_scores` (also return the (B, heads, T, T)
    attention probabilities, before dropout); `training`.

    Example:

    ```python
    block = TransformerBlock(num_heads=12, mlp_dim=3072)
    y, scores = block(keras.ops.ones((2, 197, 768)), return_attention_scores=True)
    y.shape, scores.shape  # (2, 197, 768), (2, 12, 197, 197)
    ```
    """

    def __init__(
        self,
        num_heads,
        mlp_dim,
        dropout_rate=0.0,
        attention_dropout=0.0,
        activation_dropout=None,
        layer_norm_epsilon=1e-6,
        norm_first=True,
        activation="gelu",
        relative_position=None,
        grid_size=None,
        num_prefix_tokens=0,
        layer_scale_init=None,
        drop_path_rate=0.0,
        kernel_initializer=None,
        output_scale=1.0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        for name, value in (("num_heads", num_heads), ("mlp_dim", mlp_dim)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"TransformerBlock {name} must be a positive int; got {value!r}.")
        for name, value in (
            ("dropout_rate", dropout_rate),
            ("attention_dropout", attention_dropout),
            ("activation_dropout", 0.0 if activation_dropout is None else activation_dropout),
            ("drop_path_rate", drop_path_rate),
        ):
            if not 0.0 <= value < 1.0:
                raise ValueError(f"TransformerBlock {name} must be in [0, 1); got {value!r}.")
        if relative_position not in (None, "2d", "1d", "bias"):
            raise ValueError(f"relative_position must be None, '2d', '1d' or 'bias'; got {relative_position!r}.")
        if layer_scale_init is not None and not (isinstance(layer_scale_init, (int, float)) and layer_scale_init > 0):
            raise ValueError(f"TransformerBlock layer_scale_init must be None or a positive float; got {layer_scale_init!r}.")
        if isinstance(output_scale, bool) or not isinstance(output_scale, (int, float)) or not output_scale > 0:
            raise ValueError(f"TransformerBlock output_scale must be a positive float; got {output_scale!r}.")
        if relative_position is not None and grid_size is None:
            raise ValueError("relative_position needs grid_size, the (h, w) patch grid.")
        self.num_heads = num_heads
        self.mlp_dim = mlp_dim
        self.dropout_rate = dropout_rate
        self.attention_dropout = attention_dropout
        self.activation_dropout = activation_dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.norm_first = norm_first
        self.activation = activation
        self.relative_position = relative_position
        self.grid_size = None if grid_size is None else tuple(grid_size)
        self.num_prefix_tokens = num_prefix_tokens
        self.layer_scale_init = None if layer_scale_init is None else float(layer_scale_init)
        self.drop_path_rate = float(drop_path_rate)
        self.kernel_initializer = None if kernel_initializer is None else keras.initializers.get(kernel_initializer)
        self.output_scale = float(output_scale)
        if activation == _GELU_APPROXIMATE:
            self._activation_fn = lambda x: keras.activations.gelu(x, approximate=True)
        else:
            self._activation_fn = keras.activations.get(activation)

    def build(self, input_shape):
        dim = input_shape[-1]
        if dim % self.num_heads:
            raise ValueError(f"hidden_dim {dim} should be divisible by num_heads {self.num_heads}.")
        attention_args = dict(
            num_heads=self.num_heads,
            key_dim=dim // self.num_heads,
            dropout=self.attention_dropout,
            kernel_initializer=self.kernel_initializer or AttentionGlorotUniform(),
            dtype=self.dtype_policy,
            name="attention",
        )
        if self.relative_position is None:
            self.attention = keras.layers.MultiHeadAttention(**attention_args)
        elif self.relative_position == "bias":
            self.attention = RelativePositionBiasAttention(
                grid_size=self.grid_size, num_prefix_tokens=self.num_prefix_tokens, **attention_args
            )
        else:
            self.attention = RelativePositionMultiHeadAttention(
                grid_size=self.grid_size,
                num_prefix_tokens=self.num_prefix_tokens,
                offsets=self.relative_position,
                **attention_args,
            )
        self.attention.build(input_shape, input_shape)
        mlp_bias = keras.initializers.RandomNormal(stddev=1e-6) if self.kernel_initializer is None else "zeros"
        mlp_kernel = self.kernel_initializer or "glorot_uniform"
        self.attention_norm = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy, name="attention_norm"
        )
        self.mlp_norm = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy, name="mlp_norm"
        )
        self.mlp_dense_1 = keras.layers.Dense(
            self.mlp_dim, kernel_initializer=mlp_kernel, bias_initializer=mlp_bias, dtype=self.dtype_policy,
            name="mlp_dense_1",
        )
        self.mlp_dense_2 = keras.layers.Dense(
            dim, kernel_initializer=mlp_kernel, bias_initializer=mlp_bias, dtype=self.dtype_policy,
            name="mlp_dense_2",
        )
        rate = self.dropout_rate if self.activation_dropout is None else self.activation_dropout
        self.attention_output_dropout = keras.layers.Dropout(self.dropout_rate, name="attention_output_dropout")
        self.mlp_activation_dropout = keras.layers.Dropout(rate, name="mlp_activation_dropout")
        self.mlp_output_dropout = keras.layers.Dropout(self.dropout_rate, name="mlp_output_dropout")
        self.attention_norm.build(input_shape)
        self.mlp_norm.build(input_shape)
        self.mlp_dense_1.build(input_shape)
        self.mlp_dense_2.build(tuple(input_shape[:-1]) + (self.mlp_dim,))
        if self.output_scale != 1.0:  # BEiT: rescale the output projections at initialisation
            for kernel in (self.attention._output_dense.kernel, self.mlp_dense_2.kernel):
                kernel.assign(kernel * self.output_scale)
        self.attention_scale = self.mlp_scale = None
        if self.layer_scale_init is not None:  # LayerScale gamma_1, gamma_2
            gamma = keras.initializers.Constant(self.layer_scale_init)
            self.attention_scale = self.add_weight(shape=(dim,), initializer=gamma, name="attention_layer_scale")
            self.mlp_scale = self.add_weight(shape=(dim,), initializer=gamma, name="mlp_layer_scale")
        # Created only when used: a SeedGenerator adds a (non-trainable) state variable.
        self.drop_path = DropPath(self.drop_path_rate, name="drop_path") if self.drop_path_rate > 0 else None

    def _attend(self, x, attention_mask, use_causal_mask, return_attention_scores, training):
        out = self.attention(
            x,
            x,
            attention_mask=attention_mask,
            use_causal_mask=use_causal_mask,
            return_attention_scores=return_attention_scores,
            training=training,
        )
        out, scores = out if return_attention_scores else (out, None)
        return self.attention_output_dropout(out, training=training), scores

    def _mlp(self, x, training):
        h = self._activation_fn(self.mlp_dense_1(x))  # (B, T, mlp_dim)
        h = self.mlp_activation_dropout(h, training=training)
        return self.mlp_output_dropout(self.mlp_dense_2(h), training=training)  # (B, T, D)

    def _branch(self, h, gamma, training):
        """LayerScale and drop path on a residual branch's output (identity when neither is set)."""
        if gamma is not None:
            h = h * ops.cast(gamma, h.dtype)  # gamma * f(x), per channel
        if self.drop_path is not None:
            h = self.drop_path(h, training=training)
        return h

    def call(
        self,
        inputs,
        attention_mask=None,
        use_causal_mask=False,
        return_attention_scores=False,
        training=None,
    ):
        args = (attention_mask, use_causal_mask, return_attention_scores, training)
        if self.norm_first:
            h, scores = self._attend(self.attention_norm(inputs), *args)
            x = inputs + self._branch(h, self.attention_scale, training)  # z' = z + MSA(LN(z))
            h = self._mlp(self.mlp_norm(x), training)
            x = x + self._branch(h, self.mlp_scale, training)  # z = z' + MLP(LN(z'))
        else:
            h, scores = self._attend(inputs, *args)
            x = self.attention_norm(inputs + self._branch(h, self.attention_scale, training))  # z' = LN(z + MSA(z))
            h = self._branch(self._mlp(x, training), self.mlp_scale, training)
            x = self.mlp_norm(x + h)  # z = LN(z' + MLP(z'))
        return (x, scores) if return_attention_scores else x

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def compute_output_spec(self, inputs, return_attention_scores=False, **kwargs):
        out = keras.KerasTensor(inputs.shape, dtype=self.compute_dtype)
        if not return_attention_scores:
            return out
        batch, length = inputs.shape[0], inputs.shape[1]
        return out, keras.KerasTensor((batch, self.num_heads, length, length), dtype=self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_heads": self.num_heads,
                "mlp_dim": self.mlp_dim,
                "dropout_rate": self.dropout_rate,
                "attention_dropout": self.attention_dropout,
                "activation_dropout": self.activation_dropout,
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "norm_first": self.norm_first,
                "activation": self.activation,
                "relative_position": self.relative_position,
                "grid_size": self.grid_size,
                "num_prefix_tokens": self.num_prefix_tokens,
                "layer_scale_init": self.layer_scale_init,
                "drop_path_rate": self.drop_path_rate,
                "kernel_initializer": None if self.kernel_initializer is None
                else keras.initializers.serialize(self.kernel_initializer),
                "output_scale": self.output_scale,
            }
        )
        return config
