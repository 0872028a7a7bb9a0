"""The pieces of the `gpt1` reproduction that are not the models' own code (the smoke run is in test_reproduce.py)."""

import numpy as np
import pytest

import keras

from keras_paperzoo.models.gpt import GPTBackbone
from keras_paperzoo.reproductions import gpt1_sst2


def test_choice_task_names_facts_and_questions():
    names = gpt1_sst2.choice_names(30, seed=0)
    assert len(set(names)) == 30 and names == gpt1_sst2.choice_names(30, seed=0)
    assert all(4 <= len(n) <= 6 and n.isalpha() for n in names)  # 2-3 two-letter syllables
    facts = gpt1_sst2.choice_facts(names, seed=0)
    assert set(facts) == set(names) and all(set(row) == {"ball", "city"} for row in facts.values())
    values = np.array([row["ball"] for row in facts.values()])
    assert values.min() >= 0 and values.max() <= 3 and len(set(values)) > 1
    assert gpt1_sst2.fact_sentence("kimo", "ball", 2) == "the ball of kimo is green ."
    assert gpt1_sst2.fact_sentence("kimo", "city", 0) == "kimo lives in paris ."
    questions = gpt1_sst2.choice_questions(facts, names[:2])
    assert len(questions) == 4  # two relations per name
    context, answers, label = questions[0]
    assert context == f"the ball of {names[0]} is" and answers == [" red .", " blue .", " green .", " yellow ."]
    assert label == facts[names[0]]["ball"]
    # The right answer completes the question into the sentence the pre-training text holds.
    documents = gpt1_sst2.choice_documents(facts, num_documents=50, seed=0)
    sentences = {s for d in documents for s in d}
    assert len(documents) == 50 and all(len(d) == 6 for d in documents)
    assert sentences <= {gpt1_sst2.fact_sentence(n, r, v) for n, row in facts.items() for r, v in row.items()}
    assert context + answers[label] in {gpt1_sst2.fact_sentence(n, r, v) for n, row in facts.items()
                                        for r, v in row.items()}
    with pytest.raises(ValueError, match="at most 256 names"):
        gpt1_sst2.choice_names(300)


def test_document_stream_and_cut_tokens():
    encode = lambda texts: [[ord(c) for c in t] for t in texts]  # noqa: E731, a character "tokenizer"
    ids = gpt1_sst2.document_stream([["ab", "c"], ["d"]], encode, end_of_text=0)
    np.testing.assert_array_equal(ids, [97, 98, 10, 99, 0, 100, 0])  # sentences joined by "\n", documents by 0
    assert gpt1_sst2.fit_tokens(["abcd", "x"], encode, 2) == [[97, 98], [120]]


def test_continuation_log_probs_match_a_numpy_log_softmax_and_pick_the_highest():
    keras.utils.set_random_seed(0)
    backbone = GPTBackbone(vocabulary_size=11, num_layers=1, hidden_dim=8, num_heads=2, intermediate_dim=16,
                           max_sequence_length=8, dropout=0.0, norm_first=False)
    prefixes, options = [[1, 2, 3], [4]], [[[5], [6, 7]], [[8, 9], [10]]]
    scores = gpt1_sst2.continuation_log_probs(backbone, prefixes, options, sequence_length=8)
    assert scores.shape == (2, 2)
    rows = [prefix + option for prefix, row in zip(prefixes, options) for option in row]
    padded = np.array([r + [0] * (5 - len(r)) for r in rows], "int32")  # right padding: causal, never seen
    logits = keras.ops.convert_to_numpy(backbone.token_embedding(backbone(padded), reverse=True))  # (4, 5, V)
    top = logits.max(-1, keepdims=True)
    log_p = logits - top - np.log(np.exp(logits - top).sum(-1, keepdims=True))
    for i, (n, k) in enumerate([(0, 0), (0, 1), (1, 0), (1, 1)]):
        start = len(prefixes[n])
        expected = sum(log_p[i, start + j - 1, token] for j, token in enumerate(options[n][k]))
        assert scores[n, k] == pytest.approx(expected, abs=1e-4)
    assert gpt1_sst2.choice_accuracy(np.array([[0.0, 1.0], [2.0, 1.0], [0.0, 3.0]]), [1, 1, 1]) == (66.67, "101")


def test_bad_arguments_are_one_line():
    with pytest.raises(gpt1_sst2.common.UsageError, match="--parts 'sst2,qa': unknown"):
        gpt1_sst2.parse_args(["--parts", "sst2,qa"])
    with pytest.raises(gpt1_sst2.common.UsageError, match="--choice-train 12: must be in"):
        gpt1_sst2.parse_args(["--choice-entities", "12", "--choice-train", "12"])
