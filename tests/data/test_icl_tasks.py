"""Synthetic in-context tasks: answers follow the rule, prompts determine them, jsonl round trip."""

import json

import numpy as np
import pytest

from keras_paperzoo.data.icl_tasks import icl_task_examples
from keras_paperzoo.evaluation.few_shot import FewShotTask

# backend_free (tests/conftest.py): string generation in NumPy and Python, no Keras op.
pytestmark = pytest.mark.backend_free("jax")


def test_copy_and_reverse_targets_follow_the_rule():
    for kind, rule in (("copy", lambda s: s), ("reverse", lambda s: s[::-1])):
        examples = icl_task_examples(kind, 20, seed=3, length=4, alphabet="xyz")
        for e in examples:
            query = e["context"][:-2]
            assert e["context"] == f"{query} =" and len(query) == 4 and set(query) <= set("xyz")
            assert e["target"] == rule(query)
        assert examples == icl_task_examples(kind, 20, seed=3, length=4, alphabet="xyz")  # seeded
        assert examples != icl_task_examples(kind, 20, seed=4, length=4, alphabet="xyz")


def test_letter_mapping_is_one_substitution_per_prompt_that_the_prompt_determines():
    examples = icl_task_examples("letter_mapping", 50, seed=0, length=3, alphabet="abcdef", num_pairs=2)
    mappings = []
    for e in examples:
        *pairs, last = e["context"].split("\n")
        query = last[:-2]
        mapping = {}
        for line in pairs:  # "abc = fde"
            source, target = line.split(" = ")
            for a, b in zip(source, target):
                assert mapping.setdefault(a, b) == b  # one consistent substitution
        assert len(set(mapping.values())) == len(mapping)  # a bijection on the letters shown
        assert e["target"] == "".join(mapping[c] for c in query)  # every query letter shown
        assert len(pairs) in (2, 3)
        mappings.append(tuple(sorted(mapping.items())))
    assert len(set(mappings)) > 40  # a fresh mapping per prompt


def test_multiple_choice_variant_and_jsonl_round_trip(tmp_path):
    examples = icl_task_examples("reverse", 30, seed=1, num_choices=4)
    positions = []
    for e in examples:
        query = e["context"][:-2]
        assert len(e["choices"]) == len(set(e["choices"])) == 4
        assert e["choices"][e["target"]] == query[::-1]
        positions.append(e["target"])
    assert len(set(positions)) > 1  # the answer is not always first
    path = tmp_path / "reverse.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in examples))
    task = FewShotTask.from_jsonl(path, choices="choices")
    assert task.train == examples and task.prompt(0, 1, seed=0).endswith("\n\n" + examples[0]["context"])
    assert [task.target_text(e) for e in examples] == [e["context"][:-2][::-1] for e in examples]


@pytest.mark.parametrize(
    "arguments, message",
    [
        (dict(kind="sort", num_examples=2), "kind 'sort' is not an in-context task"),
        (dict(kind="copy", num_examples=0), "num_examples must be an int >= 1; got num_examples=0"),
        (dict(kind="copy", num_examples=2, alphabet="aa"), "alphabet must be at least 2 distinct lowercase"),
        (dict(kind="copy", num_examples=2, length=1, alphabet="ab", num_choices=3), r"num_choices must be .* \[2, 2\]"),
    ],
)
def test_bad_arguments_name_the_value_and_the_rule(arguments, message):
    with pytest.raises(ValueError, match=message):
        icl_task_examples(**arguments)


def test_rules_and_their_bad_arguments():
    from keras_paperzoo.data.icl_tasks import apply_rule, rule_episodes

    assert apply_rule("shift", "c", 3) == "f" and apply_rule("shift", "y", 3) == "b"
    assert apply_rule("digits", "37", 5) == "82" and apply_rule("digits", "90", 1) == "01"
    with pytest.raises(ValueError, match="family 'reverse' is not a rule family"):
        apply_rule("reverse", "ab", 1)
    with pytest.raises(ValueError, match="3 parameters give fewer than 4 choices"):
        rule_episodes(np.random.default_rng(0), "shift", (1, 2, 3), 1, 1)
    with pytest.raises(ValueError, match="pool=20 \\+ queries=7 inputs, more than its 26"):
        rule_episodes(np.random.default_rng(0), "shift", tuple(range(26)), 1, 7, pool=20)
