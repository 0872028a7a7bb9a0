"""MAE's lightweight decoder (He et al. 2022, Sec. 3, "MAE decoder")."""

import keras
from keras import ops

from keras_paperzoo.layers.sincos_position_embedding import SinCosPositionEmbedding2D
from keras_paperzoo.layers.transformer_block import TransformerBlock


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class MAEDecoder(keras.layers.Layer):
    """Encoded visible tokens + mask tokens -> predicted pixels of every patch.

    "The input to the MAE decoder is the full set of tokens consisting of (i) encoded
    visible patches, and (ii) mask tokens. Each mask token is a shared, learned
    vector ... We add positional embeddings to all tokens in this full set ... The
    decoder has another series of Transformer blocks." (Sec. 3). In order:

    1. a linear map from the encoder width to `decoder_dim`;
    2. one shared learned mask token appended for each removed patch, and the list
       un-shuffled to patch order with `ids_restore` (prefix tokens stay first);
    3. the decoder's own fixed 2-D sin-cos position embeddings (App. A.1);
    4. `depth` pre-norm Transformer blocks (MLP 4x, no dropout) and a LayerNorm;
    5. "a linear projection whose number of output channels equals the number of
       pixel values in a patch", prefix tokens dropped.

    Initialisation as the authors': Xavier-uniform linear layers with zero biases,
    mask token N(0, 0.02^2), LayerNorm eps 1e-6 (inside the blocks, `TransformerBlock`'s
    ViT initialisation, whose MLP biases are N(0, 1e-6^2) rather than exactly 0).

    Args:
        grid_size: (h, w) patch grid; N = h * w.
        patch_values: P_h * P_w * C, the pixel values per patch.
        num_prefix_tokens: 0 or 1, tokens before the patches in the encoder's output.
        decoder_dim, depth, num_heads: the decoder's width, blocks and heads
            (paper: 512, 8, 16).
        mlp_dim: the blocks' MLP width; default 4 * decoder_dim.

    Call: `decoder(latent, ids_restore)` with latent (B, num_prefix_tokens + K, D_enc)
    and ids_restore (B, N) -> (B, N, patch_values).
    """

    def __init__(self, grid_size, patch_values, num_prefix_tokens=1, decoder_dim=512, depth=8, num_heads=16,
                 mlp_dim=None, layer_norm_epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.grid_size = tuple(int(g) for g in grid_size)
        self.patch_values = int(patch_values)
        self.num_prefix_tokens = int(num_prefix_tokens)
        self.decoder_dim = int(decoder_dim)
        self.depth = int(depth)
        self.num_heads = int(num_heads)
        self.mlp_dim = int(mlp_dim) if mlp_dim is not None else 4 * self.decoder_dim
        self.layer_norm_epsilon = layer_norm_epsilon
        self.num_patches = self.grid_size[0] * self.grid_size[1]

        self.embed = keras.layers.Dense(self.decoder_dim, dtype=self.dtype_policy, name="decoder_embed")
        self.position_embedding = SinCosPositionEmbedding2D(
            self.grid_size, self.num_prefix_tokens, dtype=self.dtype_policy, name="decoder_position_embedding"
        )
        self.blocks = [
            TransformerBlock(
                num_heads=self.num_heads,
                mlp_dim=self.mlp_dim,
                layer_norm_epsilon=layer_norm_epsilon,
                norm_first=True,
                dtype=self.dtype_policy,
                name=f"decoder_block_{i}",
            )
            for i in range(self.depth)
        ]
        self.norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=self.dtype_policy, name="decoder_norm"
        )
        self.predictor = keras.layers.Dense(self.patch_values, dtype=self.dtype_policy, name="decoder_pred")

    def build(self, latent_shape, ids_restore_shape=None):
        self.embed.build(latent_shape)
        self.mask_token = self.add_weight(
            shape=(1, 1, self.decoder_dim),
            initializer=keras.initializers.RandomNormal(stddev=0.02),
            name="mask_token",
        )
        full = (latent_shape[0], self.num_prefix_tokens + self.num_patches, self.decoder_dim)
        self.position_embedding.build(full)
        for block in self.blocks:
            block.build(full)
        self.norm.build(full)
        self.predictor.build(full)

    def call(self, latent, ids_restore, training=None):
        p = self.num_prefix_tokens
        x = self.embed(latent)  # (B, p + K, d)
        visible = x[:, p:, :]  # (B, K, d), shuffled order
        num_masked = self.num_patches - visible.shape[1]
        mask_tokens = ops.zeros_like(visible[:, :1, :]) + ops.cast(self.mask_token, x.dtype)  # (B, 1, d)
        mask_tokens = ops.repeat(mask_tokens, num_masked, axis=1)  # (B, N - K, d)
        shuffled = ops.concatenate([visible, mask_tokens], axis=1)  # (B, N, d): visible first, as shuffled
        patches = ops.take_along_axis(shuffled, ids_restore[:, :, None], axis=1)  # (B, N, d), patch order
        x = ops.concatenate([x[:, :p, :], patches], axis=1)  # (B, p + N, d)
        x = self.position_embedding(x)
        for block in self.blocks:
            x = block(x, training=training)
        x = self.norm(x)
        return self.predictor(x)[:, p:, :]  # (B, N, P*P*C)

    def compute_output_shape(self, latent_shape, ids_restore_shape=None):
        return (latent_shape[0], self.num_patches, self.patch_values)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "grid_size": self.grid_size,
                "patch_values": self.patch_values,
                "num_prefix_tokens": self.num_prefix_tokens,
                "decoder_dim": self.decoder_dim,
                "depth": self.depth,
                "num_heads": self.num_heads,
                "mlp_dim": self.mlp_dim,
                "layer_norm_epsilon": self.layer_norm_epsilon,
            }
        )
        return config
