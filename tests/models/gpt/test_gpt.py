"""GPT-1/2 backbone and causal LM: parameter counts, initialisation, cache, generation, save/load, fit."""

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.data.char_text import SAMPLE_TEXT, CharTokenizer, RandomWindows, split_ids
from keras_paperzoo.models.gpt.gpt_backbone import GPTBackbone, gpt_parameter_count
from keras_paperzoo.models.gpt.gpt_causal_lm import GPTCausalLM, paper_optimizer
from keras_paperzoo.models.gpt.gpt_presets import GPT_PRESETS
from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model

TOKENIZER = CharTokenizer.from_text(SAMPLE_TEXT)
V = TOKENIZER.vocabulary_size()
IDS = np.random.default_rng(0).integers(0, V, (3, 12)).astype("int32")


def np_(x):
    return np.asarray(ops.convert_to_numpy(x))


def tiny_backbone(**overrides):
    args = dict(vocabulary_size=V, num_layers=2, hidden_dim=32, num_heads=4, intermediate_dim=64,
                max_sequence_length=16, dropout=0.0)
    args.update(overrides)
    return GPTBackbone(**args)


@pytest.fixture(scope="module")
def lm():
    return GPTCausalLM(tiny_backbone(), tokenizer=TOKENIZER)


@pytest.fixture(scope="module")
def lm_post_norm():
    return GPTCausalLM(tiny_backbone(norm_first=False))


# --- sizes -----------------------------------------------------------------------------

# The released models' exact counts: transformers.OpenAIGPTModel(OpenAIGPTConfig()) and
# GPT2Model(GPT2Config(...)) built without download (checked when these presets were
# written; the tiny configs below are checked against transformers on every run).
# The GPT-2 paper's Table 2 says 117M / 345M / 762M / 1542M: its column is known not to
# be the released models' count (the smallest copies GPT-1's 117M, whose vocabulary
# and context are smaller); with 50,257 tokens, 1024 positions and a tied output these are:
RELEASED_COUNTS = {
    "gpt1": 116_534_784,
    "gpt2_small": 124_439_808,
    "gpt2_medium": 354_823_168,
    "gpt2_large": 774_030_080,
    "gpt2_xl": 1_557_611_200,
}
PAPER_TABLE_2 = {"gpt2_small": 117e6, "gpt2_medium": 345e6, "gpt2_large": 762e6, "gpt2_xl": 1542e6}


@pytest.mark.parametrize("name", sorted(RELEASED_COUNTS))
def test_preset_parameter_counts_match_the_released_models(name):
    config = GPT_PRESETS[name]["config"]
    count = gpt_parameter_count(**config)
    assert count == RELEASED_COUNTS[name]
    if name in PAPER_TABLE_2:  # the paper's rounded figures are within 6.5 % of the released ones
        assert abs(count - PAPER_TABLE_2[name]) / PAPER_TABLE_2[name] < 0.065


@pytest.mark.parametrize("norm_first", [True, False])
def test_parameter_formula_matches_built_backbones(norm_first, lm, lm_post_norm):
    model = (lm if norm_first else lm_post_norm).backbone
    assert model.count_params() == gpt_parameter_count(**model.get_config())
    assert (model.layer_norm is not None) == norm_first  # GPT-2's final LayerNorm only


def test_parameter_formula_matches_transformers():
    transformers = pytest.importorskip("transformers")
    gpt2 = transformers.GPT2Model(transformers.GPT2Config(n_embd=32, n_layer=2, n_head=4, vocab_size=99, n_positions=64))
    gpt1 = transformers.OpenAIGPTModel(
        transformers.OpenAIGPTConfig(n_embd=32, n_layer=2, n_head=4, vocab_size=99, n_positions=64)
    )
    common = dict(vocabulary_size=99, num_layers=2, hidden_dim=32, intermediate_dim=128, max_sequence_length=64)
    assert gpt_parameter_count(norm_first=True, **common) == sum(p.numel() for p in gpt2.parameters())
    assert gpt_parameter_count(norm_first=False, **common) == sum(p.numel() for p in gpt1.parameters())


