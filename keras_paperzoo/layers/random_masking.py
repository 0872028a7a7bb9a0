"""Per-sample random masking of a token sequence (MAE, He et al. 2022, Sec. 3; reused by BEiT-style trainers).

"We sample random patches without replacement, following a uniform distribution"
(MAE Sec. 3, "Masking"), implemented as the paper's "Simple implementation": give
every token a random key, sort, keep the first `num_visible` tokens of the shuffled
list and drop the rest; the inverse permutation (`ids_restore`) later un-shuffles
the decoder's full token list back to patch order.

Cross-backend reproducibility. `keras.random.uniform` draws different numbers on
TensorFlow, JAX and PyTorch for the same seed, so sorting its noise would give each
backend its own mask. The keys here are a counter-based hash instead: the layer's
`keras.random.SeedGenerator` supplies (seed, counter) as it does for every Keras
random op, and each token's key is MurmurHash3's 32-bit finaliser applied to
(seed, counter, batch index, token index) with wrapping int32 arithmetic in
`keras.ops`. The same seed therefore gives the same masks, draw after draw, on every
backend (`tests/layers/test_random_masking.py` checks this against a NumPy
reference). The key's low bits are replaced by the token index, so keys are
distinct and `argsort` has no ties to break differently per backend (a tie in the
remaining high bits, probability about N^2 / 2^(33 - ceil(log2 N)) per sample,
resolves by index). Seeds must lie in [0, 2**31).
"""

import math

import numpy as np

import keras
from keras import ops

from keras_paperzoo.layers.counter_random import GOLDEN, fmix32

def num_visible_tokens(num_tokens, mask_ratio):
    """round(N * (1 - mask_ratio)), halves rounded up; checked to leave >= 1 visible and >= 1 masked.

    The paper's code truncates, int(N * (1 - r)); the two agree whenever N(1 - r) is a
    whole number (49 of 196 at 0.75, every setting in the paper). Rounding also keeps
    float error from dropping a token: int(10 * (1 - 0.9)) is 0, not 1.
    """
    keep = int(math.floor(num_tokens * (1.0 - mask_ratio) + 0.5))
    if not 1 <= keep <= num_tokens - 1:
        raise ValueError(
            f"mask_ratio {mask_ratio} with {num_tokens} tokens keeps {keep} visible "
            f"(round({num_tokens} x (1 - {mask_ratio}))); at least one token must stay visible and "
            "at least one be masked."
        )
    return keep


