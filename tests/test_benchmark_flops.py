"""The analytic FLOP counts of benchmarks/flops.py that the SSL, vision and LM benchmarks divide by."""

import pytest

from benchmarks import flops as counts

# backend_free (tests/conftest.py): benchmarks/flops.py imports no framework (its docstring): every leg would run the
# same code.
pytestmark = pytest.mark.backend_free("tensorflow")


def test_cifar_resnet18_convs_per_image():
    # stem 2*32*32*64*27; stage 1: 4 convs 2*32*32*64*64*9; stages 2-4: a strided conv, three
    # convs and a 1x1 projection, each stage 2*s*s*(c*c/2*9 + 3*c*c*9 + c*c/2) with s*s*c fixed.
    stage1 = 4 * 2 * 32 * 32 * 64 * 64 * 9
    later = 2 * 16 * 16 * (128 * 64 * 9 + 3 * 128 * 128 * 9 + 128 * 64)
    expected = 2 * 32 * 32 * 64 * 27 + stage1 + 3 * later
    config = counts.SSL_MODELS["moco_v2"]["backbone"]
    assert counts.resnet_forward_flops(**config)["convs"] == expected == 1_110_835_200


def test_moco_step_counts_query_three_times_and_key_once():
    flops = counts.ssl_step_flops("moco_v2", 128)
    encoder = 1_110_835_200 + 2 * 512 * 2048 + 2 * 2048 * 128
    assert flops["encoder_forward_per_image"] == encoder
    assert flops["total"] == 128 * 4 * encoder + 2 * (2 * 128 * 128 * 4097)


def test_simclr_step_runs_the_encoder_three_times_on_both_views():
    flops = counts.ssl_step_flops("simclr", 128)
    encoder = 1_110_835_200 + 2 * 512 * 512 + 2 * 512 * 128  # backbone + head 512 -> 512 -> 128
    assert flops["encoder_forward_per_image"] == encoder
    similarities = 2 * 256 * 128 * 256  # z z^T of the 2N = 256 views, C = 128
    assert flops["total"] == 3 * 256 * encoder + 3 * similarities


def test_byol_step_counts_online_three_times_and_target_once_per_view():
    flops = counts.ssl_step_flops("byol", 128)
    projector = 2 * 512 * 4096 + 2 * 4096 * 256
    predictor = 2 * 256 * 4096 + 2 * 4096 * 256
    assert flops["online_forward_per_image"] == 1_110_835_200 + projector + predictor
    assert flops["target_forward_per_image"] == 1_110_835_200 + projector
    assert flops["total"] == 256 * (3 * flops["online_forward_per_image"] + flops["target_forward_per_image"])
    assert counts.ssl_step_flops("byol", 64)["total"] * 2 == flops["total"]


def test_invaspread_step_runs_the_encoder_three_times_and_the_similarities_twice():
    flops = counts.ssl_step_flops("invaspread", 128)
    encoder = 1_110_835_200 + 2 * 512 * 128  # backbone + the linear 512 -> 128 embedding
    assert flops["encoder_forward_per_image"] == encoder
    similarities = 2 * 256 * 128 * 256  # x x^T of the 2N = 256 views; backward to the inputs only
    assert flops["total"] == 3 * 256 * encoder + 2 * similarities


def test_mae_vit_s16_step():
    flops = counts.ssl_step_flops("mae_vit_s16", 16)
    assert flops["visible_tokens"] == 49
    block = 3 * 2 * 197 * 512 * 512 + 4 * 197 * 197 * 512 + 2 * 197 * 512 * 512 + 4 * 197 * 512 * 2048
    assert flops["decoder_blocks"] == 8 * block == 10_551_181_312
    assert flops["total"] == 3 * 16 * flops["forward_per_image"]


def test_vision_counts_unchanged_by_the_stem_argument():
    assert counts.vision_step_flops("resnet20", 1)["forward_per_image"] == 81_102_080
    assert counts.vision_step_flops("resnet50", 1)["forward_per_image"] == 8_178_368_512


