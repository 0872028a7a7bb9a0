"""BEiT's backbone: "BERT Pre-Training of Image Transformers" (Bao et al., ICLR 2022), https://arxiv.org/abs/2106.08254."""

import math

import keras
from keras import ops

from keras_paperzoo.layers.patch_embedding import ClassToken, LearnedToken, PatchEmbedding
from keras_paperzoo.layers.position_embedding import LearnedPositionEmbedding
from keras_paperzoo.layers.transformer_block import TransformerBlock
from keras_paperzoo.models.backbone import Presets, check_image_shape, constructor_config
from keras_paperzoo.models.checks import check_int, check_number, check_transformer_sizes
from keras_paperzoo.models.beit.beit_presets import BEIT_FINE_TUNING_RECIPE, BEIT_PRESETS
from keras_paperzoo.models.vit.vit_backbone import transformer_layer_groups, vit_block_arguments
from keras_paperzoo.models.vit.vit_layers import TokenPooling

INIT_STD = 0.02
# Variables without weight decay in BEiT's recipes beyond biases and norms (rank <= 1, LayerScale included).
BEIT_NO_DECAY_PATHS = ("relative_position_bias_table", "class_token", "mask_embedding", "position_embedding")


def _truncated_normal():
    return keras.initializers.TruncatedNormal(stddev=INIT_STD)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class MaskEmbedding(LearnedToken):
    """BEiT's learnable e_[M] (Sec. 2.2): patch embeddings (B, N, D) and a mask (B, N) -> (B, N, D).

    Where mask is true (or 1) the patch embedding is replaced by e_[M]; elsewhere it
    is kept. Without a mask the layer is the identity. e_[M] is initialised
    N(0, 0.02^2), truncated (the official code's `mask_token`).

    Example:

    ```python
    layer = MaskEmbedding()
    layer(keras.ops.ones((2, 196, 768)), keras.ops.zeros((2, 196))).shape  # (2, 196, 768)
    ```
    """

    def __init__(self, initializer=None, **kwargs):
        super().__init__(initializer or _truncated_normal(), **kwargs)

    def build(self, input_shape, patch_mask_shape=None):
        super().build(input_shape)

    def call(self, tokens, patch_mask=None):
        if patch_mask is None:
            return tokens
        w = ops.cast(patch_mask, tokens.dtype)[:, :, None]  # (B, N, 1), 1 = masked
        return tokens * (1.0 - w) + ops.cast(self.token, tokens.dtype) * w  # x^M

    def compute_output_shape(self, input_shape, patch_mask_shape=None):
        return tuple(input_shape)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class BEiTBackbone(Presets, keras.Model):
    """BEiT's Vision Transformer: images -> LN(mean of the patch tokens), shape (B, hidden_dim).

    The architecture of Sec. 2.1 and App. "Hyperparameters" with the official code's
    pre-training settings:

    - patch embedding E x_i^p (a P x P stride-P convolution), a prepended [S] (class)
      token, no absolute position embedding by default (`use_absolute_position_embedding`:
      a learned (1 + N, D) table, the paper's E_pos);
    - L pre-norm blocks (`TransformerBlock`) with, in each, a relative position bias
      table ((2h-1)(2w-1) + 3, heads) added to the attention logits
      (`RelativePositionBiasAttention`), LayerScale gammas initialised to 0.1 on both
      residual branches, and stochastic depth rising linearly from 0 in the first
      block to `drop_path_rate` in the last (timm/BEiT `linspace(0, rate, L)`);
    - LayerNorm eps 1e-6 everywhere; dense kernels, the [S] and [M] tokens and
      E_pos initialised N(0, 0.02^2) truncated at 2 std, biases zero; the attention
      output projection and the second MLP layer of layer l (from 1) rescaled by
      1 / sqrt(2 l) after initialisation (the official `fix_init_weight`).

    Two outputs:

    - `backbone(images)`: the fine-tuning representation (Sec. 2.6): the mean of the
      last block's patch states (the class token left out), then a LayerNorm
      (`pooled_norm`, the official `fc_norm`; the final `encoder_norm` is not used
      there, as in the official code with mean pooling);
    - `backbone.encode(images, mask)`: the pre-training sequence H^L (B, 1 + N, D)
      after the final LayerNorm, with the masked patch embeddings replaced by the
      learnable e_[M] before the Transformer (Sec. 2.2, x^M).

    Deviations: the official code initialises the patch projection with PyTorch's
    `Conv2d` default, here `VarianceScaling(1/3, "fan_in", "uniform")`, the same
    U(+-1/sqrt(fan_in)) kernel, with a zero bias; PyTorch's `trunc_normal_(std=.02)`
    truncates at +-2 (in effect not at all), Keras's `TruncatedNormal` at 2 std.
    Keras's attention has a key bias (D per layer) which the official code lacks;
    it changes no output (see `RelativePositionBiasAttention`). The official pre-training
    script may share one bias table across the layers (`--shared_rel_pos_bias`),
    copied to every layer for fine-tuning; here each layer has its own throughout
    (the released fine-tuned models' layout).

    Args:
        patch_size: int, P.
        num_layers: int, L.
        hidden_dim: int, D.
        num_heads: int; D must be divisible by it.
        mlp_dim: int, the MLP's hidden width (4D).
        image_shape: (height, width, channels), height and width divisible by P.
        dropout_rate: float, dropout after the embeddings and the dense layers (0 in BEiT).
        attention_dropout: float, dropout on the attention probabilities (0).
        drop_path_rate: float in [0, 1), the last block's stochastic-depth rate (0.1).
        layer_scale_init: float or None, LayerScale's initial gamma (0.1; None: no LayerScale).
        use_relative_position_bias: bool, a bias table per layer (True).
        use_absolute_position_embedding: bool, a learned (1 + N, D) table (False).
        layer_norm_epsilon: float (1e-6).

    Example:

    ```python
    backbone = BEiTBackbone.from_preset("beit_base_patch16_224")     # 85,773,504 parameters
    tiny = BEiTBackbone.from_preset("beit_tiny_digits")
    tiny(np.zeros((2, 32, 32, 1))).shape                                # (2, 64)
    mask = np.zeros((2, 64), bool); mask[:, :16] = True
    tiny.encode(np.zeros((2, 32, 32, 1)), mask).shape                   # (2, 65, 64)
    ```
    """

    presets = BEIT_PRESETS

    def __init__(
        self,
        patch_size,
        num_layers,
        hidden_dim,
        num_heads,
        mlp_dim,
        image_shape=(224, 224, 3),
        dropout_rate=0.0,
        attention_dropout=0.0,
        drop_path_rate=0.1,
        layer_scale_init=0.1,
        use_relative_position_bias=True,
        use_absolute_position_embedding=False,
        layer_norm_epsilon=1e-6,
        **kwargs,
    ):
        image_shape = check_image_shape("BEiTBackbone", image_shape, fixed_size=True)
        patch_size = check_int("BEiTBackbone", "patch_size", patch_size, rule="a positive int")
        num_layers, hidden_dim, num_heads, mlp_dim = check_transformer_sizes(
            "BEiTBackbone", num_layers, hidden_dim, num_heads, mlp_dim
        )
        for side, size in zip(("height", "width"), image_shape[:2]):
            if size % patch_size:
                raise ValueError(f"BEiTBackbone image {side} {size} should be divisible by patch_size {patch_size}.")
        for name, rate in (("dropout_rate", dropout_rate), ("attention_dropout", attention_dropout),
                           ("drop_path_rate", drop_path_rate)):
            check_number("BEiTBackbone", name, rate, bounds="[0, 1)")
        check_number("BEiTBackbone", "layer_scale_init", layer_scale_init, allow_none=True,
                     rule="a number > 0 or None (no LayerScale)")
        check_number("BEiTBackbone", "layer_norm_epsilon", layer_norm_epsilon)
        super().__init__(**kwargs)
        grid_size = (image_shape[0] // patch_size, image_shape[1] // patch_size)
        num_patches = grid_size[0] * grid_size[1]
        sequence_length = 1 + num_patches

        # === Layers ===
        self.patch_embedding = PatchEmbedding(
            patch_size, hidden_dim, kernel_initializer=keras.initializers.VarianceScaling(1.0 / 3.0, "fan_in", "uniform"),
            name="patch_embedding",
        )
        self.mask_embedding = MaskEmbedding(name="mask_embedding")
        self.class_token = ClassToken(initializer=_truncated_normal(), name="class_token")
        self.position_layer = (
            LearnedPositionEmbedding(initializer=_truncated_normal(), name="position_embedding")
            if use_absolute_position_embedding else None
        )
        self.embedding_dropout = keras.layers.Dropout(dropout_rate, name="embedding_dropout")
        self.transformer_blocks = [
            TransformerBlock(
                **vit_block_arguments(num_heads, mlp_dim, dropout_rate, attention_dropout, layer_norm_epsilon),
                relative_position="bias" if use_relative_position_bias else None,
                grid_size=grid_size if use_relative_position_bias else None,
                num_prefix_tokens=1,
                layer_scale_init=layer_scale_init,
                drop_path_rate=drop_path_rate * i / max(num_layers - 1, 1),  # linspace(0, rate, L)
                kernel_initializer=_truncated_normal(),
                output_scale=1.0 / math.sqrt(2.0 * (i + 1)),  # fix_init_weight: 1 / sqrt(2 l)
                name=f"transformer_block_{i}",
            )
            for i in range(num_layers)
        ]
        self.encoder_norm = keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, name="encoder_norm")
        self.pooling = TokenPooling("gap", num_prefix_tokens=1, name="pooling")
        self.pooled_norm = keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, name="pooled_norm")
        self.patch_embedding.build((None,) + image_shape)
        self.mask_embedding.build((None, num_patches, hidden_dim))
        self.class_token.build((None, num_patches, hidden_dim))
        if self.position_layer is not None:
            self.position_layer.build((None, sequence_length, hidden_dim))
        for block in self.transformer_blocks:
            block.build((None, sequence_length, hidden_dim))
        self.encoder_norm.build((None, sequence_length, hidden_dim))
        self.pooled_norm.build((None, hidden_dim))
        self.built = True

        # === Config ===
        self.patch_size = patch_size
        self.num_layers = num_layers
        self.hidden_dim = hidden_dim
        self.num_heads = num_heads
        self.mlp_dim = mlp_dim
        self.image_shape = image_shape
        self.dropout_rate = dropout_rate
        self.attention_dropout = attention_dropout
        self.drop_path_rate = drop_path_rate
        self.layer_scale_init = layer_scale_init
        self.layer_norm_epsilon = layer_norm_epsilon
        self.use_relative_position_bias = bool(use_relative_position_bias)
        self.use_absolute_position_embedding = bool(use_absolute_position_embedding)
        # Derived.
        self.grid_size = grid_size
        self.num_patches = num_patches
        self.num_prefix_tokens = 1
        self.sequence_length = sequence_length
        # Every weight exists already; this records the input shape (Keras's `_build_shapes_dict`), which
        # `paperzoo export` reads from a subclassed model.
        self.build((None,) + image_shape)

    def build(self, images_shape=None):
        self.built = True

    @property
    def input_shape(self):
        """(None, height, width, channels), as a functional backbone's (`ImageClassifier` reads it)."""
        return (None,) + self.image_shape

    def _hidden_states(self, images, mask=None, training=None):
        """H^L before the final norm: (B, 1 + N, D)."""
        x = self.patch_embedding(images)  # (B, N, D): E x_i^p
        x = self.mask_embedding(x, patch_mask=mask)  # masked positions -> e_[M]
        x = self.class_token(x)  # (B, 1 + N, D): [e_[S], ...]
        if self.position_layer is not None:
            x = self.position_layer(x)  # + E_pos
        x = self.embedding_dropout(x, training=training)
        for block in self.transformer_blocks:
            x = block(x, training=training)  # H^l = Transformer(H^{l-1})
        return x

    def call(self, images, training=None):
        hidden = self._hidden_states(images, training=training)
        return self.pooled_norm(self.pooling(hidden))  # LN(avg(h_1^L .. h_N^L)), (B, D)

    def encode(self, images, mask=None, training=None):
        """The pre-training sequence: images (B, H, W, C), mask (B, N) (True = [M]) -> (B, 1 + N, D) after the final norm."""
        if mask is not None:
            mask = ops.convert_to_tensor(mask)
            if tuple(mask.shape[1:]) != (self.num_patches,):
                raise ValueError(f"BEiTBackbone.encode mask must be (batch, {self.num_patches}); got {tuple(mask.shape)}.")
        return self.encoder_norm(self._hidden_states(images, mask, training))

    def compute_output_spec(self, images, training=None):
        return keras.KerasTensor((images.shape[0], self.hidden_dim), dtype=self.compute_dtype)

    def layer_groups(self):
        """The trainable variables by layer, from the input: what layer-wise lr decay numbers.

        L + 2 lists, as BEiT's `get_num_layer_for_vit`: layer 0 the embeddings (patch
        embedding, [M], [S], E_pos), layer i + 1 Transformer block i (its relative
        position bias table included), layer L + 1 the rest (the final norms).
        """
        embeddings = (self.patch_embedding, self.mask_embedding, self.class_token, self.position_layer)
        return transformer_layer_groups(self, embeddings, self.transformer_blocks)

    def classification_recipe(self, fine_tune=True):
        """BEiT's ImageNet fine-tuning recipe (`BEIT_FINE_TUNING_RECIPE`), for `BEiTClassifier`/`ImageClassifier`."""
        return dict(BEIT_FINE_TUNING_RECIPE)

    def get_config(self):
        return {**super().get_config(), **constructor_config(self)}


