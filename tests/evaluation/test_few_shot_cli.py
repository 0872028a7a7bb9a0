"""`paperzoo evaluate few-shot`: a saved causal LM, a JSON-lines task, K shots -> accuracy +- stderr."""

import json

import numpy as np
import pytest

from keras_paperzoo import cli
from keras_paperzoo.data.char_text import CharTokenizer
from keras_paperzoo.data.icl_tasks import icl_task_examples
from keras_paperzoo.evaluation import FewShotTask, few_shot_evaluate
from keras_paperzoo.models.gpt.gpt_backbone import GPTBackbone
from keras_paperzoo.models.gpt.gpt_causal_lm import GPTCausalLM

TOKENIZER = CharTokenizer("\n :=abcdef0123")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("few_shot_cli")
    backbone = GPTBackbone(vocabulary_size=TOKENIZER.vocabulary_size(), num_layers=1, hidden_dim=16, num_heads=2,
                           intermediate_dim=32, max_sequence_length=64, dropout=0.0)
    lm = GPTCausalLM(backbone, tokenizer=TOKENIZER)
    lm.save(folder / "lm.keras")
    examples = icl_task_examples("reverse", 8, seed=0, length=2, alphabet="abc", num_choices=3)
    (folder / "reverse.jsonl").write_text("".join(json.dumps(e) + "\n" for e in examples))
    return folder, lm, examples


def test_prints_the_accuracy_the_harness_gives_and_writes_the_records(saved, capsys):
    folder, lm, examples = saved
    code = cli.main(["evaluate", "few-shot", str(folder / "lm.keras"), "--task", str(folder / "reverse.jsonl"),
                     "--shots", "2", "--choices", "choices", "--limit", "4", "--output", str(folder / "out.json")])
    assert code == 0
    expected = few_shot_evaluate(lm, TOKENIZER, FewShotTask(examples, choices="choices"), shots=2, limit=4)
    printed = capsys.readouterr().out
    assert f"K=2, 4 examples, accuracy {expected['accuracy']:.4f} +- {expected['accuracy_stderr']:.4f}" in printed
    written = json.loads((folder / "out.json").read_text())
    assert written["num_examples"] == 4 and written["shots"] == 2
    np.testing.assert_allclose(written["records"][0]["log_likelihoods"], expected["records"][0]["log_likelihoods"],
                               rtol=1e-5)


@pytest.mark.parametrize("arguments, message", [
    (["--shots", "9"], "shots=9 is more than the task's 8 training examples"),
    (["--shots", "-1"], "--shots must be >= 0"),
    (["--shots", "1", "--eval-task", "missing.jsonl"], "--eval-task file 'missing.jsonl' does not exist"),
])
def test_bad_requests_are_one_line(saved, capsys, arguments, message):
    folder, _, _ = saved
    code = cli.main(["evaluate", "few-shot", str(folder / "lm.keras"), "--task", str(folder / "reverse.jsonl"),
                     "--choices", "choices", *arguments])
    assert code == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1


def test_a_model_that_is_not_a_causal_lm_is_refused_in_one_line(saved, capsys, tmp_path):
    import keras

    folder, _, _ = saved
    classifier = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    classifier.save(tmp_path / "classifier.keras")
    code = cli.main(["evaluate", "few-shot", str(tmp_path / "classifier.keras"), "--task",
                     str(folder / "reverse.jsonl"), "--shots", "1", "--choices", "choices"])
    error = capsys.readouterr().err
    assert code == 2 and "holds a Sequential, not a causal language model" in error and error.count("\n") == 1
