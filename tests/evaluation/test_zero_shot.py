"""GPT-2's zero-shot tasks (Radford et al. 2019, Sec. 3): LAMBADA, TL;DR summaries, translation prompts, ROUGE."""

import numpy as np
import pytest

import keras

from keras_paperzoo.data.char_text import CharTokenizer
from keras_paperzoo.evaluation import corpus_bleu
from keras_paperzoo.evaluation.zero_shot import (
    corpus_rouge,
    first_sentences,
    lambada_accuracy,
    lambada_split,
    rouge_l,
    rouge_n,
    summarize_tldr,
    tldr_prompt,
    translate_prompt,
    translation_prompt,
)
from keras_paperzoo.models.gpt.gpt_backbone import GPTBackbone
from keras_paperzoo.models.gpt.gpt_causal_lm import GPTCausalLM

TOKENIZER = CharTokenizer("\n .;:=TLDRabcdefghijklmnopqrstuvwxyz")
CONTEXT = 48
backend_free = pytest.mark.backend_free("jax")


def log_softmax(x):
    x = np.asarray(x, "float64")
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def bigram_lm(next_of):
    """A causal LM whose logits at a position depend only on its token: table[token] (V,), set by hand.

    `next_of`: {character: [(next character, logit), ...]}; every other logit is 0.
    """
    size = TOKENIZER.vocabulary_size()
    table = np.zeros((size, size), "float32")
    for current, options in next_of.items():
        for following, logit in options:
            table[TOKENIZER.tokenize(current)[0], TOKENIZER.tokenize(following)[0]] = logit
    model = keras.Sequential([keras.Input((None,), dtype="int32"), keras.layers.Embedding(size, size)])
    model.set_weights([table])
    return model, log_softmax(table)


@pytest.fixture(scope="module")
def lm():
    backbone = GPTBackbone(vocabulary_size=TOKENIZER.vocabulary_size(), num_layers=1, hidden_dim=16, num_heads=2,
                           intermediate_dim=32, max_sequence_length=CONTEXT, dropout=0.0)
    return GPTCausalLM(backbone, tokenizer=TOKENIZER)


def plain_logits(lm, ids):
    row = np.zeros((1, CONTEXT), "int32")
    row[0, : len(ids)] = ids
    return np.asarray(lm.predict_on_batch(row))[0]  # (CONTEXT, V)


def greedy_reference(lm, prompt, steps):
    """Greedy continuation by plain forward passes of the row padded to the context."""
    ids = TOKENIZER.tokenize(prompt)
    for _ in range(steps):
        ids = ids + [int(np.argmax(plain_logits(lm, ids)[len(ids) - 1]))]
    return TOKENIZER.detokenize(ids[-steps:])


# --- prompts (no model) ---------------------------------------------------------------------------

@backend_free
def test_prompts_are_the_papers_strings():
    assert tldr_prompt("A dog ran. It sat.") == "A dog ran. It sat.\nTL;DR:"
    pairs = [("a dog", "un chien"), ("the cat", "le chat")]
    assert translation_prompt("a house", pairs) == "a dog = un chien\nthe cat = le chat\na house ="
    assert translation_prompt("a house", []) == "a house ="
    assert lambada_split("he turned to look at the door \n") == ("he turned to look at the", "door")
    assert first_sentences("One. Two! Three? Four.", 3) == "One. Two! Three?"
    assert first_sentences(" a b\n\nc d. e", 3) == "a b c d. e"


