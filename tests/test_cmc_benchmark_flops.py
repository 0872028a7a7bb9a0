"""The analytic FLOP count of the CMC benchmark (`python -m benchmarks cmc`; its MFU divides by it)."""

import pytest

from benchmarks import flops as counts

# backend_free (tests/conftest.py): benchmarks/flops.py imports no framework (its docstring): every leg would run the
# same code.
pytestmark = pytest.mark.backend_free("tensorflow")


def _half_resnet18(channels):
    """Convs of a half-width CIFAR ResNet-18 on one 32x32 view, by hand (2 H W C_out C_in k^2 each)."""
    flops = 2 * 32 * 32 * 64 * channels * 9  # 3x3 stem to 64
    size, previous = 32, 64
    for filters in (32, 64, 128, 256):
        size = size if filters == 32 else size // 2  # stages 2-4 stride 2 in their first conv
        flops += 2 * size * size * filters * previous * 9 + 2 * size * size * filters * filters * 9  # block 1
        flops += 2 * size * size * filters * previous  # its 1x1 projection shortcut (the width changes)
        flops += 2 * (2 * size * size * filters * filters * 9)  # block 2
        previous = filters
    return flops


def test_cmc_step_counts_both_encoders_three_times_and_both_directions_scores_twice():
    flops = counts.cmc_step_flops("cmc_cifar_resnet18", 32)
    encoders = _half_resnet18(1) + _half_resnet18(2) + 2 * (2 * 256 * 128)  # L, ab, two linear layers 256 -> 128
    assert flops["encoders_forward_per_image"] == encoders
    scores = 2 * 2 * (2 * 128 * 4097)  # two directions, each against 1 + 4096 rows: forward, backward to z
    assert flops["total"] == 32 * (3 * encoders + scores)
