"""Transformer (Vaswani et al. 2017): sizes, embeddings, masks, loss, schedule, decoding, save, fit."""

import itertools
import math

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.models.transformer.transformer_backbone import TransformerBackbone, transformer_parameter_count
from keras_paperzoo.models.transformer.transformer_decoding import beam_search, greedy_search, length_penalty
from keras_paperzoo.models.transformer.transformer_presets import TRANSFORMER_PRESETS
from keras_paperzoo.models.transformer.transformer_tokenizer import join_pieces, learn_vocabulary, make_tokenizer
from keras_paperzoo.models.transformer.transformer_translator import TransformerTranslator
from keras_paperzoo.losses import label_smoothed_cross_entropy
from keras_paperzoo.training.schedules import NoamSchedule
from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model

TINY = dict(num_layers=2, hidden_dim=32, intermediate_dim=64, num_heads=4, dropout=0.0)
RNG = np.random.default_rng(0)


def np_(x):
    return np.asarray(ops.convert_to_numpy(x))


@pytest.fixture(scope="module")
def backbone():
    keras.utils.set_random_seed(0)
    return TransformerBackbone(vocabulary_size=20, **TINY)


def run(backbone, src, dec):
    out = backbone({"encoder_token_ids": np.asarray(src, "int32"), "decoder_token_ids": np.asarray(dec, "int32")})
    return np_(out["decoder_sequence_output"])


# --- sizes ------------------------------------------------------------------------------


def test_parameter_counts_match_the_formula_and_the_paper(backbone):
    tiny = backbone
    assert tiny.count_params() == transformer_parameter_count(**tiny.get_config()) == 43_392
    separate = TransformerBackbone(vocabulary_size=20, source_vocabulary_size=30, **TINY)
    assert separate.count_params() == transformer_parameter_count(**separate.get_config()) == 43_392 + 30 * 32
    with keras.device("cpu"):
        base = TransformerBackbone.from_preset("transformer_base")
    # Paper (Table 3): 65M base, 213M big, at a ~37k shared BPE vocabulary.
    assert base.count_params() == transformer_parameter_count(**TRANSFORMER_PRESETS["transformer_base"]["config"])
    assert base.count_params() == 63_082_496  # 3 % under 65M (the paper's count is rounded and its vocab approximate)
    big = transformer_parameter_count(**TRANSFORMER_PRESETS["transformer_big"]["config"])
    assert big == 214_245_376  # 0.6 % over 213M
    assert abs(base.count_params() / 65e6 - 1) < 0.05 and abs(big / 213e6 - 1) < 0.01


def test_arguments_are_validated_with_the_value_and_the_rule():
    with pytest.raises(ValueError, match="hidden_dim 30 should be divisible by num_heads 4"):
        TransformerBackbone(vocabulary_size=20, num_layers=1, hidden_dim=30, intermediate_dim=8, num_heads=4)
    with pytest.raises(ValueError, match="dropout must be in"):
        TransformerBackbone(vocabulary_size=20, num_layers=1, hidden_dim=8, intermediate_dim=8, num_heads=2, dropout=1.5)
    with pytest.raises(ValueError, match="num_layers must be"):
        TransformerBackbone(vocabulary_size=20, num_layers=0)
    with pytest.raises(ValueError, match="Unknown TransformerBackbone preset 'nope'"):
        TransformerBackbone.from_preset("nope")


# --- embeddings and masks ---------------------------------------------------------------


def test_embeddings_are_scaled_by_sqrt_d_model_plus_the_sinusoids(backbone):
    ids = np.array([[5, 7, 9, 11]], "int32")
    x = np_(backbone.embed(ids, training=False))  # (1, 4, 32)
    table = np_(backbone.token_embedding.embeddings)
    pos = np.arange(4)[:, None]
    i = np.arange(16)[None, :]
    angle = pos / 10000 ** (2 * i / 32)
    pe = np.zeros((4, 32))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)  # PE(pos, 2i), PE(pos, 2i+1), Sec. 3.5
    np.testing.assert_allclose(x[0], table[ids[0]] * math.sqrt(32) + pe, atol=1e-5)
    # Shared table: the encoder embeds with the same one (Sec. 3.4).
    np.testing.assert_allclose(np_(backbone.embed(ids, source=True, training=False)), x, atol=1e-6)


SRC = np.pad(RNG.integers(4, 20, (2, 5)), ((0, 0), (0, 3))).astype("int32")  # (2, 8): 5 tokens, 3 padding
DEC = np.pad(RNG.integers(4, 20, (2, 4)), ((0, 0), (0, 2))).astype("int32")  # (2, 6): 4 tokens, 2 padding