def test_gpt1_and_gpt2_architecture_choices():
    gpt1, gpt2 = GPT_PRESETS["gpt1"]["config"], GPT_PRESETS["gpt2_small"]["config"]
    assert (gpt1["norm_first"], gpt1["max_sequence_length"], gpt1["vocabulary_size"]) == (False, 512, 40478)
    assert (gpt2["norm_first"], gpt2["max_sequence_length"], gpt2["vocabulary_size"]) == (True, 1024, 50257)
    shakespeare = GPT_PRESETS["gpt_char_shakespeare"]["config"]
    assert (shakespeare["num_layers"], shakespeare["hidden_dim"], shakespeare["num_heads"],
            shakespeare["max_sequence_length"], shakespeare["dropout"]) == (6, 384, 6, 256, 0.2)


def test_residual_projections_are_scaled_by_one_over_sqrt_2n_in_gpt2_only():
    def stds(backbone):
        block = backbone.transformer_layers[0]
        query = np_(block._self_attention_layer._query_dense.kernel).std()
        out = np_(block._self_attention_layer._output_dense.kernel).std()
        mlp_out = np_(block._feedforward_output_dense.kernel).std()
        return query, out, mlp_out

    layers = 8
    query, out, mlp_out = stds(tiny_backbone(hidden_dim=64, num_layers=layers, intermediate_dim=256))
    np.testing.assert_allclose(query, 0.02, rtol=0.05)  # N(0, 0.02^2), GPT-1 Sec. 4.1
    np.testing.assert_allclose([out, mlp_out], 0.02 / np.sqrt(2 * layers), rtol=0.08)  # GPT-2 Sec. 2.3
    query, out, mlp_out = stds(tiny_backbone(hidden_dim=64, num_layers=layers, intermediate_dim=256, norm_first=False))
    np.testing.assert_allclose([query, out, mlp_out], 0.02, rtol=0.08)


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(hidden_dim=30), "hidden_dim 30 should be divisible by num_heads 4"),
        (dict(dropout=1.0), "dropout must be in \\[0, 1\\)"),
        (dict(vocabulary_size=0), "vocabulary_size must be a positive int"),
        (dict(num_layers=2.0), "num_layers must be a positive int"),
    ],
)
def test_bad_arguments_name_the_value_and_the_rule(overrides, message):
    with pytest.raises(ValueError, match=message):
        tiny_backbone(**overrides)


def test_unknown_preset_lists_the_known_ones():
    with pytest.raises(ValueError, match="gpt2_small"):
        GPTBackbone.from_preset("gpt3")


# --- causality and the key/value cache ---------------------------------------------------


@pytest.mark.parametrize("which", ["lm", "lm_post_norm"])
def test_cached_decoding_matches_the_full_forward_pass(which, request):
    model = request.getfixturevalue(which)
    full = np_(model(IDS))  # (3, 12, V)
    cache = model.backbone.empty_cache(3, 12)
    logits, _, cache = model.call_with_cache(IDS[:, :5], cache, 0)  # the prompt at once
    steps = [np_(logits)]
    for i in range(5, 8):  # then one position at a time
        logits, _, cache = model.call_with_cache(IDS[:, i : i + 1], cache, i)
        steps.append(np_(logits))
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full[:, :8], atol=1e-5)


def test_outputs_are_causal(lm):
    changed = IDS.copy()
    changed[:, 7:] = (changed[:, 7:] + 1) % V
    np.testing.assert_allclose(np_(lm(changed))[:, :7], np_(lm(IDS))[:, :7], atol=1e-6)
    assert np.abs(np_(lm(changed))[:, 7:] - np_(lm(IDS))[:, 7:]).max() > 1e-4


# --- generation -----------------------------------------------------------------------------


def test_greedy_generation_is_the_argmax_rollout_of_the_full_model(lm):
    prompts = [[5, 9, 2], [7, 1, 3, 3, 8]]  # different lengths, right-padded inside
    out = lm.generate(prompts, max_length=9, sampler="greedy")
    expected = np.zeros((2, 9), "int32")  # fixed shape; causal, so padding after a row never matters
    lengths = [len(p) for p in prompts]
    for i, p in enumerate(prompts):
        expected[i, : len(p)] = p
    for _ in range(9 - min(lengths)):
        logits = np_(lm(expected))  # (2, 9, V)
        for i in range(2):
            if lengths[i] < 9:
                expected[i, lengths[i]] = logits[i, lengths[i] - 1].argmax()
                lengths[i] += 1
    assert out == expected.tolist()


@pytest.mark.parametrize("sampler", ["top_k", "top_p", "beam"])
def test_samplers_keep_the_prompt_and_fill_to_max_length(lm, sampler):
    out = lm.generate([[5, 9, 2], [7, 1]], max_length=8, sampler=sampler)
    assert [len(r) for r in out] == [8, 8]
    assert out[0][:3] == [5, 9, 2] and out[1][:2] == [7, 1]
    assert all(0 <= t < V for row in out for t in row)


