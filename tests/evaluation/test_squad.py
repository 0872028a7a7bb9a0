"""SQuAD's official answer normalisation, EM / F1 and the v2.0 null threshold, on hand-counted cases."""

import pytest

from keras_paperzoo.evaluation.squad import best_null_threshold, exact_match, f1_score, normalize_answer, squad_scores

pytestmark = pytest.mark.backend_free("jax")


def _example(qid, *answers):
    return {"id": qid, "answers": [{"text": a, "answer_start": 0} for a in answers], "is_impossible": not answers}


def test_normalisation_em_f1():
    assert normalize_answer("The  Cat, an apple!") == "cat apple"
    assert normalize_answer("Theatre a-team") == "theatre ateam"  # only whole-word articles go
    assert exact_match("Normandy.", "normandy") == 1 and exact_match("Normandy", "Norway") == 0
    # pred [cat, sat], gold [cat, sat, down]: precision 1, recall 2/3 -> F1 0.8.
    assert f1_score("the cat sat", "a cat sat down") == pytest.approx(0.8)
    assert f1_score("", "") == 1.0 and f1_score("x", "") == 0.0 and f1_score("", "x") == 0.0
    assert f1_score("dog", "cat") == 0.0


def test_scores_take_the_best_gold_answer():
    examples = [_example("a", "Denver Broncos", "the Broncos"), _example("b", "1990s"), _example("c")]
    predictions = {"a": "Broncos", "b": "in the 1990s", "c": ""}
    scores = squad_scores(examples, predictions)
    # a: EM 1 against "the Broncos"; b: EM 0, F1 2 * 0.5 * 1 / 1.5 = 2/3 (pred [in, 1990s]); c: "" = "" -> 1.
    assert scores["exact_match"] == pytest.approx(100 * 2 / 3)
    assert scores["f1"] == pytest.approx(100 * (1 + 2 / 3 + 1) / 3)
    assert scores["no_answer_f1"] == 100.0 and scores["has_answer_exact_match"] == 50.0
    assert squad_scores(examples, {"a": "Broncos"})["exact_match"] == pytest.approx(100 / 3)  # missing: 0


def test_best_null_threshold():
    # f1 answered / null: A 1 / 0 (difference 1), B 0 / 1 (2, unanswerable), C 2/3 / 0 (-1).
    # tau < -1: 1; tau = -1: 5/3; tau = 1: 8/3 (best); tau = 2: 5/3.
    examples = [_example("A", "cat"), _example("B"), _example("C", "x y")]
    n_best = {"A": [("cat", 3.0), ("", 2.0)], "B": [("", 4.0), ("dog", 2.0)], "C": [("x", 1.0)]}
    tau, f1 = best_null_threshold(examples, n_best, {"A": 1.0, "B": 2.0, "C": -1.0})
    assert tau == 1.0 and f1 == pytest.approx(100 * 8 / 9)