def test_padding_and_future_tokens_are_never_attended(backbone):
    out = run(backbone, SRC, DEC)[:, :4]
    # Less padding after the source, or after the target, changes no real position.
    np.testing.assert_allclose(run(backbone, SRC[:, :5], DEC)[:, :4], out, atol=1e-5)
    np.testing.assert_allclose(run(backbone, SRC, DEC[:, :4]), out, atol=1e-5)
    # Changing the last target token changes only the last position (causal mask).
    changed = DEC.copy()
    changed[:, 3] = (changed[:, 3] - 3) % 16 + 4
    new = run(backbone, SRC, changed)[:, :4]
    np.testing.assert_allclose(new[:, :3], out[:, :3], atol=1e-5)
    assert np.abs(new[:, 3] - out[:, 3]).max() > 1e-3
    # Changing the first source token changes every target position (encoder-decoder attention).
    changed = SRC.copy()
    changed[:, 0] = (changed[:, 0] - 3) % 16 + 4
    assert np.abs(run(backbone, changed, DEC)[:, :4] - out).max(axis=-1).min() > 1e-4


# --- objective and schedule -------------------------------------------------------------


def test_label_smoothed_loss_matches_numpy_and_ignores_padding():
    logits = RNG.normal(size=(2, 3, 7)).astype("float32")
    labels = np.array([[4, 5, 0], [3, 0, 0]], "int32")
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    target = np.full((2, 3, 7), 0.1 / 7)
    target[np.arange(2)[:, None], np.arange(3)[None, :], labels] += 0.9
    per_token = -(target * logp).sum(-1)
    expected = per_token[labels != 0].mean()
    np.testing.assert_allclose(np_(label_smoothed_cross_entropy(labels, logits, 0.1)), expected, rtol=1e-5)
    plain = -logp[np.arange(2)[:, None], np.arange(3)[None, :], labels][labels != 0].mean()
    np.testing.assert_allclose(np_(label_smoothed_cross_entropy(labels, logits, 0.0)), plain, rtol=1e-5)


def test_noam_schedule_is_equation_3():
    schedule = NoamSchedule(512, warmup_steps=4000)
    rate = lambda step: float(np_(schedule(step - 1)))  # optimizer iterations count from 0
    for step in (1, 100, 4000, 10000, 100000):
        assert rate(step) == pytest.approx(512**-0.5 * min(step**-0.5, step * 4000**-1.5), rel=1e-5)
    assert rate(4000) == pytest.approx(6.9877e-4, rel=1e-4)  # the peak
    with pytest.raises(ValueError, match="warmup_steps must be a positive int"):
        NoamSchedule(512, warmup_steps=0)


def test_compile_gives_the_papers_optimizer(backbone):
    translator = TransformerTranslator(backbone)
    translator.compile()
    opt = translator.optimizer
    assert isinstance(opt, keras.optimizers.Adam)
    assert (opt.beta_1, opt.beta_2, opt.epsilon) == (0.9, 0.98, 1e-9)
    assert isinstance(opt._learning_rate, NoamSchedule) and opt._learning_rate.warmup_steps == 4000
    assert opt._learning_rate.d_model == 32 and translator.label_smoothing == 0.1
    with pytest.raises(ValueError, match="takes no loss"):
        translator.compile(loss="mse")
    with pytest.raises(ValueError, match="end_token_id must be a non-padding id"):
        TransformerTranslator(backbone, end_token_id=0)


# --- decoding ---------------------------------------------------------------------------


def full_log_probs(backbone, src, dec):
    """Log-probabilities of the next token after each prefix, from the uncached full model."""
    states = backbone({"encoder_token_ids": src, "decoder_token_ids": dec})["decoder_sequence_output"]
    logits = np_(backbone.logits(states))
    return logits - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1, keepdims=True)) - logits.max(-1, keepdims=True)


def test_cached_greedy_decoding_equals_uncached_argmax(backbone):
    out = greedy_search(backbone, SRC, start_token_id=2, end_token_id=3, max_length=5)
    # Reference: the full model on the whole prefix at every step, one (2, 6) shape
    # (positions after the prefix are padding, which the causal mask hides anyway).
    dec = np.zeros((2, 6), "int32")
    dec[:, 0] = 2
    for t in range(5):
        logp = full_log_probs(backbone, SRC, dec)[:, t]
        logp[:, [0, 2]] = -np.inf  # padding and start are never outputs
        dec[:, t + 1] = logp.argmax(-1)
    expected = dec[:, 1:]
    for row, ref in zip(out, expected):  # equal up to and including the first end token
        stop = list(ref).index(3) + 1 if 3 in ref else len(ref)
        np.testing.assert_array_equal(row[:stop], ref[:stop])
        assert (row[stop:] == 0).all()


