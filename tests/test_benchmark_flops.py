"""The analytic FLOP counts of benchmarks/common.py that the SSL and vision benchmarks divide by."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import common  # noqa: E402


def test_cifar_resnet18_convs_per_image():
    # stem 2*32*32*64*27; stage 1: 4 convs 2*32*32*64*64*9; stages 2-4: a strided conv, three
    # convs and a 1x1 projection, each stage 2*s*s*(c*c/2*9 + 3*c*c*9 + c*c/2) with s*s*c fixed.
    stage1 = 4 * 2 * 32 * 32 * 64 * 64 * 9
    later = 2 * 16 * 16 * (128 * 64 * 9 + 3 * 128 * 128 * 9 + 128 * 64)
    expected = 2 * 32 * 32 * 64 * 27 + stage1 + 3 * later
    config = common.SSL_MODELS["moco_v2"]["backbone"]
    assert common.resnet_forward_flops(**config)["convs"] == expected == 1_110_835_200


def test_moco_step_counts_query_three_times_and_key_once():
    flops = common.ssl_step_flops("moco_v2", 128)
    encoder = 1_110_835_200 + 2 * 512 * 2048 + 2 * 2048 * 128
    assert flops["encoder_forward_per_image"] == encoder
    assert flops["total"] == 128 * 4 * encoder + 2 * (2 * 128 * 128 * 4097)


def test_mae_vit_s16_step():
    flops = common.ssl_step_flops("mae_vit_s16", 16)
    assert flops["visible_tokens"] == 49
    block = 3 * 2 * 197 * 512 * 512 + 4 * 197 * 197 * 512 + 2 * 197 * 512 * 512 + 4 * 197 * 512 * 2048
    assert flops["decoder_blocks"] == 8 * block == 10_551_181_312
    assert flops["total"] == 3 * 16 * flops["forward_per_image"]


def test_vision_counts_unchanged_by_the_stem_argument():
    assert common.vision_step_flops("resnet20", 1)["forward_per_image"] == 81_102_080
    assert common.vision_step_flops("resnet50", 1)["forward_per_image"] == 8_178_368_512
