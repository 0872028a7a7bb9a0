"""Blockwise masking of a patch grid (BEiT, Bao et al. 2022, Sec. 2.5 and Algorithm 1).

"Rather than randomly choosing patches for the masked positions, we employ blockwise
masking ... a block of image patches is masked each time. For each block, we set the
minimum number of patches to 16. Then we randomly choose an aspect ratio for the
masking block. We repeat the above two steps until obtaining enough masked patches,
i.e., 0.4N" (Sec. 2.5; Algorithm 1). The official code (`beit/masking_generator.py`,
`--num_mask_patches 75`) masks at most 75 of the 14 x 14 = 196 patches, which this
layer follows:

    repeat
        s ~ U(min_num_patches, min(remaining, max_num_patches))   # block area
        r = exp(U(log min_aspect, log max_aspect))                # aspect ratio
        a = round(sqrt(s r)), b = round(sqrt(s / r))              # rows, columns
        t ~ U{0..H-a}, l ~ U{0..W-b}                               # top, left
        mask the block if it adds 1..remaining new patches
    until num_masking_patches are masked or 10 draws in a row are refused

Once fewer than `min_num_patches` remain in the budget, s ~ U(remaining, 16) (Python's
`random.uniform(16, remaining)` in the official code): the last blocks may be smaller
than 16, which is how the budget gets filled exactly.

Deviation (so that the stated rules hold after rounding): a block is refused, as an
overlap or an oversized block is in the official code, when its *rounded* sides give
an aspect ratio a/b outside [min_aspect, max_aspect], or fewer than `min_num_patches`
patches while at least that many remain in the budget (the official rounding lets
2 x 7 = 14 patches through from s = 16, r = 0.3). Measured over 4,000 masks of the
official algorithm and of this rule (NumPy): 74.5 and 74.4 patches masked on average,
69 % and 65 % of masks with exactly 75.

Cross-backend reproducibility as in `random_masking.py` (MAE): every draw is
MurmurHash3's finaliser of (seed, counter, iteration, sample, draw) in wrapping int32
`keras.ops`, so one seed gives the same masks on TensorFlow, JAX and PyTorch
(`tests/layers/test_blockwise_masking.py` checks this against a NumPy reference). The
loop is a `keras.ops.while_loop` over the whole batch (traceable, no host round trip).
The uniforms are 24-bit fractions (exact in float32) and the block positions integer
arithmetic; only the sides go through float32 sqrt/exp/log, whose last-bit differences
between backends could in principle flip a rounding at an exact half (not observed).
"""

import math

import numpy as np

import keras
from keras import ops

from keras_paperzoo.layers.counter_random import hashed_bits, logical_right_shift, seed_stream, unit_uniform
from keras_paperzoo.layers.random_masking import check_mask_ratio

MAX_FAILED_DRAWS = 10  # the official code's `for attempt in range(10)` before it stops


