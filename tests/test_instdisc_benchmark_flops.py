"""The analytic FLOP count of the InstDisc benchmark (`python -m benchmarks instdisc`; its MFU divides by it)."""

import pytest

from benchmarks import flops as counts

# backend_free (tests/conftest.py): benchmarks/flops.py imports no framework (its docstring): every leg would run the
# same code.
pytestmark = pytest.mark.backend_free("tensorflow")


def test_instdisc_step_counts_the_network_three_times_and_the_scores_twice():
    # CIFAR ResNet-20 convs per 32x32 image: stem 2*32*32*16*27; stage 1: 6 convs 2*32*32*16*16*9; stages 2 and 3:
    # a strided conv and 5 convs at s*s*c with the same cost, 2*s*s*(c*c/2*9 + 5*c*c*9) (option A: no projection).
    convs = 2 * 32 * 32 * 16 * 27 + 6 * 2 * 32 * 32 * 16 * 16 * 9
    convs += 2 * 16 * 16 * (32 * 16 * 9 + 5 * 32 * 32 * 9) + 2 * 8 * 8 * (64 * 32 * 9 + 5 * 64 * 64 * 9)
    flops = counts.instdisc_step_flops(64, 4096)
    network = convs + 2 * 64 * 128  # + the linear layer 64 -> 128
    assert flops["network_forward_per_image"] == network
    assert flops["total"] == 3 * 64 * network + 2 * (2 * 64 * 128 * 4097)  # scores V f: forward, backward to f