def test_gpt2_small_step_is_six_n_tokens_plus_attention():
    # GPT-2 small, B = 4, T = 256: the blocks' matrices 12 x (4 x 768^2 + 2 x 768 x 3072) and the
    # tied output projection 50,257 x 768 each see all 1,024 tokens (6 N x tokens), plus the
    # attention term 12 L T D per token (QK^T and AV, forward 4 T D, x 3).
    config = dict(counts.LM_MODELS["gpt2_small"])
    flops = counts.lm_step_flops(**config)
    n = 12 * (4 * 768 * 768 + 2 * 768 * 3072) + 50257 * 768
    assert n == 123_532_032
    tokens = 4 * 256
    assert flops["tokens"] == tokens
    assert flops["total"] == 6 * n * tokens + 12 * 12 * 256 * 768 * tokens == 787_971_833_856


def test_bert_base_step_runs_the_mlm_head_on_the_chosen_positions_only():
    # BERT-base MLM + NSP, B = 8, T = 128, M = 20 chosen positions: encoder 6 N_enc x tokens +
    # attention; MLM head (transform D^2 + tied decoder V D) on B M positions; pooler + NSP on B.
    config = dict(counts.LM_MODELS["bert_base"])
    flops = counts.lm_step_flops(**config)
    tokens = 8 * 128
    encoder = 6 * 12 * (4 * 768 * 768 + 2 * 768 * 3072) * tokens + 12 * 12 * 128 * 768 * tokens
    head = 6 * 8 * 20 * (768 * 768 + 30522 * 768) + 6 * 8 * (768 * 768 + 2 * 768)
    assert flops["total"] == encoder + head == 559_431_917_568
    # The stock all-position head adds 6 B (T - M) (D^2 + V D): 22 % more at these sizes.
    assert 0.21 < 6 * 8 * 108 * (768 * 768 + 30522 * 768) / flops["total"] < 0.23


def test_lm_step_flops_scale_with_batch_and_reject_an_unknown_family():
    config = dict(counts.LM_MODELS["gpt2_small"], batch_size=8)
    assert counts.lm_step_flops(**config)["total"] == 2 * 787_971_833_856
    try:
        counts.lm_step_flops(**dict(config, family="t5"))
    except ValueError as exc:
        assert "t5" in str(exc)
    else:
        raise AssertionError("an unknown family must raise")


def test_vit_b16_forward_is_timms_17_6_gmacs():
    # timm's model table lists vit_base_patch16_224 at 17.6 GMACs (2 FLOPs each) and resnet50 at 4.1.
    vit = counts.vision_step_flops("vit_b16", 1)["forward_per_image"]
    assert 17.5e9 < vit / 2 < 17.7e9
    assert 4.0e9 < counts.vision_step_flops("resnet50", 1)["forward_per_image"] / 2 < 4.2e9


def test_gpu_step_flops_and_report():
    from benchmarks import cli, report
    from benchmarks.families import gpu

    args = cli.build_parser().parse_args(["gpu"])
    vit, gpt = (cli.model_settings(gpu, args, model) for model in ("vit_b16", "gpt2_small"))
    total = gpu.step_flops(vit)["total"]
    assert total == counts.vision_step_flops("vit_b16", 128)["total"]
    gpt_config = dict(counts.LM_MODELS["gpt2_small"], batch_size=16, sequence_length=1024)
    assert gpu.step_flops(gpt)["total"] == counts.lm_step_flops(**gpt_config)["total"]
    # MFU and the ratio to the reference, from two made-up runs of 10 and 20 steps/s, against 1000 TFLOP/s.
    entry = cli.new_entry(gpu, vit)
    entry["results"] = {run: {"step": {"steps_per_s": {"median": rate, "min": rate, "max": rate}}}
                        for run, rate in (("torch_reference", 10.0), ("jax", 20.0))}
    entry["results"]["torch"] = {"run": "torch", "error": "boom"}
    report.derive(entry, 1e6)
    jax = entry["results"]["jax"]
    assert jax["ratio_to_reference"] == jax["bare_ratio_to_reference"] == 2.0
    assert abs(jax["mfu"] - 20 * total / 1e15) < 1e-12
    assert jax["items_per_s"] == 20 * 128
    table = report.model_table("vit_b16", entry, 1e6)
    assert "| keras/jax " in table and "FAILED: boom" in table and " 2.00 " in table