def _positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"BlockwiseMasking {name} must be a positive int; got {name}={value!r}.")
    return int(value)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class BlockwiseMasking(keras.layers.Layer):
    """BEiT's blockwise mask over an H x W patch grid: tokens (B, N, D) -> mask (B, N), 1 = masked.

    Each sample gets its own mask of rectangular blocks (see the module docstring):
    about 40 % of the patches (at most 75 of 196 by default) in blocks of at least 16
    patches (smaller only to fill the last < 16 of the budget) with aspect ratio in
    [0.3, 1/0.3]. The trainer replaces the masked patch
    embeddings with e_[M] (BEiT Sec. 2.2). Like `RandomMasking`, the layer masks only
    when `training` is true; otherwise it returns all zeros.

    Args:
        grid_size: (H, W) of the patch grid, or None for a square grid of N tokens.
        num_masking_patches: int, the most patches masked per sample (75: BEiT's
            `--num_mask_patches` for 196 patches, "about 40 %").
        mask_ratio: float in (0, 1), an alternative to `num_masking_patches`:
            round(mask_ratio x N) patches (0.4 x 196 -> 78, Algorithm 1's 0.4N).
        min_num_patches: int, the smallest block (16).
        max_num_patches: int or None (no bound beyond the budget), the largest block.
        min_aspect: float > 0, the smallest aspect ratio (0.3); the largest is
            `max_aspect` (None: 1 / min_aspect).
        seed: int in [0, 2**31) or None.

    Example:

    ```python
    masking = BlockwiseMasking(num_masking_patches=75, seed=0)
    mask = masking(keras.ops.ones((2, 196, 768)), training=True)   # (2, 196)
    mask.sum(axis=1)  # at most 75 each, usually 75
    ```
    """

    def __init__(self, grid_size=None, num_masking_patches=75, mask_ratio=None, min_num_patches=16,
                 max_num_patches=None, min_aspect=0.3, max_aspect=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if grid_size is not None:
            grid_size = tuple(_positive_int(g, "grid_size") for g in grid_size)
            if len(grid_size) != 2:
                raise ValueError(f"BlockwiseMasking grid_size must be (H, W); got {grid_size!r}.")
        self.grid_size = grid_size
        self.mask_ratio = None if mask_ratio is None else check_mask_ratio(mask_ratio)
        self.num_masking_patches = None if mask_ratio is not None else _positive_int(
            num_masking_patches, "num_masking_patches")
        self.min_num_patches = _positive_int(min_num_patches, "min_num_patches")
        self.max_num_patches = None if max_num_patches is None else _positive_int(max_num_patches, "max_num_patches")
        max_aspect = 1.0 / min_aspect if max_aspect is None and min_aspect > 0 else max_aspect
        if not (isinstance(min_aspect, (int, float)) and 0 < min_aspect <= max_aspect):
            raise ValueError(
                f"BlockwiseMasking needs 0 < min_aspect <= max_aspect; got min_aspect={min_aspect!r}, "
                f"max_aspect={max_aspect!r}.")
        self.min_aspect, self.max_aspect = float(min_aspect), float(max_aspect)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**31):
            raise ValueError(f"seed must be None or an int in [0, 2**31); got {seed!r}.")
        self.seed = None if seed is None else int(seed)
        self.seed_generator = keras.random.SeedGenerator(self.seed, name="masking_seed")

    def grid(self, num_tokens):
        """(H, W) for N tokens, checked against `grid_size`."""
        if self.grid_size is not None:
            if self.grid_size[0] * self.grid_size[1] != num_tokens:
                raise ValueError(f"BlockwiseMasking grid_size {self.grid_size} does not hold {num_tokens} tokens.")
            return self.grid_size
        side = int(round(math.sqrt(num_tokens)))
        if side * side != num_tokens:
            raise ValueError(f"BlockwiseMasking needs grid_size=(H, W) for {num_tokens} tokens (not a square).")
        return side, side

    def budget(self, num_tokens):
        """The most patches masked per sample, checked to be in [1, N)."""
        count = (int(math.floor(self.mask_ratio * num_tokens + 0.5)) if self.mask_ratio is not None
                 else self.num_masking_patches)
        if not 1 <= count < num_tokens:
            raise ValueError(
                f"BlockwiseMasking would mask {count} of {num_tokens} patches; it must mask 1 to {num_tokens - 1}.")
        return count

    def build(self, input_shape):
        if len(input_shape) != 3 or input_shape[1] is None:
            raise ValueError(f"BlockwiseMasking expects (batch, tokens, dim) with a known token count; got {input_shape}.")
        self.grid(input_shape[1])
        self.budget(input_shape[1])

    def draws(self, stream, iteration, batch_size):
        """(B, 4) int32 hashes of (stream, iteration, sample, draw): area, aspect, top, left."""
        index = ops.reshape(ops.arange(batch_size * 4, dtype="int32"), (batch_size, 4))
        return hashed_bits(stream, ops.add(index, ops.multiply(iteration, batch_size * 4)))

    def sample_masks(self, batch_size, num_tokens):
        """(B, H, W) int32 blockwise masks from the next (seed, counter) of the layer's SeedGenerator."""
        height, width = self.grid(num_tokens)
        budget = self.budget(num_tokens)
        largest = budget if self.max_num_patches is None else min(budget, self.max_num_patches)
        stream = seed_stream(self.seed_generator)  # () int32, from (seed, counter)
        rows = ops.arange(height, dtype="int32")[None, :, None]  # (1, H, 1)
        cols = ops.arange(width, dtype="int32")[None, None, :]  # (1, 1, W)
        low, log_lo, log_hi = float(self.min_num_patches), math.log(self.min_aspect), math.log(self.max_aspect)

        def body(iteration, mask, count, failures, done):
            hashed = self.draws(stream, iteration, batch_size)  # (B, 4)
            unit = unit_uniform(hashed[:, :2])  # (B, 2) in [0, 1)
            remaining = ops.minimum(budget - count, largest)  # (B,)
            area = low + unit[:, 0] * (ops.cast(remaining, "float32") - low)  # s
            aspect = ops.exp(log_lo + unit[:, 1] * (log_hi - log_lo))  # r
            a = ops.cast(ops.floor(ops.sqrt(area * aspect) + 0.5), "int32")  # block rows
            b = ops.cast(ops.floor(ops.sqrt(area / aspect) + 0.5), "int32")  # block columns
            ratio = ops.cast(a, "float32") / ops.cast(ops.maximum(b, 1), "float32")
            big_enough = (a * b >= self.min_num_patches) | (remaining < self.min_num_patches)
            valid = (a < height) & (b < width) & big_enough \
                & (ratio >= self.min_aspect) & (ratio <= self.max_aspect)
            positions = logical_right_shift(hashed[:, 2:], 16)  # (B, 2) 16-bit integers
            top = (positions[:, 0] * ops.maximum(height - a + 1, 1)) // 65536  # U{0..H-a}
            left = (positions[:, 1] * ops.maximum(width - b + 1, 1)) // 65536  # U{0..W-b}
            block = (rows >= top[:, None, None]) & (rows < (top + a)[:, None, None]) \
                & (cols >= left[:, None, None]) & (cols < (left + b)[:, None, None])  # (B, H, W)
            new = ops.sum(ops.cast(block, "int32") * (1 - mask), axis=(1, 2))  # (B,) patches it adds
            accept = ops.logical_not(done) & valid & (new > 0) & (new <= remaining)
            mask = ops.maximum(mask, ops.cast(block & accept[:, None, None], "int32"))
            count = count + ops.where(accept, new, 0)
            failures = ops.where(accept, 0, failures + 1)
            done = done | (count >= budget) | (failures >= MAX_FAILED_DRAWS)
            return iteration + 1, mask, count, failures, done

        def cond(iteration, mask, count, failures, done):
            return ops.logical_not(ops.all(done))

        zeros = ops.zeros((batch_size,), "int32")
        state = (ops.convert_to_tensor(0, "int32"), ops.zeros((batch_size, height, width), "int32"), zeros, zeros,
                 ops.zeros((batch_size,), "bool"))
        # Each draw either adds >= 1 patch or counts a failure: at most (budget + 1) x 10 draws.
        _, mask, _, _, _ = ops.while_loop(cond, body, state, maximum_iterations=(budget + 1) * MAX_FAILED_DRAWS)
        return mask

    def call(self, tokens, training=None):
        batch_size, num_tokens = ops.shape(tokens)[0], tokens.shape[1]
        if not training:
            return ops.zeros((batch_size, num_tokens), dtype=self.compute_dtype)
        mask = self.sample_masks(batch_size, num_tokens)  # (B, H, W)
        return ops.cast(ops.reshape(mask, (batch_size, num_tokens)), self.compute_dtype)  # (B, N), raster order

    def compute_output_spec(self, tokens, training=None):
        return keras.KerasTensor((tokens.shape[0], tokens.shape[1]), dtype=self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update({
            "grid_size": None if self.grid_size is None else list(self.grid_size),
            "num_masking_patches": self.num_masking_patches,
            "mask_ratio": self.mask_ratio,
            "min_num_patches": self.min_num_patches,
            "max_num_patches": self.max_num_patches,
            "min_aspect": self.min_aspect,
            "max_aspect": self.max_aspect,
            "seed": self.seed,
        })
        return config
