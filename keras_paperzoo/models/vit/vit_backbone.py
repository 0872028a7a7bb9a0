"""ViT: "An Image is Worth 16x16 Words" (Dosovitskiy et al., ICLR 2021), https://arxiv.org/abs/2010.11929."""

import keras

from keras_paperzoo.layers.patch_embedding import ClassToken, PatchEmbedding
from keras_paperzoo.layers.position_embedding import (
    FactorizedPositionEmbedding2D,
    LearnedPositionEmbedding,
    resize_embeddings_1d,
    resize_position_embeddings,
)
from keras_paperzoo.layers.transformer_block import TransformerBlock
from keras_paperzoo.models.backbone import Backbone, check_image_shape
from keras_paperzoo.models.checks import check_int, check_transformer_sizes
from keras_paperzoo.models.vit.vit_analysis import mean_attention_distance
from keras_paperzoo.models.vit.vit_layers import POOLINGS, ConvStem, TokenPooling
from keras_paperzoo.models.vit.vit_presets import VIT_FINE_TUNING_RECIPE, VIT_PRESETS, VIT_PRETRAINING_RECIPE

POSITION_EMBEDDINGS = ("1d", "2d", "relative", "relative_1d", "none")
HYBRID_STEMS = ("conv",)
_RELATIVE_OFFSETS = {"relative": "2d", "relative_1d": "1d"}


def transformer_layer_groups(model, embedding_layers, blocks):
    """[embedding layers' variables, each block's, the rest of `model`'s]: trainable variables, in order.

    The layers of layer-wise lr decay for a ViT-like `model` (`ViTBackbone.layer_groups`);
    None among `embedding_layers` is skipped.
    """
    groups = [[v for layer in embedding_layers if layer is not None for v in layer.trainable_variables]]
    groups += [list(block.trainable_variables) for block in blocks]
    grouped = {id(v) for group in groups for v in group}
    groups.append([v for v in model.trainable_variables if id(v) not in grouped])
    return groups


def vit_block_arguments(num_heads, mlp_dim, dropout_rate, attention_dropout, layer_norm_epsilon):
    """ViT's encoder block (eqs. 2-3) as `TransformerBlock` arguments: LN before MSA and before the MLP
    (Dense(mlp_dim) -> exact GELU -> Dense(D)), dropout after the dense layers and on the attention.

    BEiT's blocks are these with a relative position bias, LayerScale and stochastic depth added.
    """
    return dict(num_heads=num_heads, mlp_dim=mlp_dim, dropout_rate=dropout_rate, attention_dropout=attention_dropout,
                layer_norm_epsilon=layer_norm_epsilon, norm_first=True, activation="gelu")


