"""Few-shot evaluation (GPT-3 Sec. 2.4): prompts, choice log-likelihoods, exact match, errors."""

import json

import numpy as np
import pytest

import keras

from keras_paperzoo.data.char_text import CharTokenizer
from keras_paperzoo.evaluation import FewShotTask, few_shot_evaluate
from keras_paperzoo.evaluation.few_shot import Scorer, _CachedScorer, _choice_scorer, choice_log_likelihoods
from keras_paperzoo.models.gpt.gpt_backbone import GPTBackbone
from keras_paperzoo.models.gpt.gpt_causal_lm import GPTCausalLM

TOKENIZER = CharTokenizer("\n +=?:abcdefghijklmnopqrstuvwxyz0123456789")
ADDITION = [{"context": f"{a}+{b}=", "target": str(a + b)} for a in range(3) for b in range(3)]  # 9 examples


def log_softmax(x):
    x = np.asarray(x, "float64")
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def plain_log_likelihoods(lm, pairs):
    """[sum_j log P(c_j | prompt, c_<j)] for (prompt, continuation) id lists: one plain forward pass of all
    rows padded to the whole context (48), then a NumPy log-softmax."""
    ids = np.zeros((len(pairs), 48), "int32")
    for i, (prompt, continuation) in enumerate(pairs):
        ids[i, : len(prompt) + len(continuation)] = prompt + continuation
    logp = log_softmax(lm.predict_on_batch(ids))  # (N, 48, V)
    return [sum(logp[i, len(p) - 1 + j, t] for j, t in enumerate(c)) for i, (p, c) in enumerate(pairs)]


@pytest.fixture(scope="module")
def lm():
    backbone = GPTBackbone(vocabulary_size=TOKENIZER.vocabulary_size(), num_layers=1, hidden_dim=16, num_heads=2,
                           intermediate_dim=32, max_sequence_length=48, dropout=0.0)
    return GPTCausalLM(backbone, tokenizer=TOKENIZER)


# --- prompts (no model) -----------------------------------------------------------------------

@pytest.mark.backend_free("jax")
def test_prompt_is_description_then_shots_then_context_with_the_delimiters():
    train = [{"context": "1+2=", "target": "3"}, {"context": "2+2=", "target": "4"}]
    task = FewShotTask(train, description="Add.")  # evaluation = train: the example is never its own shot
    assert task.prompt(0, shots=1, seed=0) == "Add.\n\n2+2= 4\n\n1+2="
    assert task.prompt(1, shots=1, seed=5) == "Add.\n\n1+2= 3\n\n2+2="
    assert task.prompt(1, shots=0, seed=0) == "Add.\n\n2+2="  # zero-shot: description and context
    bare = FewShotTask(train, [{"context": "3+3=", "target": "6"}], target_delimiter="", fewshot_delimiter="\n")
    shots = bare.draw_shots(0, 2, seed=1)
    assert sorted(shots) == [0, 1]
    assert bare.prompt(0, 2, seed=1) == "\n".join([train[j]["context"] + train[j]["target"] for j in shots] + ["3+3="])
    assert bare.prompt(0, 0, seed=1) == "3+3="


@pytest.mark.backend_free("jax")
def test_shots_are_seeded_distinct_and_never_the_evaluated_example():
    task = FewShotTask(ADDITION)
    draws = {seed: [task.draw_shots(i, 4, seed) for i in range(len(ADDITION))] for seed in (0, 1)}
    for i, shots in enumerate(draws[0]):
        assert len(set(shots)) == 4 and i not in shots and all(0 <= j < 9 for j in shots)
    assert draws[0] == [task.draw_shots(i, 4, 0) for i in range(9)]  # reproducible
    assert draws[0] != draws[1]  # the seed matters
    # An evaluation split apart from the training split: a training copy of the example is still excluded.
    apart = FewShotTask(ADDITION, [dict(ADDITION[3])])
    assert all(3 not in apart.draw_shots(0, 8, seed) for seed in range(5))


