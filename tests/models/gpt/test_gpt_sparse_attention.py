"""GPT-3's alternating dense / locally banded attention (Brown et al. 2020, Sec. 2.1) on GPTBackbone."""

import numpy as np
import pytest

from keras import ops

from keras_paperzoo.evaluation.few_shot import choice_log_likelihoods
from keras_paperzoo.models.gpt.gpt_backbone import GPTBackbone, LocalBandMask, banded_layers
from keras_paperzoo.models.gpt.gpt_causal_lm import GPTCausalLM
from keras_paperzoo.models.gpt.gpt_presets import GPT_PRESETS
from tests.model_checks import check_config_roundtrip, check_saved_model

LENGTH = 12


def tiny(num_layers=1, **kwargs):
    return GPTBackbone(vocabulary_size=20, num_layers=num_layers, hidden_dim=16, num_heads=2, intermediate_dim=32,
                       max_sequence_length=16, dropout=0.0, **kwargs)


def ids(seed):
    return np.random.default_rng(seed).integers(1, 20, (1, LENGTH)).astype("int32")


def changed_positions(backbone, position):
    """Positions t whose output changes when the token at `position` is replaced."""
    x = ids(0)
    y = x.copy()
    y[0, position] = (y[0, position] % 19) + 1  # another token
    a, b = (ops.convert_to_numpy(backbone.predict_on_batch(v))[0] for v in (x, y))  # (T, D)
    return [t for t in range(LENGTH) if not np.allclose(a[t], b[t], atol=1e-6)]


def test_the_band_mask_is_the_window_and_follows_the_cache_index():
    mask = ops.convert_to_numpy(LocalBandMask(3)(np.zeros((2, 5, 4), "float32")))  # (B, T, T)
    t, j = np.arange(5)[:, None], np.arange(5)[None, :]
    np.testing.assert_array_equal(mask[1], (t - j < 3).astype("int32"))
    step = ops.convert_to_numpy(LocalBandMask(3)(np.zeros((1, 1, 4), "float32"), start_index=6, key_length=10))
    np.testing.assert_array_equal(step[0, 0], [0, 0, 0, 0, 1, 1, 1, 1, 1, 1])  # with the causal mask: 4, 5, 6
    assert banded_layers("alternating_banded", 5) == [1, 3] and banded_layers("banded", 2) == [0, 1]
    assert banded_layers("dense", 4) == []


def test_banded_logits_at_t_ignore_perturbed_tokens_before_t_minus_w_plus_1():
    lm = GPTCausalLM(tiny(num_layers=1, attention_pattern="banded", local_window=4))  # every layer banded, w = 4
    x, t = ids(1), 10
    before = x.copy()
    before[0, : t - 4 + 1] = (x[0, : t - 4 + 1] % 19) + 1  # every token before t - w + 1 replaced
    inside = x.copy()
    inside[0, t - 4 + 1] = (x[0, t - 4 + 1] % 19) + 1  # the first token of the band replaced
    a, b, c = (ops.convert_to_numpy(lm.predict_on_batch(v))[0, t] for v in (x, before, inside))  # (V,) logits at t
    np.testing.assert_allclose(a, b, atol=1e-5)
    assert np.abs(a - c).max() > 1e-4


def test_stacked_bands_widen_the_receptive_field_and_dense_blocks_see_everything():
    # Two banded layers, w = 3: a token at position 2 reaches t = 2 .. 2 + 2 (w - 1).
    assert changed_positions(tiny(num_layers=2, attention_pattern="banded", local_window=3), 2) == [2, 3, 4, 5, 6]
    # Alternating (block 0 dense, block 1 banded): every later position sees it.
    alternating = tiny(num_layers=2, attention_pattern="alternating_banded", local_window=3)
    assert changed_positions(alternating, 2) == list(range(2, LENGTH))


def test_the_key_value_cache_keeps_the_band():
    # The prompt into the cache at 0, the continuations from index P (few_shot's cached scoring), against full rows.
    lm = GPTCausalLM(tiny(num_layers=2, attention_pattern="banded", local_window=3))
    prompt, continuations = ids(3)[0, :7].tolist(), [[3, 4, 5, 6, 7], [8], [9, 10]]
    cached = choice_log_likelihoods(lm, prompt, continuations, use_cache=True)
    np.testing.assert_allclose(cached, choice_log_likelihoods(lm, prompt, continuations, use_cache=False), atol=1e-4)


def test_a_mixed_model_round_trips_its_config_and_saves(tmp_path):
    lm = GPTCausalLM(tiny(num_layers=2, attention_pattern="alternating_banded", local_window=3))
    clone = check_config_roundtrip(lm.backbone)
    assert (clone.attention_pattern, clone.local_window, clone.banded_layers) == ("alternating_banded", 3, [1])
    loaded = check_saved_model(lm, ids(4), tmp_path, atol=1e-5)
    assert loaded.backbone.attention_pattern == "alternating_banded" and loaded.backbone.local_window == 3
    assert tiny().get_config()["attention_pattern"] == "dense" and tiny().get_config()["local_window"] is None


def test_gpt3_presets_stay_dense_and_take_the_pattern_as_an_option():
    for name in (n for n in GPT_PRESETS if n.startswith("gpt3_")):
        assert GPT_PRESETS[name]["config"].get("attention_pattern", "dense") == "dense"
    small = dict(vocabulary_size=20, num_layers=2, hidden_dim=16, num_heads=2, intermediate_dim=32,
                 max_sequence_length=16)
    backbone = GPTBackbone.from_preset("gpt3_small", attention_pattern="alternating_banded", local_window=8, **small)
    assert backbone.banded_layers == [1] and backbone.count_params() == tiny(num_layers=2).count_params()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(attention_pattern="strided"), "attention_pattern must be one of dense, alternating_banded, banded; "
                                            "got attention_pattern='strided'"),
        (dict(local_window=4), "local_window is the band width of a banded attention_pattern; got local_window=4"),
        (dict(attention_pattern="banded"), "local_window must be a positive int; got local_window=None"),
        (dict(attention_pattern="banded", local_window=2, causal=False), "is a causal band; it needs causal=True"),
    ],
)
def test_bad_attention_settings_name_the_value_and_the_rule(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tiny(**kwargs)