def _make_stem(hybrid):
    """None, "conv", a serialized layer (from `get_config`) or a layer -> (stem layer or None, config value)."""
    if hybrid is None:
        return None, None
    if isinstance(hybrid, str):
        if hybrid not in HYBRID_STEMS:
            raise ValueError(
                f"Unknown hybrid stem {hybrid!r}; expected None, 'conv' (a ResNet root block) "
                "or a Keras layer/model mapping images to a (B, h, w, C) feature map."
            )
        return ConvStem(name="hybrid_stem"), hybrid
    if isinstance(hybrid, dict):
        hybrid = keras.saving.deserialize_keras_object(hybrid)
    if not isinstance(hybrid, keras.layers.Layer):
        raise ValueError(f"hybrid must be None, 'conv' or a Keras layer; got {hybrid!r}.")
    return hybrid, hybrid


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class ViTBackbone(Backbone):
    """Vision Transformer: images -> the pooled representation y = LN(z_L)^0, shape (B, hidden_dim).

    The image is cut into P x P patches, each linearly projected to D (eq. 1), a
    learnable [class] token is prepended and a learned 1-D position table added;
    L pre-norm Transformer blocks follow (eqs. 2-3: z' = z + MSA(LN(z)),
    z = z' + MLP(LN(z')), MLP = Dense(mlp_dim) -> exact GELU -> Dense(D)), then a
    final LayerNorm; the output is the class token's state (eq. 4) or, with
    `pooling="gap"`, the mean of the patch tokens. No classification head: add
    `Dense(K, kernel_initializer="zeros")` for fine-tuning (Sec. 3.2), or the paper's
    pre-training MLP head (one tanh hidden layer).

    Everything the paper ablates is an argument: class token vs GAP (App. D.3), the
    position embedding (App. D.4), the hybrid CNN input (Sec. 3.1). Initialisation is
    the official code's (LeCun-normal patch projection, zero class token, N(0, 0.02^2)
    positions, Xavier-uniform dense kernels, N(0, 1e-6^2) MLP biases).

    Also available: `sequence_output` (the (B, T, D) tokens after the final norm),
    `sequence_model()`, `attention_scores(images)` (each layer's (B, heads, T, T)
    attention probabilities), `mean_attention_distance(images)` (Fig. 7 right) and
    `with_image_shape(shape)` (the same weights at another resolution, position
    embeddings interpolated, Sec. 3.2).

    Args:
        patch_size: int or (int, int), P. For hybrids, the patch size on the feature
            map (the paper uses 1).
        num_layers: int, L.
        hidden_dim: int, D.
        num_heads: int, attention heads; D must be divisible by it.
        mlp_dim: int, the MLP's hidden width (4D in Table 1).
        image_shape: (height, width, channels); height and width must be divisible by
            the patch size (times the hybrid stem's stride). Default (224, 224, 3).
        dropout_rate: float, dropout after the position embeddings and after every
            dense layer except q, k, v (App. B.1). Default 0.1, Table 3's value for
            training on ImageNet and ImageNet-21k; JFT-300M pre-training used 0.0
            (and so do the official configs used for fine-tuning checkpoints).
        attention_dropout: float, dropout on the attention probabilities; 0.0 in the
            official code.
        pooling: "token" (the class token, the paper's default) or "gap" (global average
            pooling of the patch tokens after the final norm, the official code's
            order; no class token is created, App. D.3).
        position_embedding: "1d" (learned (T, D) table, default), "2d" (App. D.4: learned
            X and Y tables of D/2, concatenated; the class token gets none), "relative"
            (App. D.4's relative attention: per layer and head, query . r_offset logits
            added to the attention logits, over 2-D offsets (dr, dc)), "relative_1d" (the
            same over raster-order offsets, the paper's literal "1-dimensional relative
            attention") or "none".
        layer_norm_epsilon: float, 1e-6 as in the official code.
        hybrid: None (patches of pixels), "conv" (a ResNet root block, stride 4, then
            patches of its feature map) or any Keras layer/model mapping images to a
            (B, h, w, C) feature map, e.g. ResNet-50 stage features with `patch_size=1`
            as in the paper's R50+ViT (serialized with the backbone).

    Examples:

    ```python
    backbone = ViTBackbone.from_preset("vit_b16")             # 85,798,656 parameters
    backbone = ViTBackbone.from_preset("vit_b16", image_shape=(384, 384, 3))
    tiny = ViTBackbone(patch_size=8, num_layers=2, hidden_dim=32, num_heads=2,
                       mlp_dim=64, image_shape=(32, 32, 3))
    tiny(np.zeros((4, 32, 32, 3))).shape                      # (4, 32)
    [s.shape for s in tiny.attention_scores(np.zeros((4, 32, 32, 3)))]  # 2 x (4, 2, 17, 17)
    bigger = tiny.with_image_shape((48, 48, 3))               # 6x6 grid, same weights
    ```
    """

    presets = VIT_PRESETS

    def __init__(
        self,
        patch_size,
        num_layers,
        hidden_dim,
        num_heads,
        mlp_dim,
        image_shape=(224, 224, 3),
        dropout_rate=0.1,
        attention_dropout=0.0,
        pooling="token",
        position_embedding="1d",
        layer_norm_epsilon=1e-6,
        hybrid=None,
        **kwargs,
    ):
        image_shape = check_image_shape("ViTBackbone", image_shape, fixed_size=True)
        if isinstance(patch_size, (list, tuple)):
            patch_size = tuple(check_int("ViTBackbone", "patch_size", p, rule="a positive int") for p in patch_size)
            if len(patch_size) != 2:
                raise ValueError(f"patch_size must be an int or (height, width); got {patch_size}.")
            ph, pw = patch_size
        else:
            ph = pw = patch_size = check_int("ViTBackbone", "patch_size", patch_size, rule="a positive int")
        num_layers, hidden_dim, num_heads, mlp_dim = check_transformer_sizes(
            "ViTBackbone", num_layers, hidden_dim, num_heads, mlp_dim
        )
        for name, rate in (("dropout_rate", dropout_rate), ("attention_dropout", attention_dropout)):
            if not 0.0 <= rate < 1.0:
                raise ValueError(f"{name} {rate!r} should be in [0, 1).")
        if pooling not in POOLINGS:
            raise ValueError(
                f"Unknown pooling {pooling!r}; expected 'token' (class token, the paper's default) "
                "or 'gap' (global average pooling, App. D.3)."
            )
        if position_embedding not in POSITION_EMBEDDINGS:
            raise ValueError(
                f"Unknown position_embedding {position_embedding!r}; expected one of "
                f"{', '.join(repr(p) for p in POSITION_EMBEDDINGS)}."
            )
        if position_embedding == "2d" and hidden_dim % 2:
            raise ValueError(f"hidden_dim {hidden_dim} should be even for 2-D position embeddings (two halves of D/2).")
        if not layer_norm_epsilon > 0:
            raise ValueError(f"layer_norm_epsilon {layer_norm_epsilon!r} should be positive.")
        stem, hybrid = _make_stem(hybrid)
        if stem is None:
            feature_shape, where = image_shape, "Input"
        else:
            if not stem.built:
                stem.build((None,) + image_shape)
            feature_shape = tuple(stem.compute_output_spec(keras.KerasTensor((None,) + image_shape)).shape[1:])
            where = f"Hybrid feature-map (image {image_shape[0]}x{image_shape[1]} after the stem)"
            if len(feature_shape) != 3 or None in feature_shape[:2]:
                raise ValueError(f"The hybrid stem should output (B, h, w, C) with known h, w; got {feature_shape}.")
        if feature_shape[0] % ph:
            raise ValueError(f"{where} height {feature_shape[0]} should be divisible by patch size {ph}.")
        if feature_shape[1] % pw:
            raise ValueError(f"{where} width {feature_shape[1]} should be divisible by patch size {pw}.")
        grid_size = (feature_shape[0] // ph, feature_shape[1] // pw)
        num_prefix_tokens = 1 if pooling == "token" else 0
        relative = _RELATIVE_OFFSETS.get(position_embedding)

        # === Layers ===
        patch_embedding = PatchEmbedding((ph, pw), hidden_dim, name="patch_embedding")
        class_token = ClassToken(name="class_token") if num_prefix_tokens else None
        if position_embedding == "1d":
            position_layer = LearnedPositionEmbedding(name="position_embedding")
        elif position_embedding == "2d":
            position_layer = FactorizedPositionEmbedding2D(grid_size, num_prefix_tokens, name="position_embedding")
        else:  # "none", or relative positions inside the attention
            position_layer = None
        embedding_dropout = keras.layers.Dropout(dropout_rate, name="embedding_dropout")
        blocks = [
            TransformerBlock(
                **vit_block_arguments(num_heads, mlp_dim, dropout_rate, attention_dropout, layer_norm_epsilon),
                relative_position=relative,
                grid_size=grid_size if relative else None,
                num_prefix_tokens=num_prefix_tokens,
                name=f"transformer_block_{i}",
            )
            for i in range(num_layers)
        ]
        encoder_norm = keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, name="encoder_norm")
        pooler = TokenPooling(pooling, num_prefix_tokens=num_prefix_tokens, name="pooling")
        embedding_layers = (stem, patch_embedding, class_token, position_layer, embedding_dropout)

        # === Functional Model ===
        images = keras.Input(image_shape, name="images")
        x = _embed(images, embedding_layers)  # (B, T, D), T = num_prefix_tokens + h*w
        for block in blocks:
            x = block(x)  # z_l, eqs. (2)-(3)
        sequence = encoder_norm(x)  # LN(z_L), (B, T, D)
        pooled = pooler(sequence)  # y, eq. (4): (B, D)
        super().__init__(inputs=images, outputs=pooled, **kwargs)

        # === Config ===
        self.patch_size = patch_size
        self.num_layers = num_layers
        self.hidden_dim = hidden_dim
        self.num_heads = num_heads
        self.mlp_dim = mlp_dim
        self.image_shape = image_shape
        self.dropout_rate = dropout_rate
        self.attention_dropout = attention_dropout
        self.pooling = pooling
        self.position_embedding = position_embedding
        self.layer_norm_epsilon = layer_norm_epsilon
        self.hybrid = hybrid
        # Derived, for users and converters.
        self.grid_size = grid_size
        self.num_prefix_tokens = num_prefix_tokens
        self.token_pixels = (image_shape[0] / grid_size[0], image_shape[1] / grid_size[1])
        self.hybrid_stem = stem
        self.patch_embedding = patch_embedding
        self.class_token = class_token
        self.position_layer = position_layer
        self.embedding_dropout = embedding_dropout
        self.transformer_blocks = blocks
        self.encoder_norm = encoder_norm

    def get_config(self):
        config = super().get_config()
        hybrid = self.hybrid
        if isinstance(hybrid, keras.layers.Layer):
            hybrid = keras.saving.serialize_keras_object(hybrid)
        config.update(
            {
                "patch_size": self.patch_size,
                "num_layers": self.num_layers,
                "hidden_dim": self.hidden_dim,
                "num_heads": self.num_heads,
                "mlp_dim": self.mlp_dim,
                "image_shape": self.image_shape,
                "dropout_rate": self.dropout_rate,
                "attention_dropout": self.attention_dropout,
                "pooling": self.pooling,
                "position_embedding": self.position_embedding,
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "hybrid": hybrid,
            }
        )
        return config

    def layer_groups(self):
        """The trainable variables by layer, from the input: what layer-wise lr decay numbers.

        L + 2 lists (BEiT's `get_num_layer_for_vit`, MAE App. A.2): layer 0 the
        embeddings (hybrid stem, patch embedding, class token, position embedding),
        layer i + 1 Transformer block i, layer L + 1 the rest (the final norm).
        """
        embeddings = (self.hybrid_stem, self.patch_embedding, self.class_token, self.position_layer)
        return transformer_layer_groups(self, embeddings, self.transformer_blocks)

    def classification_recipe(self, fine_tune=False):
        """The paper's training recipe, `ImageClassifier.compile()`'s default: from scratch
        (`VIT_PRETRAINING_RECIPE`, AdamW) or, with `fine_tune`, fine-tuning's (`VIT_FINE_TUNING_RECIPE`, SGD)."""
        return dict(VIT_FINE_TUNING_RECIPE if fine_tune else VIT_PRETRAINING_RECIPE)

    # --- the token sequence and the attention maps ------------------------------------

    @property
    def sequence_length(self):
        """T = num_prefix_tokens + h*w (197 for ViT-B/16 at 224)."""
        return self.num_prefix_tokens + self.grid_size[0] * self.grid_size[1]

    @property
    def sequence_output(self):
        """The symbolic (B, T, D) token sequence after the final LayerNorm (class token first)."""
        return self.encoder_norm.output

    def _cached(self, key, build):
        # Kept out of Keras's attribute tracking (and torch's module registry): these
        # models only re-use this backbone's layers and must not add to its weights.
        model = self.__dict__.get(key)
        if model is None:
            model = build()
            object.__setattr__(self, key, model)
        return model

    def sequence_model(self):
        """A `keras.Model` images -> (B, T, D) tokens, sharing this backbone's layers."""
        return self._cached(
            "_sequence_model",
            lambda: keras.Model(self.input, self.sequence_output, name=f"{self.name}_sequence"),
        )

    def attention_model(self):
        """A `keras.Model` images -> [ (B, heads, T, T) ] * num_layers attention probabilities.

        A second functional graph over the same layers (same weights), with each
        block's attention called with `return_attention_scores=True`.
        """

        def build():
            images = keras.Input(self.image_shape)
            x = _embed(
                images,
                (self.hybrid_stem, self.patch_embedding, self.class_token, self.position_layer, self.embedding_dropout),
            )
            scores = []
            for block in self.transformer_blocks:
                x, s = _WithAttentionScores(block, name=f"{block.name}_with_scores")(x)
                scores.append(s)
            return keras.Model(images, scores, name=f"{self.name}_attention")

        return self._cached("_attention_model", build)

    def attention_scores(self, images, training=False):
        """Each layer's attention probabilities: a list of num_layers (B, heads, T, T) tensors, rows sum to 1."""
        return self.attention_model()(images, training=training)

    def mean_attention_distance(self, images):
        """(num_layers, num_heads) mean attention distance in pixels over `images` (Fig. 7 right, App. D.7)."""
        return mean_attention_distance(
            self.attention_scores(images), self.grid_size, self.token_pixels, self.num_prefix_tokens
        )

    # --- another resolution (Sec. 3.2) -----------------------------------------------

    def with_image_shape(self, image_shape, interpolation="bicubic", antialias=True, align_corners=False):
        """A new `ViTBackbone` at `image_shape` carrying this one's weights (fine-tuning at higher resolution).

        Same patch size, so the sequence length changes; every weight is copied as is
        except the position information, interpolated in 2-D "according to its location
        in the original image" (Sec. 3.2) with `resize_position_embeddings` (default:
        timm's bicubic, antialiased, half-pixel): the 1-D table's grid rows (class row
        kept), the 2-D embedding's X and Y tables, or the relative attention's
        (2h-1) x (2w-1) offset tables (the three class-token entries kept). Relative
        raster offsets ("relative_1d") have no 2-D layout and are refused.

        Example: `ViTBackbone.from_preset("vit_b16").with_image_shape((384, 384, 3))`.
        """
        if self.position_embedding == "relative_1d" and tuple(image_shape) != self.image_shape:
            raise ValueError(
                "with_image_shape cannot carry position_embedding='relative_1d' to another grid: raster-order "
                "offsets have no 2-D layout to interpolate; use 'relative' (2-D offsets)."
            )
        config = self.get_config()
        config["image_shape"] = tuple(image_shape)
        new = type(self).from_config(config)
        resize = dict(interpolation=interpolation, antialias=antialias, align_corners=align_corners)
        (oh, ow), (nh, nw) = self.grid_size, new.grid_size
        special = {}  # id(old variable) -> resized value
        if self.position_embedding == "1d":
            table = self.position_layer.embeddings
            special[id(table)] = resize_position_embeddings(
                table, (oh, ow), (nh, nw), self.num_prefix_tokens, **resize
            )
        elif self.position_embedding == "2d":
            layer = self.position_layer
            special[id(layer.column_embeddings)] = resize_embeddings_1d(layer.column_embeddings, nw, **resize)
            special[id(layer.row_embeddings)] = resize_embeddings_1d(layer.row_embeddings, nh, **resize)
        elif self.position_embedding == "relative":
            for block in self.transformer_blocks:
                table = block.attention.relative_embeddings
                special[id(table)] = resize_position_embeddings(
                    table, (2 * oh - 1, 2 * ow - 1), (2 * nh - 1, 2 * nw - 1), 3 * self.num_prefix_tokens, **resize
                )
        if len(self.weights) != len(new.weights):
            raise ValueError("with_image_shape: the rebuilt backbone has a different set of weights.")
        for old, fresh in zip(self.weights, new.weights):
            value = special.get(id(old))
            if value is None:
                if tuple(old.shape) != tuple(fresh.shape):
                    raise ValueError(f"with_image_shape: {old.path} {old.shape} does not fit {fresh.path} {fresh.shape}.")
                value = old
            fresh.assign(keras.ops.convert_to_numpy(value))
        return new


class _WithAttentionScores(keras.layers.Layer):
    """Calls a `TransformerBlock` with `return_attention_scores=True` (same weights).

    Keras's functional graph checks assume every call of a layer returns the
    structure of its first call, and the backbone's graph calls each block without
    scores; this wrapper is a new layer whose calls all return (tokens, scores).
    """

    def __init__(self, block, **kwargs):
        super().__init__(**kwargs)
        self.block = block

    def call(self, tokens, training=None):
        return self.block(tokens, return_attention_scores=True, training=training)

    def compute_output_spec(self, tokens, training=None):
        return self.block.compute_output_spec(tokens, return_attention_scores=True)


def _embed(images, layers):
    """z_0 = [x_class; x_p^1 E; ...; x_p^N E] + E_pos (eq. 1), then dropout."""
    stem, patch_embedding, class_token, position_layer, dropout = layers
    x = images if stem is None else stem(images)  # hybrid: (B, h', w', C') feature map
    x = patch_embedding(x)  # (B, N, D)
    if class_token is not None:
        x = class_token(x)  # (B, 1 + N, D)
    if position_layer is not None:
        x = position_layer(x)
    return dropout(x)