@backend_free
def test_rouge_equals_hand_computed_values():
    # Unigrams: 5 of 6 shared both ways; bigrams "the cat", "on the", "the mat": 3 of 5; LCS "the cat on the mat": 5.
    assert rouge_n("the cat sat on the mat", "the cat lay on the mat", 1) == pytest.approx(5 / 6)
    assert rouge_n("the cat sat on the mat", "the cat lay on the mat", 2) == pytest.approx(3 / 5)
    assert rouge_l("the cat sat on the mat", "the cat lay on the mat") == pytest.approx(5 / 6)
    # Case and punctuation are ignored; P = 4/4, R = 4/6 -> F1 0.8; bigrams 1/3, 1/5 -> 0.25; LCS "the gunman" 2/4, 2/6.
    hyp, ref = "Police killed the gunman.", "The gunman was killed by police."
    assert rouge_n(hyp, ref, 1) == pytest.approx(0.8)
    assert rouge_n(hyp, ref, 2) == pytest.approx(0.25)
    assert rouge_l(hyp, ref) == pytest.approx(0.4)
    assert rouge_n("the the the", "the cat", 1) == pytest.approx(0.4)  # clipped: 1 of 3, 1 of 2
    assert rouge_n("a b", "c d", 1) == 0.0 and rouge_l("", "c d") == 0.0
    scores = corpus_rouge(["the cat sat on the mat", hyp], ["the cat lay on the mat", ref])
    expected = {"rouge1": 50 * (5 / 6 + 0.8), "rouge2": 50 * (0.6 + 0.25), "rougeL": 50 * (5 / 6 + 0.4)}
    for key, value in expected.items():
        assert scores[key] == pytest.approx(value)
    assert scores["rouge_avg"] == pytest.approx(np.mean(list(expected.values())))


# --- LAMBADA with a bigram model whose logits are set by hand ---------------------------------------

def test_lambada_accuracy_and_perplexity_of_a_known_model():
    model, logp = bigram_lm({"b": [(" ", 5.0)], " ": [("c", 5.0)], "c": [("d", 5.0)], "d": [(".", 5.0)]})
    texts = ["ab cd", "ab ce", "xb cd"]  # greedy after "?b": " cd." -> right, wrong, right
    result = lambada_accuracy(model, TOKENIZER, texts, context_length=CONTEXT)
    assert [r["prediction"] for r in result["records"]] == ["cd"] * 3
    assert [r["correct_unfiltered"] for r in result["records"]] == [True, False, True]
    assert result["accuracy"] == result["accuracy_unfiltered"] == result["accuracy_filtered"] == pytest.approx(2 / 3)
    assert result["accuracy_stderr"] == pytest.approx(np.std([1, 0, 1], ddof=1) / np.sqrt(3))
    t = lambda c: TOKENIZER.tokenize(c)[0]  # noqa: E731
    word = lambda w: logp[t("b"), t(" ")] + logp[t(" "), t(w[0])] + logp[t(w[0]), t(w[1])]  # noqa: E731
    log_likelihoods = [word("cd"), word("ce"), word("cd")]
    np.testing.assert_allclose([r["log_likelihood"] for r in result["records"]], log_likelihoods, rtol=1e-5)
    assert result["perplexity"] == pytest.approx(np.exp(-np.mean(log_likelihoods)), rel=1e-5)


def test_the_stop_word_filter_takes_the_next_word_at_its_first_character():
    # After "b ": "t" (then "he.": the stop word "the") is most likely, "c" (then "d.") second.
    model, _ = bigram_lm({"b": [(" ", 5.0)], " ": [("t", 5.0), ("c", 4.0)], "t": [("h", 5.0)], "h": [("e", 5.0)],
                          "e": [(".", 5.0)], "c": [("d", 5.0)], "d": [(".", 5.0)]})
    result = lambada_accuracy(model, TOKENIZER, ["ab cd"], context_length=CONTEXT)
    [record] = result["records"]
    assert (record["prediction"], record["prediction_filtered"]) == ("the", "cd")
    assert (record["correct_unfiltered"], record["correct_filtered"]) == (False, True)
    assert result["accuracy"] == result["accuracy_filtered"] == 1.0 and result["accuracy_unfiltered"] == 0.0
    plain = lambada_accuracy(model, TOKENIZER, ["ab cd"], stop_word_filter=False, context_length=CONTEXT)
    assert plain["accuracy"] == 0.0 and not plain["stop_word_filter"]