@pytest.mark.backend_free("jax")
def test_multiple_choice_demonstrations_use_the_choice_text(tmp_path):
    rows = [{"q": "sky?", "options": ["blue", "red"], "label": 0}, {"q": "grass?", "options": ["blue", "green"],
                                                                   "label": "green"}]
    task = FewShotTask(rows, context_field="q", target_field="label", choices="options", target_delimiter=": ")
    assert task.prompt(0, 1, seed=0) == "grass?: green\n\nsky?"
    assert [task.target_index(r) for r in rows] == [0, 1]
    shared = FewShotTask([{"context": "good", "target": 1}, {"context": "bad", "target": 0}], choices=["neg", "pos"])
    assert shared.prompt(1, 1, seed=0) == "good pos\n\nbad"
    path = tmp_path / "train.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    loaded = FewShotTask.from_jsonl(path, context_field="q", target_field="label", choices="options")
    assert loaded.train == rows and loaded.evaluation == rows and loaded.is_multiple_choice


@pytest.mark.backend_free("jax")
@pytest.mark.parametrize(
    "arguments, message",
    [
        (dict(train=ADDITION[:2], choices=["yes"]), r"needs at least 2 choices \(non-empty strings\).*\['yes'\]"),
        (dict(train=ADDITION[:2], choices=["1", "2"]), r"target '0' must be a choice's index in \[0, 2\)"),
        (dict(train=[{"text": "a"}]), "must be a dict with keys 'context' and 'target'"),
        (dict(train=ADDITION, evaluation=[]), "at least one evaluation example"),
    ],
)
def test_bad_tasks_name_the_value_and_the_rule(arguments, message):
    with pytest.raises(ValueError, match=message):
        FewShotTask(**arguments)


@pytest.mark.backend_free("jax")
def test_more_shots_than_training_examples_is_an_error():
    with pytest.raises(ValueError, match="shots=9 is more than the 8 training examples available"):
        FewShotTask(ADDITION).draw_shots(0, 9, seed=0)  # 9 examples, the evaluated one excluded


# --- scoring with a tiny random GPT -----------------------------------------------------------------

def test_choice_log_likelihoods_of_the_batched_pass_equal_a_plain_forward_pass(lm):
    prompt = TOKENIZER.tokenize("ab+cd=?")
    continuations = [TOKENIZER.tokenize(s) for s in (" x", " yz1", " 7")]
    got = choice_log_likelihoods(lm, prompt, continuations, use_cache=False)
    expected = plain_log_likelihoods(lm, [(prompt, c) for c in continuations])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_choice_log_likelihoods_from_the_key_value_cache_equal_those_without(lm):
    scorer = _CachedScorer(lm, 48)
    for prompt_text in ("ab+cd=?", "q" * 40):  # (prompt, continuation) buckets: 16 and 8; 48 and 8, the context's end
        prompt = TOKENIZER.tokenize(prompt_text)
        continuations = [TOKENIZER.tokenize(s) for s in (" x", " yz1", " 7", " abcdefg")]
        cached = choice_log_likelihoods(lm, prompt, continuations, scorer)
        without = plain_log_likelihoods(lm, [(prompt, c) for c in continuations])  # full rows, no cache
        np.testing.assert_allclose(cached, without, rtol=0, atol=1e-4)
    assert isinstance(_choice_scorer(lm, 48, None), _CachedScorer)  # use_cache=None: the cache when there is one


def test_a_model_without_a_cache_is_scored_by_the_batched_rows(lm):
    plain = keras.Model(lm.inputs, lm.outputs[0])  # the same logits, no call_with_cache
    prompt, continuations = TOKENIZER.tokenize("ab+cd=?"), [TOKENIZER.tokenize(s) for s in (" x", " yz1")]
    scorer = _choice_scorer(plain, 48, use_cache=None)  # no cache: the batched rows
    assert type(scorer) is Scorer
    got = choice_log_likelihoods(plain, prompt, continuations, scorer)
    np.testing.assert_allclose(got, plain_log_likelihoods(lm, [(prompt, c) for c in continuations]), atol=1e-4)
    with pytest.raises(ValueError, match="use_cache=True needs a causal LM with a key/value cache .* Functional has"):
        choice_log_likelihoods(plain, prompt, continuations, use_cache=True)