def test_beam_search_with_a_wide_beam_finds_the_exhaustive_best():
    # Vocabulary [pad, unk, start, end, a, b]: outputs are unk, a, b or end. With beam 27
    # and at most 3 tokens nothing is pruned, so beam search must return the finished
    # hypothesis with the best log P / lp over all 1 + 3 + 9 of them (Sec. 6.1, GNMT lp).
    keras.utils.set_random_seed(1)
    small = TransformerBackbone(vocabulary_size=6, **{**TINY, "num_layers": 1})
    src = RNG.integers(4, 6, (2, 4)).astype("int32")
    words = [1, 4, 5]
    hypotheses = [list(p) + [3] for n in range(3) for p in itertools.product(words, repeat=n)]
    dec = np.array([[2] + h + [0] * (3 - len(h)) for h in hypotheses], "int32")  # (13, 4)
    for b in range(2):
        logp = full_log_probs(small, np.repeat(src[b : b + 1], len(dec), 0), dec)
        scores = [
            sum(logp[j, t, tok] for t, tok in enumerate(h)) / length_penalty(len(h), 0.6)
            for j, h in enumerate(hypotheses)
        ]
        best = hypotheses[int(np.argmax(scores))]
        found = beam_search(small, src[b : b + 1], 2, 3, beam_size=27, alpha=0.6, max_length=3)[0]
        np.testing.assert_array_equal(found[: len(best)], best)
    assert length_penalty(1, 0.6) == 1.0 and length_penalty(7, 0.6) == pytest.approx(2 ** 0.6)


def test_beam_search_of_four_returns_finished_or_full_length_ids(backbone):
    out = beam_search(backbone, SRC, 2, 3, beam_size=4, alpha=0.6, max_length=5)
    assert out.shape == (2, 5) and out.dtype == np.int32
    for row in out:
        assert 0 not in row[: list(row).index(3)] if 3 in row else 0 not in row


# --- the translator: tokenizer, config, save, fit --------------------------------------

SENTENCES = ["Ein Hund läuft im Park.", "A dog runs in the park.", "Zwei Kinder spielen.", "Two children play."]


@pytest.fixture(scope="module")
def translator():
    vocabulary = learn_vocabulary(SENTENCES * 5, 60)
    keras.utils.set_random_seed(0)
    model = TransformerTranslator(
        TransformerBackbone(vocabulary_size=len(vocabulary), **TINY), tokenizer=make_tokenizer(vocabulary)
    )
    model.compile(warmup_steps=10)
    return model


def test_join_pieces_undoes_the_tokenizer_spacing():
    assert join_pieces("a dog , don ' t run ( fast ) !") == "a dog, don't run (fast)!"
    # 13a keeps intra-word hyphens: "t - shirt" must become the reference's one token.
    assert join_pieces("a man in a t - shirt and a four - wheeler .") == "a man in a t-shirt and a four-wheeler."


@pytest.mark.needs_tensorflow
def test_translate_fit_config_and_save(translator, tmp_path):
    from keras_paperzoo.models.transformer.transformer_tokenizer import texts_to_ids

    src = texts_to_ids(translator.tokenizer, SENTENCES[0::2] * 4)  # (8, S) with the end token
    tgt = texts_to_ids(translator.tokenizer, SENTENCES[1::2] * 4)
    dec_in = np.concatenate([np.full((8, 1), 2), tgt[:, :-1]], 1).astype("int32")
    x = {"encoder_token_ids": src, "decoder_token_ids": dec_in}
    history = check_fit(translator, x, tgt, epochs=2, batch_size=4)
    assert history.history["loss"][-1] < history.history["loss"][0]
    texts = translator.translate(SENTENCES[:2], beam_size=1, max_length=4)
    assert len(texts) == 2 and all(isinstance(t, str) for t in texts)
    check_config_roundtrip(translator.backbone)
    check_config_roundtrip(translator)
    loaded = check_saved_model(translator, x, tmp_path)
    assert loaded.tokenizer.get_vocabulary() == translator.tokenizer.get_vocabulary()
    assert loaded.translate(SENTENCES[:2], beam_size=1, max_length=4) == texts