def test_string_prompts_stop_tokens_and_strip_prompt(lm):
    text = lm.generate("Love is", max_length=12, sampler="greedy")
    assert isinstance(text, str) and text.startswith("Love is") and len(text) == 12
    ids = TOKENIZER.tokenize("Love is")
    first = lm.generate([ids], max_length=12, sampler="greedy")[0][len(ids)]
    stopped = lm.generate([ids], max_length=12, sampler="greedy", stop_token_ids=[first])[0]
    assert stopped == ids + [first]  # ends with the first stop token
    assert lm.generate([ids], max_length=12, sampler="greedy", strip_prompt=True)[0][0] == first


def test_generate_rejects_bad_lengths_and_strings_without_tokenizer(lm, lm_post_norm):
    with pytest.raises(ValueError, match="max_length 40 must be in"):
        lm.generate([[1, 2]], max_length=40)
    with pytest.raises(ValueError, match="Every prompt needs 1 to 7 tokens"):
        lm.generate([list(range(8))], max_length=8)
    with pytest.raises(ValueError, match="no tokenizer"):
        lm_post_norm.generate(["abc"], max_length=8)


# --- serialization and training ---------------------------------------------------------------


def test_config_roundtrip(lm):
    check_config_roundtrip(lm.backbone)
    clone = check_config_roundtrip(lm)
    assert clone.tokenizer.vocabulary == TOKENIZER.vocabulary


def test_save_and_load_keep_outputs_and_tokenizer(lm, tmp_path):
    loaded = check_saved_model(lm, IDS, tmp_path)
    assert loaded.tokenizer.vocabulary == TOKENIZER.vocabulary
    assert loaded.generate("Love", max_length=8, sampler="greedy") == lm.generate("Love", max_length=8, sampler="greedy")


def test_paper_optimizer_schedule_and_decay():
    opt = paper_optimizer(total_steps=100_000)
    schedule = opt._learning_rate
    lrs = [float(np_(schedule(s))) for s in (0, 1000, 2000, 51_000, 100_000)]
    np.testing.assert_allclose(lrs, [0.0, 1.25e-4, 2.5e-4, 1.25e-4, 0.0], atol=1e-9)  # warmup 2000, cosine to 0
    assert opt.weight_decay == 0.01 and opt.no_decay == "bias_and_norm"  # "non bias or gain weights"
    assert paper_optimizer(total_steps=100)._learning_rate.warmup_steps == 10  # short runs: a tenth


def test_compiled_loss_is_the_weighted_mean_token_cross_entropy():
    # compute_loss flattens (B, T, V) to (B T, V) (a faster layout on torch): the value must not change.
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(2, 5, 7)).astype("float32")
    targets = rng.integers(0, 7, size=(2, 5))
    weights = (rng.random((2, 5)) > 0.3).astype("float32")
    model = GPTCausalLM(tiny_backbone(vocabulary_size=7))
    model.compile()
    log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    token_loss = -np.take_along_axis(log_p, targets[..., None], -1)[..., 0]  # (B, T)
    got = np_(model.compute_loss(y=targets, y_pred=logits))
    np.testing.assert_allclose(got, token_loss.mean(), rtol=1e-5)
    got = np_(model.compute_loss(y=targets, y_pred=logits, sample_weight=weights))
    keras_3d = np_(keras.losses.SparseCategoricalCrossentropy(from_logits=True)(targets, logits, weights))
    np.testing.assert_allclose(got, keras_3d, rtol=1e-5)  # Keras's own reduction of the unflattened loss
    np.testing.assert_allclose(got, (token_loss * weights).sum() / weights.size, rtol=1e-5)


def test_fit_on_random_windows_lowers_the_loss():
    keras.utils.set_random_seed(0)
    model = GPTCausalLM(tiny_backbone(), tokenizer=TOKENIZER)
    train, _ = split_ids(TOKENIZER.encode(SAMPLE_TEXT))
    batches = RandomWindows(train, sequence_length=16, batch_size=16, seed=0, steps_per_epoch=10)
    model.compile(optimizer=keras.optimizers.Adam(3e-3))
    history = check_fit(model, batches, epochs=3, callbacks=[batches.epoch_callback()])
    losses = history.history["loss"]
    assert losses[0] < np.log(V) + 0.3  # starts near uniform over the characters
    assert losses[-1] < losses[0] - 0.3
