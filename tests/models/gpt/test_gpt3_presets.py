"""GPT-3 presets (Brown et al. 2020, Table 2.1) without building the models, and its optimizer (Appendix B)."""

import numpy as np
import pytest

from keras import ops

from keras_paperzoo.models.gpt import gpt3_optimizer
from keras_paperzoo.models.gpt.gpt_backbone import gpt_parameter_count
from keras_paperzoo.models.gpt.gpt_presets import GPT3_TABLE_2_1, GPT_PRESETS

# backend_free (tests/conftest.py): the preset tests are parameter arithmetic on config dicts, no Keras op.
backend_free = pytest.mark.backend_free("jax")

# gpt_parameter_count with 50,257 tokens, 2048 positions and the tied output embedding.
COUNTS = {
    "gpt3_small": 125_226_240,
    "gpt3_medium": 355_871_744,
    "gpt3_large": 760_300_032,
    "gpt3_xl": 1_315_723_264,
    "gpt3_2.7b": 2_651_553_280,
    "gpt3_6.7b": 6_658_404_352,
    "gpt3_13b": 12_853_386_240,
    "gpt3_175b": 174_604_259_328,
}


@backend_free
def test_there_are_the_eight_sizes_of_table_2_1():
    assert sorted(COUNTS) == sorted(GPT3_TABLE_2_1) == sorted(n for n in GPT_PRESETS if n.startswith("gpt3_"))


@backend_free
@pytest.mark.parametrize("name", sorted(COUNTS))
def test_parameter_counts_are_the_papers_within_its_rounding(name):
    printed = GPT3_TABLE_2_1[name][0]
    count = gpt_parameter_count(**GPT_PRESETS[name]["config"])
    assert count == COUNTS[name]
    # The table rounds loosely (350M for 355.9M, 2.7B for 2.65B, 175.0B for 174.6B): within 2 %.
    assert abs(count - printed) / printed < 0.02


@backend_free
@pytest.mark.parametrize("name", sorted(COUNTS))
def test_configs_follow_the_table(name):
    _, layers, d_model, heads, d_head, batch_tokens, learning_rate = GPT3_TABLE_2_1[name]
    config = GPT_PRESETS[name]["config"]
    assert (config["vocabulary_size"], config["max_sequence_length"], config["norm_first"]) == (50257, 2048, True)
    assert config["intermediate_dim"] == 4 * config["hidden_dim"]  # "always four times the bottleneck layer"
    assert config["num_layers"] == layers
    assert config["hidden_dim"] % config["num_heads"] == 0
    assert config["hidden_dim"] // config["num_heads"] == d_head  # the table's d_head, XL and 13B included
    if name == "gpt3_xl":  # 24 heads x 128 != 2048: d_head kept, 16 heads
        assert (config["hidden_dim"], config["num_heads"]) == (d_model, 16) and heads == 24
    elif name == "gpt3_13b":  # 5140 is not 40 x 128: 5120
        assert (config["hidden_dim"], config["num_heads"]) == (5120, heads) and d_model == 5140
    else:
        assert (config["hidden_dim"], config["num_heads"]) == (d_model, heads) and d_model == heads * d_head
    training = {"batch_size_tokens": int(batch_tokens), "peak_learning_rate": learning_rate}
    assert GPT_PRESETS[name]["training"] == training


@backend_free
def test_the_175b_model_is_the_papers_and_the_schedule_shrinks_with_size():
    config = GPT_PRESETS["gpt3_175b"]["config"]
    assert (config["num_layers"], config["hidden_dim"], config["num_heads"]) == (96, 12288, 96)
    assert GPT_PRESETS["gpt3_175b"]["training"] == {"batch_size_tokens": 3_200_000, "peak_learning_rate": 0.6e-4}
    rates = [GPT3_TABLE_2_1[n][6] for n in GPT3_TABLE_2_1]
    batches = [GPT3_TABLE_2_1[n][5] for n in GPT3_TABLE_2_1]
    assert rates == sorted(rates, reverse=True) and batches == sorted(batches)


def test_gpt3_optimizer_is_appendix_b_with_table_2_1s_rate():
    optimizer = gpt3_optimizer("gpt3_small")  # 300B tokens in batches of 0.5M: 600k updates
    schedule = optimizer._learning_rate  # the schedule (`learning_rate` is its current value)
    assert (schedule.warmup_steps, schedule.total_steps) == (750, 520_000)  # 375M and 260B tokens / 0.5M
    rate = lambda step: float(ops.convert_to_numpy(schedule(step)))  # noqa: E731
    np.testing.assert_allclose([rate(375), rate(750), rate((750 + 520_000) / 2), rate(520_000), rate(600_000)],
                               [3e-4, 6e-4, 0.55 * 6e-4, 6e-5, 6e-5], rtol=1e-4)  # cosine to 10 %, then flat
    assert (optimizer.beta_1, optimizer.beta_2, optimizer.epsilon) == (0.9, 0.95, 1e-8)
    assert (optimizer.global_clipnorm, optimizer.weight_decay) == (1.0, 0.1)
    short = gpt3_optimizer("gpt3_175b", total_steps=3000)._learning_rate
    assert (short.warmup_steps, short.total_steps, short.peak_learning_rate) == (4, 2600, 0.6e-4)
    with pytest.raises(ValueError, match="gpt3_optimizer needs a GPT-3 preset; got 'gpt2_small'"):
        gpt3_optimizer("gpt2_small")
    with pytest.raises(ValueError, match="total_steps must be a positive int"):
        gpt3_optimizer("gpt3_small", total_steps=0)