def test_lambada_on_a_random_gpt_agrees_with_a_plain_forward_pass(lm):
    texts = ["ab cd ef", "the cat sat on the mat", "x yz"]
    result = lambada_accuracy(lm, TOKENIZER, texts, stop_word_filter=False, max_word_tokens=4)
    for text, record in zip(texts, result["records"]):
        context, word = text.rsplit(" ", 1)
        prompt, target = TOKENIZER.tokenize(context), TOKENIZER.tokenize(" " + word)
        logp = log_softmax(plain_logits(lm, prompt + target))
        positions = range(len(prompt) - 1, len(prompt) - 1 + len(target))
        assert record["log_likelihood"] == pytest.approx(sum(logp[p, i] for p, i in zip(positions, target)), abs=1e-4)
        teacher_forced = all(np.argmax(logp[p]) == i for p, i in zip(positions, target))  # all tokens greedy
        assert record["correct_unfiltered"] == teacher_forced


@pytest.mark.parametrize(
    "texts, message",
    [
        ([""], r"texts\[0\]: A LAMBADA text must be a non-empty string .* got ''"),
        (["ab cd", "   "], r"texts\[1\]: A LAMBADA text must be a non-empty string"),
        (["door"], r"texts\[0\]: LAMBADA text 'door' has no context before its final word; .* at least two"),
        (["a" * 46 + " bcd"], r"texts\[0\]: its context of 46 tokens and final word of 4 need 50 positions, more "
                              r"than the model's context of 48"),
        ([], "at least one text"),
    ],
)
def test_bad_lambada_texts_name_the_value_and_the_rule(lm, texts, message):
    with pytest.raises(ValueError, match=message):
        lambada_accuracy(lm, TOKENIZER, texts)


# --- generation prompts on a random GPT ------------------------------------------------------------

def test_tldr_summaries_are_top_k_samples_of_the_prompt(lm):
    articles = ["a cat sat. it ran", "the dog"]
    greedy = summarize_tldr(lm, TOKENIZER, articles, max_new_tokens=6, top_k=1)  # k = 1: greedy
    assert greedy["prompts"] == ["a cat sat. it ran\nTL;DR:", "the dog\nTL;DR:"]
    assert greedy["generations"] == [greedy_reference(lm, p, 6) for p in greedy["prompts"]]
    assert greedy["summaries"] == [first_sentences(g, 3) for g in greedy["generations"]]
    assert greedy["num_generated"] == [6, 6]
    sampled = summarize_tldr(lm, TOKENIZER, articles, references=["a cat", "a dog"], max_new_tokens=6, seed=1)
    for prompt, text in zip(sampled["prompts"], sampled["generations"]):  # k = 2: each token in the top two
        ids = TOKENIZER.tokenize(prompt + text)
        logits = plain_logits(lm, ids)
        for p in range(len(ids) - 6, len(ids)):
            assert ids[p] in np.argsort(logits[p - 1])[-2:]
    assert sampled["rouge1"] == pytest.approx(corpus_rouge(sampled["summaries"], ["a cat", "a dog"])["rouge1"])
    with pytest.raises(ValueError, match=r"articles\[0\]: its prompt of 49 tokens leaves no position to generate in "
                                         r"the model's context of 48 tokens"):
        summarize_tldr(lm, TOKENIZER, ["a" * 42])


def test_translation_is_greedy_to_the_end_of_the_line(lm):
    pairs = [("a dog", "un chien"), ("the cat", "le chat")]
    result = translate_prompt(lm, TOKENIZER, ["a bird"], pairs, references=["un oiseau"], max_new_tokens=4)
    prompt = "a dog = un chien\nthe cat = le chat\na bird ="
    assert result["prompts"] == [prompt]
    expected = greedy_reference(lm, prompt, 4).split("\n")[0].strip()
    assert result["translations"] == [expected]
    assert result["bleu"] == pytest.approx(corpus_bleu([expected], ["un oiseau"])["bleu"])
    with pytest.raises(ValueError, match="references needs one entry per input: 1; got 2"):
        translate_prompt(lm, TOKENIZER, "a bird", pairs, references=["x", "y"], max_new_tokens=2)
