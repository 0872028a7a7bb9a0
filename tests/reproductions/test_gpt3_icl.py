"""The GPT-3 in-context-learning reproduction's tasks: nothing to copy, the rule in the shots, the claims' arithmetic."""

import numpy as np
import pytest

from keras_paperzoo.data.icl_tasks import apply_rule, copy_and_exclude
from keras_paperzoo.reproductions import gpt3_icl

# backend_free (tests/conftest.py): task generation, baselines and statistics in NumPy; no Keras op is built here.
pytestmark = pytest.mark.backend_free("jax")

INPUT_LENGTH = {"shift": 1, "digits": 2}


def evaluation_task(seed=0, episodes=60, queries=4):
    train, evaluation = gpt3_icl.evaluation_examples(np.random.default_rng(seed), episodes, queries)
    return gpt3_icl.few_shot_task(train, evaluation)


def test_the_task_cannot_be_solved_by_copying_from_the_prompt():
    task = evaluation_task()
    n = len(task.evaluation)
    assert n == 3 * 60 * 4
    for shots in (0, 1, 4, 8):
        for index, question in enumerate(task.evaluation):
            lines = task.prompt(index, shots, seed=1234).split("\n")
            assert len(lines) == shots + 1 and lines[-1] == question["context"]
            width = INPUT_LENGTH[question["family"]]
            shown_inputs, shown_outputs = {line[:width] for line in lines[:-1]}, {line[width:] for line in lines[:-1]}
            assert question["context"] not in shown_inputs  # the query's input is never among the shots
            assert not set(question["choices"]) & shown_outputs  # no choice is a shot's output
        for anywhere in (False, True):  # pick a choice the shots show (as an output / anywhere), else guess
            correct = copy_and_exclude(task, shots, seed=1234, anywhere=anywhere)
            accuracy, standard_error = np.mean(correct), np.sqrt(0.25 * 0.75 / n)
            assert abs(accuracy - 0.25) <= 2 * standard_error, (shots, anywhere, accuracy)


def test_copy_and_exclude_beats_chance_when_the_answer_is_in_the_prompt():
    """The baseline can fail: with the question's own pair among the shots (the earlier design's retrieval) it copies."""
    task = evaluation_task(episodes=10, queries=1)
    for question in task.evaluation:  # the question's pair replaces one of its episode's 8 solved pairs
        shot = next(e for e in task.train if e["task"] == question["task"])
        shot.update(context=question["context"], target=question["target"], choices=question["choices"])
    assert np.mean(copy_and_exclude(task, 8, seed=0)) == 1.0  # all 8 shown: always copied
    assert 0.25 + 0.75 * 4 / 8 - 0.2 < np.mean(copy_and_exclude(task, 4, seed=0)) < 0.25 + 0.75 * 4 / 8 + 0.2


def test_the_answer_follows_the_episode_rule_and_distractors_are_the_family_outputs():
    task = evaluation_task(seed=3, episodes=20)
    for index, question in enumerate(task.evaluation):
        family, parameter, x = question["family"], question["parameter"], question["context"]
        assert question["target"] == apply_rule(family, x, parameter) == task.target_text(question)
        others = [p for name, f, params in gpt3_icl.EVALUATION_SETS if name == question["set"] for p in params]
        outputs = {apply_rule(family, x, p) for p in others}
        assert len(set(question["choices"])) == 4 and set(question["choices"]) <= outputs
        for j in task.draw_shots(index, 8, seed=0):  # every shot shows the same rule
            shot = task.train[j]
            assert shot["task"] == question["task"] and shot["target"] == apply_rule(family, shot["context"], parameter)
    held_out = {q["parameter"] for q in task.evaluation if q["set"] == "shift, held out"}
    trained = {q["parameter"] for q in task.evaluation if q["set"] == "shift"}
    assert held_out <= set(gpt3_icl.HELD_OUT_SHIFTS) and not trained & set(gpt3_icl.HELD_OUT_SHIFTS)
    assert task.prompt(0, 0, seed=0) == task.evaluation[0]["context"]  # zero-shot: the input alone
    with pytest.raises(ValueError, match="shots=9 is more than the 8 solved pairs"):
        task.draw_shots(0, 9, seed=0)


def test_training_rows_hold_one_trained_rule_each_and_no_held_out_shift():
    ids = gpt3_icl.rule_training_rows(400, np.random.default_rng(0), gpt3_icl.training_families(), 48)
    assert ids.shape == (400, 48) and ids.dtype == np.int32
    text = [gpt3_icl.tokenizer_for().detokenize(row) for row in ids]
    families = {"shift": 0, "digits": 0}
    for row in text:
        lines = row.split("\n")[:-1]  # whole lines only
        family = "shift" if lines[0].isalpha() else "digits"
        families[family] += 1
        width = INPUT_LENGTH[family]
        parameters = {(ord(line[width]) - ord(line[0])) % (26 if family == "shift" else 10) for line in lines}
        assert len(parameters) == 1  # one rule per row
        assert all(line[width:] == apply_rule(family, line[:width], *parameters) for line in lines)
        assert len({line[:width] for line in lines}) == len(lines)  # no input repeats: nothing to copy
        if family == "shift":
            assert not parameters & set(gpt3_icl.HELD_OUT_SHIFTS)
    assert 200 < families["shift"] < 280  # 60 % of 400


def test_unigram_ignores_the_prompt_and_the_claims_need_every_seed():
    task = evaluation_task(episodes=4)
    ids = gpt3_icl.rule_training_rows(50, np.random.default_rng(2), gpt3_icl.training_families(), 48)
    correct = gpt3_icl.unigram_correct(ids, gpt3_icl.tokenizer_for(), task, (0, 8))
    assert correct[0] == correct[8] and len(correct[0]) == len(task.evaluation)
    assert gpt3_icl.spread([30.0, 40.0, 50.0], 400) == (40.0, round(2 * 10 / 3 ** 0.5, 2))  # the seeds' spread
    assert gpt3_icl.spread([40.0], 400) == (40.0, round(200 * (0.24 / 400) ** 0.5, 2))  # one seed: the binomial
    claim = gpt3_icl.above([60.0, 62.0, 64.0], [25.0, 25.0, 25.0], 400)
    assert claim["holds"] and claim["difference_points"] == 37.0
    assert not gpt3_icl.above([60.0, 62.0, 20.0], [25.0, 25.0, 25.0], 400)["holds"]  # one seed the other way
    assert gpt3_icl.flat([25.0, 24.0, 26.0], [26.0, 25.0, 24.0], 400)["holds"]
    assert gpt3_icl.at_chance([25.0, 26.0, 24.0], 400)["holds"] and not gpt3_icl.at_chance([35.0], 400)["holds"]


def test_bad_arguments_are_one_line():
    with pytest.raises(gpt3_icl.common.UsageError, match="--shots"):
        gpt3_icl.main(["--shots", "1,4"])
    with pytest.raises(gpt3_icl.common.UsageError, match="--length 40: the context must hold 8 digit shots"):
        gpt3_icl.main(["--length", "40"])
    with pytest.raises(gpt3_icl.common.UsageError, match="--batch-size 0: must be >= 1"):
        gpt3_icl.main(["--batch-size", "0"])
    with pytest.raises(gpt3_icl.common.UsageError, match="--chunks 10: at most --updates"):
        gpt3_icl.main(["--updates", "8"])