def check_mask_ratio(mask_ratio):
    if isinstance(mask_ratio, bool) or not isinstance(mask_ratio, (int, float, np.floating)) or not 0.0 < mask_ratio < 1.0:
        raise ValueError(f"mask_ratio must be a number in (0, 1), the fraction of tokens removed; got {mask_ratio!r}.")
    return float(mask_ratio)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class RandomMasking(keras.layers.Layer):
    """Keep a uniformly random subset of each sample's tokens: (B, N, D) -> visible (B, K, D).

    K = round(N * (1 - mask_ratio)) (`num_visible_tokens`), the same for every sample,
    a different random subset per sample. Returns `(visible, mask, ids_restore)`:

    - `visible` (B, K, D): the kept tokens, in shuffled order;
    - `mask` (B, N) float, in patch order: 1 = masked (removed), 0 = visible; each
      row sums to N - K;
    - `ids_restore` (B, N) int32: the inverse of the shuffle. For any (B, N, ...)
      list in shuffled order (the K visible tokens then N - K mask tokens),
      `take_along_axis(shuffled, ids_restore[..., None], axis=1)` puts every token
      back at its patch position.

    Masking off at inference: with `training` false or None the layer returns every
    token in order (`visible` is the input, `mask` all zeros, `ids_restore` the
    identity), like `Dropout`, so an encoder that contains it sees whole images at
    inference (the paper's downstream use). The MAE trainer, whose forward pass *is*
    the masked pre-training task, calls it with `training=True` in `evaluate` and
    `predict` as well.

    Args:
        mask_ratio: float in (0, 1), the fraction of tokens removed (MAE: 0.75).
        seed: int in [0, 2**31) or None, the seed of the layer's `SeedGenerator`.

    Call arguments:
        tokens: (B, N, D).
        training: mask only when true (see above).
        noise: optional (B, N) array of sort keys replacing the hash keys (argsort of
            it decides the shuffle, smallest first kept), e.g. uniform noise for the
            paper's exact recipe or a fixed array for repeatable pictures.

    Example:

    ```python
    masking = RandomMasking(mask_ratio=0.75, seed=0)
    visible, mask, ids_restore = masking(keras.ops.ones((2, 196, 768)), training=True)
    visible.shape, mask.shape  # (2, 49, 768), (2, 196); mask.sum(axis=1) == [147, 147]
    ```
    """

    def __init__(self, mask_ratio=0.75, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.mask_ratio = check_mask_ratio(mask_ratio)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**31):
            raise ValueError(f"seed must be None or an int in [0, 2**31); got {seed!r}.")
        self.seed = None if seed is None else int(seed)
        self.seed_generator = keras.random.SeedGenerator(self.seed, name="masking_seed")

    def build(self, input_shape):
        if len(input_shape) != 3 or input_shape[1] is None:
            raise ValueError(f"RandomMasking expects (batch, tokens, dim) with a known token count; got {input_shape}.")
        num_visible_tokens(input_shape[1], self.mask_ratio)  # fails early on a ratio that keeps 0 or N

    def sort_keys(self, batch_size, num_tokens):
        """(B, N) int32 keys, distinct per row, from the next (seed, counter) of the layer's SeedGenerator."""
        state = ops.cast(self.seed_generator.next(), "int32")  # (seed, counter), as for keras.random
        seed, counter = state[0], state[1]
        stream = fmix32(ops.bitwise_xor(fmix32(seed), fmix32(ops.add(counter, GOLDEN))))  # () per draw
        index = ops.reshape(ops.arange(batch_size * num_tokens, dtype="int32"), (batch_size, num_tokens))
        hashed = fmix32(ops.add(index, stream))  # (B, N), b * N + n hashed with the stream
        bits = max(1, math.ceil(math.log2(num_tokens)))
        position = ops.arange(num_tokens, dtype="int32")[None, :]  # low bits: the token index
        return ops.bitwise_or(ops.bitwise_and(hashed, -(1 << bits)), position)

    def call(self, tokens, training=None, noise=None):
        batch_size, num_tokens = ops.shape(tokens)[0], tokens.shape[1]
        if not training:
            ids = ops.broadcast_to(ops.arange(num_tokens, dtype="int32")[None, :], (batch_size, num_tokens))
            return tokens, ops.zeros((batch_size, num_tokens), dtype=self.compute_dtype), ids
        keep = num_visible_tokens(num_tokens, self.mask_ratio)
        if noise is None:
            noise = self.sort_keys(batch_size, num_tokens)  # (B, N)
        ids_shuffle = ops.cast(ops.argsort(noise, axis=1), "int32")  # (B, N): smallest keys first
        ids_restore = ops.cast(ops.argsort(ids_shuffle, axis=1), "int32")  # (B, N): inverse permutation
        ids_keep = ids_shuffle[:, :keep]  # (B, K)
        visible = ops.take_along_axis(tokens, ids_keep[:, :, None], axis=1)  # (B, K, D)
        # 0 for the first K of the shuffled list, 1 after; un-shuffled to patch order.
        shuffled_mask = ops.cast(ops.arange(num_tokens)[None, :] >= keep, self.compute_dtype)  # (1, N)
        shuffled_mask = ops.broadcast_to(shuffled_mask, (batch_size, num_tokens))
        mask = ops.take_along_axis(shuffled_mask, ids_restore, axis=1)  # (B, N), 1 = masked
        return visible, mask, ids_restore

    def compute_output_spec(self, tokens, training=None, noise=None):
        batch, num_tokens, dim = tokens.shape
        keep = num_visible_tokens(num_tokens, self.mask_ratio) if training else num_tokens
        return (
            keras.KerasTensor((batch, keep, dim), dtype=self.compute_dtype),
            keras.KerasTensor((batch, num_tokens), dtype=self.compute_dtype),
            keras.KerasTensor((batch, num_tokens), dtype="int32"),
        )

    def get_config(self):
        config = super().get_config()
        config.update({"mask_ratio": self.mask_ratio, "seed": self.seed})
        return config
