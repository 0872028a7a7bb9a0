"""The GPT-3 in-context-learning reproduction's tasks: the format, held-out tasks, what a prompt of K shots tells."""

import numpy as np
import pytest

from keras_paperzoo.reproductions import gpt3_icl


def test_training_sequences_are_kv_lines_of_one_task_per_row():
    ids, seen = gpt3_icl.training_sequences(200, np.random.default_rng(0), alphabet_size=26, keys_per_task=8, pairs=16)
    assert ids.shape == (200, 48) and ids.dtype == np.int32 and len(seen) == 200
    lines = ids.reshape(200, 16, 3)
    np.testing.assert_array_equal(lines[..., 2], 0)  # "\n"
    keys, values = lines[..., 0] - 1, lines[..., 1] - 1
    assert keys.min() >= 0 and keys.max() < 26 and values.min() >= 0 and values.max() < 26
    for row in range(200):
        assert len(set(keys[row])) <= 8
        pairs = set(zip(keys[row].tolist(), values[row].tolist()))
        assert len(pairs) == len(set(keys[row]))  # a function: a key has one value within a task
        assert len({v for _, v in pairs}) == len(pairs)  # injective (every family is)
    text = gpt3_icl.tokenizer_for(26).detokenize(ids[0])
    assert text[2] == "\n" and text[:2].isalpha() and len(text) == 48


@pytest.mark.parametrize("family, expected", [("copy", [0, 5, 25]), ("successor", [1, 6, 0]),
                                              ("reverse", [25, 20, 0]), ("shift", [3, 8, 2])])
def test_family_values(family, expected):
    values = gpt3_icl.family_values(family, np.array([[0, 5, 25]]), np.random.default_rng(0), 26, shift=3)
    np.testing.assert_array_equal(values, [expected])


def test_a_mapping_is_random_per_row_and_injective():
    keys = np.tile(np.arange(26), (50, 1))
    values = gpt3_icl.family_values("mapping", keys, np.random.default_rng(0), 26)
    assert all(sorted(row) == list(range(26)) for row in values.tolist())
    assert len({tuple(row) for row in values.tolist()}) == 50
    with pytest.raises(ValueError, match="family 'rot13'"):
        gpt3_icl.family_values("rot13", keys, np.random.default_rng(0), 26)


def test_held_out_tasks_were_never_trained_and_the_query_is_among_its_task_pairs():
    rng = np.random.default_rng(0)
    _, seen = gpt3_icl.training_sequences(2000, rng, keys_per_task=4, alphabet_size=6, pairs=8)
    train, evaluation = gpt3_icl.held_out_examples(rng, 10, 3, set(seen), alphabet_size=6, keys_per_task=4)
    assert len(train) == 2 * 10 * 4 and len(evaluation) == 2 * 10 * 3
    tasks = {}
    for e in train:
        tasks.setdefault(e["task"], {})[e["context"][0]] = e["target"]
    for mapping in tasks.values():  # not one of the 2,000 training tasks (a small alphabet: collisions are likely)
        keys = [ord(k) - 97 for k in mapping]  # "context" is the key letter
        assert gpt3_icl.task_signatures(keys, [ord(mapping[k]) - 97 for k in mapping])[0] not in set(seen)
    shifts = {(ord(v) - ord(k)) % 6 for e in train if e["family"] == "shift" for k, v in [(e["context"][0], e["target"])]}
    assert shifts == set(gpt3_icl.held_out_shifts(6)) == {2, 3, 4}  # copy (0) / successor (1) are trained
    for e in evaluation:
        own = tasks[e["task"]]
        assert own[e["context"][0]] == e["target"] and e["target"] in e["choices"]
        assert len(set(e["choices"])) == 4 and set(e["choices"]) <= set(own.values())  # distractors: the task's values


def test_shots_come_from_the_own_task_and_zero_shots_tell_nothing():
    rng = np.random.default_rng(1)
    train, evaluation = gpt3_icl.held_out_examples(rng, 3, 2, set(), alphabet_size=26, keys_per_task=8)
    task = gpt3_icl.few_shot_task(train, evaluation)
    for index, example in enumerate(evaluation):
        assert task.prompt(index, 0, seed=0) == example["context"]  # "k=": the key only, no pair of the task
        shots = task.draw_shots(index, 8, seed=0)
        assert sorted(shots) == [j for j, e in enumerate(train) if e["task"] == example["task"]]  # all 8, its own
        prompt = task.prompt(index, 8, seed=0)
        assert example["context"] + example["target"] in prompt.split("\n")[:-1]  # the answer is in the prompt
        assert task.prompt(index, 4, seed=0) == task.prompt(index, 4, seed=0)  # seeded
    seen = set(gpt3_icl.training_sequences(500, rng, 4, 4, 4)[1])  # every permutation of 4 letters is trained
    with pytest.raises(ValueError, match="no mapping task of 4 keys over 4 letters left"):
        gpt3_icl.held_out_examples(rng, 1, 1, seen, alphabet_size=4, keys_per_task=4)
    with pytest.raises(ValueError, match="shots=9 is more than the 8 pairs"):
        task.draw_shots(0, 9, seed=0)


def test_unigram_ignores_the_prompt_and_the_claims():
    rng = np.random.default_rng(2)
    ids, _ = gpt3_icl.training_sequences(50, rng, pairs=4)
    train, evaluation = gpt3_icl.held_out_examples(rng, 2, 2, set(), keys_per_task=8)
    task = gpt3_icl.few_shot_task(train, evaluation)
    correct = gpt3_icl.unigram_correct(ids, gpt3_icl.tokenizer_for(26), task, (0, 8))
    assert correct[0] == correct[8] and len(correct[0]) == 8
    assert gpt3_icl.mean_and_two_se([1, 0, 1, 0]) == (50.0, round(200 * 0.5 * (4 / 3) ** 0.5 / 2, 2))
    results = {name: {"0": {"accuracy_percent": 25.0}, "8": {"accuracy_percent": 25.0}} for name in gpt3_icl.MODELS}
    results["trained"]["8"]["accuracy_percent"] = 60.0
    claims = gpt3_icl.claims(results, n=400)
    assert claims["trained: accuracy at K = 8 above K = 0"] == {"holds": True, "difference_points": 35.0,
                                                                "two_standard_errors_points": 6.54}
    assert claims["random init: flat (K = 8 within 2 s.e. of K = 0)"]["holds"]
    assert not gpt3_icl.flat(25.0, 60.0, 400)["holds"]


def test_bad_arguments_are_one_line():
    with pytest.raises(gpt3_icl.common.UsageError, match="--shots"):
        gpt3_icl.main(["--shots", "0,9"])
    with pytest.raises(gpt3_icl.common.UsageError, match="--alphabet-size 3"):
        gpt3_icl.main(["--alphabet-size", "3", "--keys", "3"])
    with pytest.raises(gpt3_icl.common.UsageError, match="--batch-size 0: must be >= 1"):
        gpt3_icl.main(["--batch-size", "0"])
    with pytest.raises(gpt3_icl.common.UsageError, match="--chunks 20: at most --updates"):
        gpt3_icl.main(["--updates", "8"])