def test_densecl_step_adds_the_dense_head_correspondence_and_dense_logits_to_mocos():
    flops = counts.ssl_step_flops("densecl", 128)
    moco = counts.ssl_step_flops("moco_v2", 128)["total"]
    head = 16 * (2 * 512 * 2048 + 2 * 2048 * 128)  # the 1x1 convs on the 4 x 4 map of a 32 x 32 image
    correspondence = 128 * 2 * 16 * 16 * 512
    dense_logits = 2 * (128 * 16) * 128 * 4097
    assert flops["total"] == moco + 4 * 128 * head + correspondence + 2 * dense_logits


def test_swav_step_counts_every_crop_at_its_size_and_the_queue_scores():
    # The CIFAR ResNet-18 on a 14 x 14 crop: stem and stage 1 at 14, stages 2-4 at 7, 4, 2 (3x3 convs, padding 1).
    def later(s, c):
        return 2 * s * s * (c * c // 2 * 9 + 3 * c * c * 9 + c * c // 2)

    small = 2 * 14 * 14 * 64 * 27 + 4 * 2 * 14 * 14 * 64 * 64 * 9 + later(7, 128) + later(4, 256) + later(2, 512)
    flops = counts.ssl_step_flops("swav", 32)
    assert flops["backbone_forward_per_crop"] == {32: 1_110_835_200, 14: small}
    head = 2 * 512 * 2048 + 2 * 2048 * 128 + 2 * 128 * 3000  # projector + prototypes, per crop
    queue = 2 * (2 * 3840 * 128 * 3000)  # each assignment crop's 3840 past features against the prototypes
    assert flops["total"] == 3 * 32 * (2 * 1_110_835_200 + 6 * small) + 3 * 32 * 8 * head + queue
    assert counts.swav_queue_length(32) == 3840 and counts.swav_queue_length(100) == 3900  # a multiple of B


def test_beit_step_by_hand_for_a_tiny_config():
    # 32x32 images, patch 8 (N = 16, T = 17), 2 layers x 16, MLP 32, |V| = 10, B = 2.
    flops = counts.beit_step_flops(2, image_size=32, patch_size=8, num_layers=2, hidden_dim=16, mlp_dim=32,
                                   vocabulary_size=10)
    patch = 2 * 16 * (8 * 8 * 3) * 16
    block = 3 * 2 * 17 * 16 * 16 + 2 * 2 * 17 * 17 * 16 + 2 * 17 * 16 * 16 + 2 * 2 * 17 * 16 * 32
    head = 2 * 16 * 16 * 10  # the MIM head on every patch
    assert flops["forward_per_image"] == patch + 2 * block + head == 279_680
    assert flops["total"] == 3 * 2 * (patch + 2 * block + head)
    beit = counts.mim_step_flops("beit_s16", 8)
    assert beit["head"] == 2 * 196 * 384 * 8192 and beit["total"] == 3 * 8 * beit["forward_per_image"]


def test_igpt_step_by_hand_for_a_tiny_config():
    # 4x4 pixels (n = 16), 2 layers x 8, MLP 32, a 6-colour palette (untied head to 6 logits), B = 3.
    flops = counts.igpt_step_flops(3, palette_size=6, resolution=4, num_layers=2, hidden_dim=8, intermediate_dim=32)
    per_token = 2 * (2 * (4 * 8 * 8 + 2 * 8 * 32) + 2 * (2 * 16 * 8)) + 2 * 8 * 6
    assert flops["tokens"] == 48
    assert flops["total"] == 3 * 48 * per_token == 603_648
    igpt = counts.mim_step_flops("igpt_8x256", 2)
    assert igpt["tokens"] == 2 * 1024 and igpt["head_forward"] == 2 * 2048 * 256 * 512
