"""BlockwiseMasking: BEiT's Algorithm 1, the same masks on every backend as a NumPy reference."""

import math

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.layers import BlockwiseMasking
from tests.layers.test_random_masking import _fmix32
from tests.model_checks import check_config_roundtrip


def reference_masks(seed, draw, batch, height=14, width=14, budget=75, low=16, min_aspect=0.3):
    """(masks (B, H, W), blocks: per sample the accepted (top, left, rows, cols, budget left)) of the `draw`-th call."""
    max_aspect = 1.0 / min_aspect
    f32 = np.float32
    with np.errstate(over="ignore"):
        stream = _fmix32(_fmix32(np.uint32(seed)) ^ _fmix32(np.uint32(draw) + np.uint32(0x9E3779B9)))
    masks, blocks = np.zeros((batch, height, width), "int32"), [[] for _ in range(batch)]
    for b in range(batch):
        count = failures = iteration = 0
        while count < budget and failures < 10:
            with np.errstate(over="ignore"):
                index = np.uint32(iteration * batch * 4 + b * 4) + np.arange(4, dtype=np.uint32)
                h = _fmix32(index + stream)
            unit = (h[:2] >> np.uint32(8)).astype(f32) * f32(2.0 ** -24)
            remaining = budget - count
            area = f32(low) + unit[0] * (f32(remaining) - f32(low))
            aspect = np.exp(f32(math.log(min_aspect)) + unit[1] * (f32(math.log(max_aspect)) - f32(math.log(min_aspect))))
            a = int(np.floor(np.sqrt(f32(area * aspect)) + f32(0.5)))
            c = int(np.floor(np.sqrt(f32(area / aspect)) + f32(0.5)))
            ratio = f32(a) / f32(max(c, 1))
            top = int(h[2] >> np.uint32(16)) * max(height - a + 1, 1) // 65536
            left = int(h[3] >> np.uint32(16)) * max(width - c + 1, 1) // 65536
            iteration += 1
            big_enough = a * c >= low or remaining < low
            if a < height and c < width and big_enough and min_aspect <= ratio <= max_aspect:
                new = int((1 - masks[b, top:top + a, left:left + c]).sum())
                if 0 < new <= remaining:
                    masks[b, top:top + a, left:left + c] = 1
                    count += new
                    failures = 0
                    blocks[b].append((top, left, a, c, remaining))
                    continue
            failures += 1
    return masks, blocks


def np_(x):
    return np.asarray(ops.convert_to_numpy(x))


def test_masks_match_the_numpy_reference_on_every_backend():
    masking = BlockwiseMasking(seed=3)
    tokens = ops.zeros((8, 196, 4))
    for draw in range(2):
        mask = np_(masking(tokens, training=True)).reshape(8, 14, 14)
        expected, _ = reference_masks(3, draw, 8)
        np.testing.assert_array_equal(mask, expected)


def test_blocks_follow_algorithm_1_and_total_is_about_40_percent():
    counts = []
    for draw in range(4):
        masks, blocks = reference_masks(0, draw, 16)
        for mask, sample_blocks in zip(masks, blocks):
            assert sample_blocks, "no block was masked"
            assert sample_blocks[0][4] == 75
            for top, left, rows, cols, remaining in sample_blocks:
                if remaining >= 16:  # min_num_patches, unless less of the budget is left
                    assert rows * cols >= 16
                assert 0.3 <= rows / cols <= 1 / 0.3
                assert mask[top:top + rows, left:left + cols].all()
            counts.append(int(mask.sum()))
    counts = np.array(counts)
    assert counts.max() <= 75
    assert counts.mean() >= 72, counts  # 75 of 196 (38 %) in most samples
    assert (counts == 75).mean() >= 0.4, counts


def test_jitted_fit_style_call_and_inference():
    masking = BlockwiseMasking(grid_size=(4, 6), num_masking_patches=10, min_num_patches=4, seed=1)
    tokens = ops.ones((3, 24, 2))
    mask = np_(masking(tokens, training=True))
    assert mask.shape == (3, 24) and (mask.sum(axis=1) <= 10).all() and (mask.sum(axis=1) >= 4).all()
    assert np_(masking(tokens)).sum() == 0  # no masking at inference
    expected, _ = reference_masks(1, 0, 3, height=4, width=6, budget=10, low=4)
    np.testing.assert_array_equal(mask.reshape(3, 4, 6), expected)


def test_mask_ratio_and_config_roundtrip():
    masking = BlockwiseMasking(mask_ratio=0.4, seed=5)
    assert masking.budget(196) == 78  # Algorithm 1's 0.4 N
    clone = check_config_roundtrip(masking)
    assert clone.mask_ratio == 0.4 and clone.seed == 5


@pytest.mark.parametrize("ratio", [0.0, 1.0, -0.1, 1.5])
def test_mask_ratio_outside_open_unit_interval_is_refused(ratio):
    with pytest.raises(ValueError, match="mask_ratio"):
        BlockwiseMasking(mask_ratio=ratio)


def test_bad_grid_and_aspect_are_refused():
    with pytest.raises(ValueError, match="grid_size"):
        BlockwiseMasking(grid_size=(4, 4))(ops.ones((1, 15, 2)), training=True)
    with pytest.raises(ValueError, match="min_aspect"):
        BlockwiseMasking(min_aspect=0.0)