def test_multiple_choice_accuracy_summed_and_per_token(lm):
    rows = [{"context": f"{a}+{b}=", "target": (a + b) % 2, "choices": [" even", " odd" if a else " odd one"]}
            for a in range(3) for b in range(3)]
    task = FewShotTask(rows, choices="choices", target_delimiter="")
    result = few_shot_evaluate(lm, TOKENIZER, task, shots=2, seed=7)
    pairs = [(TOKENIZER.tokenize(r["prompt"]), TOKENIZER.tokenize(c)) for r, row in zip(result["records"], rows)
             for c in row["choices"]]
    plain = plain_log_likelihoods(lm, pairs)
    correct, correct_per_token = [], []
    for i, (row, record) in enumerate(zip(rows, result["records"])):
        assert record["prompt"] == task.prompt(record["index"], 2, 7) and record["index"] not in record["shot_indices"]
        continuations = [TOKENIZER.tokenize(c) for c in row["choices"]]
        expected = np.asarray(plain[2 * i : 2 * i + 2])
        np.testing.assert_allclose(record["log_likelihoods"], expected, rtol=1e-4, atol=1e-4)
        assert record["num_tokens"] == [len(c) for c in continuations]
        correct.append(np.argmax(expected) == row["target"])
        correct_per_token.append(np.argmax(expected / [len(c) for c in continuations]) == row["target"])
    assert result["num_examples"] == 9 and result["shots"] == 2
    assert result["accuracy"] == pytest.approx(np.mean(correct))
    assert result["accuracy_per_token"] == pytest.approx(np.mean(correct_per_token))
    assert result["accuracy_stderr"] == pytest.approx(np.std(correct, ddof=1) / 3.0)


def greedy_reference(lm, prompt, steps):
    """Greedy continuation by plain forward passes of the row padded to the context (48)."""
    ids = TOKENIZER.tokenize(prompt)
    for _ in range(steps):
        row = np.zeros((1, 48), "int32")
        row[0, : len(ids)] = ids
        ids = ids + [int(np.argmax(lm.predict_on_batch(row)[0, len(ids) - 1]))]
    return TOKENIZER.detokenize(ids[-steps:])


def test_free_form_answers_are_greedy_and_scored_by_exact_match(lm):
    rows = ADDITION[:3]
    unknown = FewShotTask(rows, [dict(r, target="?") for r in rows], target_delimiter="")
    answers = [greedy_reference(lm, unknown.prompt(i, 1, 0), 4) for i in range(3)]
    # Targets: the model's own greedy answer (right) for the first two, something else for the third.
    targets = [answers[0], answers[1], answers[2] + "q"]
    task = FewShotTask(rows, [dict(r, target=t) for r, t in zip(rows, targets)], target_delimiter="")
    assert [task.prompt(i, 1, 0) for i in range(3)] == [unknown.prompt(i, 1, 0) for i in range(3)]
    result = few_shot_evaluate(lm, TOKENIZER, task, shots=1, seed=0, max_new_tokens=4, stop=[])
    assert [r["prediction"] for r in result["records"]] == answers
    assert result["accuracy"] == pytest.approx(2 / 3)
    assert "accuracy_per_token" not in result
    # A stop string ends the answer before it.
    stop = answers[0][2]
    cut = few_shot_evaluate(lm, TOKENIZER, task, shots=1, seed=0, max_new_tokens=4, stop=[stop], limit=1)
    assert cut["records"][0]["prediction"] == answers[0][: answers[0].index(stop)]
    assert cut["num_examples"] == 1 and np.isnan(cut["accuracy_stderr"])


def test_evaluation_errors_name_the_value_and_the_rule(lm):
    with pytest.raises(ValueError, match="shots=10 is more than the task's 9 training examples"):
        few_shot_evaluate(lm, TOKENIZER, FewShotTask(ADDITION), shots=10)
    long = FewShotTask([{"context": "a" * 40, "target": "b"}, {"context": "c" * 40, "target": "d"}],
                       choices=["b", "d"])  # prompt "c..c d\n\na..a": 84 tokens, then " b" or " d"
    with pytest.raises(ValueError, match="prompt of 84 tokens and an answer of 2 need 86 positions, more than "
                                         "the model's context of 48"):
        few_shot_evaluate(lm, TOKENIZER, long, shots=1)
    with pytest.raises(ValueError, match="shots must be a non-negative int"):
        few_shot_evaluate(lm, TOKENIZER, long, shots=-1)