def beit_parameter_count(patch_size, num_layers, hidden_dim, num_heads, mlp_dim, image_shape=(224, 224, 3),
                         layer_scale_init=0.1, use_relative_position_bias=True,
                         use_absolute_position_embedding=False, **unused):
    """The parameters of a `BEiTBackbone`, counted from its configuration (no head).

    Per layer: two LayerNorms 4D, q/k/v/output 4D^2 + 4D (Keras's key bias included),
    MLP 2 D mlp_dim + mlp_dim + D, LayerScale 2D, bias table ((2h-1)(2w-1) + 3) x heads.
    Plus the patch projection P^2 C D + D, [S] and [M] 2D, E_pos (1 + N) D when used,
    and the final and pooled norms 4D.
    """
    h, w = image_shape[0] // patch_size, image_shape[1] // patch_size
    d = hidden_dim
    block = 4 * d + 4 * d * d + 4 * d + 2 * d * mlp_dim + mlp_dim + d
    block += 2 * d if layer_scale_init is not None else 0
    block += ((2 * h - 1) * (2 * w - 1) + 3) * num_heads if use_relative_position_bias else 0
    embed = patch_size * patch_size * image_shape[2] * d + d + 2 * d
    embed += (1 + h * w) * d if use_absolute_position_embedding else 0
    return embed + num_layers * block + 4 * d
