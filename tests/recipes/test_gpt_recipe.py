"""`paperzoo train gpt`: a character GPT on the built-in sample, or on a text file with --dataset."""

import argparse
import json

import numpy as np
import pytest

import keras

from keras_paperzoo.data.char_text import SAMPLE_TEXT
from keras_paperzoo.models.gpt.gpt_presets import GPT_PRESETS
from keras_paperzoo.recipes import gpt as recipe
from keras_paperzoo.recipes.common import RecipeError


def _args(tmp_path, **overrides):
    values = dict(recipe="gpt", dataset=None, epochs=1, steps_per_epoch=3, batch_size=8, image_size=None,
                  preset=None, output_dir=str(tmp_path / "run"), backend=None, seed=0, resume=False, verbose=0)
    values.update(overrides)
    return argparse.Namespace(**values)


@pytest.fixture
def tiny_preset(monkeypatch):
    """"gpt_char_test": one layer of width 32, context 48, and 24-token samples (XLA compile time dominates)."""
    monkeypatch.setattr(recipe, "SAMPLE_LENGTH", 24)
    tiny = dict(GPT_PRESETS["gpt_char_tiny"]["config"], num_layers=1, hidden_dim=32, intermediate_dim=64,
                max_sequence_length=48)
    monkeypatch.setitem(GPT_PRESETS, "gpt_char_test", {"description": "test", "config": tiny})
    return "gpt_char_test"


@pytest.mark.one_leg("torch")
def test_gpt_recipe_on_the_built_in_text_writes_metrics_samples_and_model(tmp_path, monkeypatch, tiny_preset):
    # The default run with a one-layer model and short samples: XLA compile time dominates.
    monkeypatch.setattr(recipe, "DEFAULT_PRESET", "gpt_char_test")
    metrics = recipe.run(_args(tmp_path))
    out = tmp_path / "run"
    saved = json.loads((out / "metrics.json").read_text())
    assert saved["preset"] == "gpt_char_test" and saved["dataset"] == "built-in sample"
    assert saved["characters"] == len(SAMPLE_TEXT) and saved["vocabulary_size"] == len(set(SAMPLE_TEXT))
    assert saved["train_tokens"] == int(0.9 * len(SAMPLE_TEXT))  # nanoGPT's 90/10 split
    assert saved["sequence_length"] == 48 and saved["updates"] == 3
    assert abs(saved["first_epoch_loss"] - saved["uniform_loss"]) < 0.5  # untrained: near uniform
    assert np.isfinite(saved["validation_loss"]) and "1.47" in saved["paper"]
    # One token a character: the per-character loss is the per-token loss.
    assert saved["tokenizer"] == "character" and saved["characters_per_token"] == 1.0
    assert saved["validation_loss_per_character"] == saved["validation_loss"]
    assert saved["validation_characters"] == saved["validation_windows"] * 48
    assert saved["validation_bits_per_character"] == pytest.approx(saved["validation_loss"] / np.log(2))
    assert len(saved["samples"]) == 3 and all(s.startswith("\n") and len(s) == 24 for s in saved["samples"])
    assert (out / "samples.txt").read_text(encoding="utf-8").startswith("\n")
    lm = keras.saving.load_model(out / "model.keras")
    assert lm.count_params() == metrics["parameters"] and lm.tokenizer.vocabulary_size() == saved["vocabulary_size"]
    assert not (out / "checkpoint").exists()


def test_gpt_recipe_rejects_bad_requests_and_text_files_load(tmp_path):
    assert recipe.DEFAULT_PRESET == "gpt_char_tiny"
    from keras_paperzoo.data.char_text import load_text

    with pytest.raises(RecipeError, match="not a GPT preset"):
        recipe.run(_args(tmp_path, preset="bert_base", output_dir=str(tmp_path / "a")))
    with pytest.raises(RecipeError, match="does not exist"):
        recipe.run(_args(tmp_path, dataset=str(tmp_path / "missing.txt"), output_dir=str(tmp_path / "b")))
    path = tmp_path / "tiny.txt"
    path.write_text("ab", encoding="utf-8")
    with pytest.raises(RecipeError, match="needs at least 9"):
        recipe.run(_args(tmp_path, dataset=str(path), output_dir=str(tmp_path / "c")))
    path.write_text("héllo\n" * 3, encoding="utf-8")
    assert load_text(path) == "héllo\n" * 3


@pytest.mark.one_leg("torch")
def test_shakespeare_application_runs_a_tiny_budget_and_reports_beside_the_published_figure(
    tmp_path, tiny_preset, shared_data
):
    from keras_paperzoo.reproductions import gpt_shakespeare as app

    text = tmp_path / "shakespeare_head.txt"  # the first 20,000 characters: the test stays short
    text.write_text((shared_data / "tinyshakespeare.txt").read_text(encoding="utf-8")[:20_000], encoding="utf-8")
    metrics = app.main(["--text", str(text), "--preset", "gpt_char_test", "--updates", "2", "--batch-size", "8",
                        "--output-dir", str(tmp_path / "out")])
    saved = json.loads((tmp_path / "out" / "gpt_shakespeare_metrics.json").read_text())
    assert saved["published"]["validation_loss"] == 1.47 and saved["updates"] == 2
    assert saved["unigram_loss"] < saved["uniform_loss"]  # character frequencies beat uniform
    assert set(saved["claims"]) == {"below_uniform", "below_unigram"}
    assert saved["claims"]["below_unigram"]["holds"] == (saved["validation_loss"] < saved["unigram_loss"])
    markdown = (tmp_path / "out" / "gpt_shakespeare_results.md").read_text(encoding="utf-8")
    assert "| 1.47 |" in markdown and "gpt_char_test" in markdown
    assert app.unigram_loss(np.array([0, 0, 1]), np.array([0]), 2) == pytest.approx(-np.log(3 / 5))
    assert metrics["validation_windows"] == (2000 - 1) // 48


def _keras_hub_tokenizer(folder):
    """keras-hub's tokenizer of the vocabulary.json and merges.txt in `folder`."""
    import keras_hub

    return keras_hub.tokenizers.BytePairTokenizer(vocabulary=str(folder / "vocabulary.json"),
                                                  merges=str(folder / "merges.txt"),
                                                  unsplittable_tokens=["<|endoftext|>"])


class _StopAfterFirstEpoch(keras.callbacks.Callback):
    """Interrupts the run at the start of epoch 1, after the checkpoint of epoch 0."""

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == 1:
            raise KeyboardInterrupt("interrupted")


@pytest.mark.one_leg("torch")
def test_gpt_recipe_on_a_byte_pair_vocabulary_learned_from_the_training_split(tmp_path, tiny_preset):
    from keras_paperzoo.data.bpe import train_byte_pair_tokenizer

    bpe = dict(preset=tiny_preset, epochs=2, steps_per_epoch=2, bpe_vocabulary_size=300)
    metrics = recipe.run(_args(tmp_path, **bpe))
    out = tmp_path / "run"
    split = int(0.9 * len(SAMPLE_TEXT))
    train_text, valid_text = SAMPLE_TEXT[:split], SAMPLE_TEXT[split:]

    # The files are the BPE of the training split (the validation text would add merges: "Ġin", "st", "se").
    expected = train_byte_pair_tokenizer([train_text], 300, directory=tmp_path / "expected")
    for name in ("vocabulary.json", "merges.txt"):
        assert (out / name).read_bytes() == (tmp_path / "expected" / name).read_bytes()
    saved = json.loads((out / "metrics.json").read_text())
    assert saved["tokenizer"] == "byte-pair" and saved["vocabulary_size"] == 300
    assert saved["uniform_loss"] == pytest.approx(np.log(300))

    # Round trip with the saved files (keras-hub's tokenizer reads them): text -> ids -> text is exact.
    files = _keras_hub_tokenizer(out)
    valid_ids = [int(i) for i in files.tokenize(valid_text)]
    assert files.detokenize(valid_ids) == valid_text
    assert saved["validation_tokens"] == len(valid_ids) < 0.8 * len(valid_text)  # merges: fewer tokens than bytes
    assert saved["train_tokens"] == len(files.tokenize(train_text)) == len(expected.tokenize(train_text))

    # Per character: the total nats of the windows' targets (ids 1 .. n T) over the characters they cover.
    predicted = saved["validation_windows"] * saved["sequence_length"]
    characters = len(files.detokenize(valid_ids[1 : predicted + 1]))  # the sample is ASCII: one byte a character
    assert saved["validation_characters"] == characters and saved["characters_per_token"] > 1.2
    assert saved["validation_loss_per_character"] == pytest.approx(saved["validation_loss"] * predicted / characters)
    assert saved["validation_bits_per_character"] == pytest.approx(saved["validation_loss_per_character"] / np.log(2))

    # The model carries its tokenizer: it loads in safe mode and decodes.
    lm = keras.saving.load_model(out / "model.keras", safe_mode=True)
    assert isinstance(lm.tokenizer, recipe.InlineBytePairTokenizer)
    assert lm.tokenizer.vocabulary == json.loads((out / "vocabulary.json").read_text(encoding="utf-8"))
    assert lm.tokenizer.detokenize(lm.tokenizer.tokenize(valid_text)) == valid_text
    assert lm.count_params() == metrics["parameters"]
    assert len(saved["samples"]) == 3 and all(isinstance(s, str) and s.startswith("\n") for s in saved["samples"])
    assert lm.generate("\n", max_length=6, sampler="greedy").startswith("\n")

    # Exact resume: the run interrupted after epoch 0 and resumed (taking --bpe-vocabulary-size from the run)
    # learns the same BPE and ends where the uninterrupted run did.
    interrupted = _args(tmp_path, output_dir=str(tmp_path / "resumed"), **bpe)
    with pytest.raises(KeyboardInterrupt):
        recipe.run(interrupted, extra_callbacks=[_StopAfterFirstEpoch()])
    stored = json.loads((tmp_path / "resumed" / "checkpoint" / "run.json").read_text())["arguments"]
    assert stored["bpe_vocabulary_size"] == 300 and not (tmp_path / "resumed" / "merges.txt").exists()
    resumed = recipe.run(_args(tmp_path, output_dir=str(tmp_path / "resumed"), resume=True,
                               **dict(bpe, bpe_vocabulary_size=None)))
    assert (tmp_path / "resumed" / "merges.txt").read_bytes() == (out / "merges.txt").read_bytes()
    for name in ("loss", "first_epoch_loss", "validation_loss", "validation_loss_per_character"):
        assert resumed[name] == metrics[name], name


@pytest.mark.backend_free("jax")  # pure Python: the same on every leg
@pytest.mark.parametrize("size, message", [
    (257, r"at least 258 \(the 256 bytes .*got 257\."),
    (0, r"at least 258 .*got 0\."),
    ("300", r"whole number .*got '300'\."),
    (300.0, r"whole number .*got 300\.0\."),
    (100_000, r"--bpe-vocabulary-size 100000: .*was not reached"),
])
def test_gpt_recipe_rejects_a_bad_byte_pair_vocabulary_size(tmp_path, size, message):
    with pytest.raises(RecipeError, match=message):
        recipe.run(_args(tmp_path, bpe_vocabulary_size=size))
    assert not (tmp_path / "run" / "checkpoint").exists()  # nothing recorded: the corrected run starts afresh


@pytest.mark.backend_free("jax")  # pure Python: the same on every leg
def test_predicted_characters_count_each_character_once_at_its_first_byte():
    ids = np.array([0, 1, 2, 1])
    token_bytes = np.array([1, 2, 1])  # "a", "é", "b"
    assert recipe._predicted_characters(token_bytes, ids, "aébé", 1, 4) == 3
    # Byte-level tokens "a" + the first byte of "é", then its second byte: "é" counts with the first.
    assert recipe._predicted_characters(np.array([2, 1]), np.array([0, 1]), "aé", 0, 1) == 2
    assert recipe._predicted_characters(np.array([2, 1]), np.array([0, 1]), "aé", 1, 2) == 0
    with pytest.raises(RecipeError, match="does not round-trip"):
        recipe._predicted_characters(token_bytes, ids, "ab", 1, 4)


# --- --task: GPT-1's fine-tuning on a JSON-lines file ---------------------------------------------------------
WORDS = ["good", "bad", "fine", "poor", "love", "hate"]


def _task_lines(task, n=20, split=False):
    """n lines of `task`'s fields, labels alternating (strings for classification, ints elsewhere)."""
    rng = np.random.default_rng(2)
    lines = []
    for i in range(n):
        words = lambda k: " ".join(rng.choice(WORDS, size=k))  # noqa: E731
        record = {
            "classification": {"text": words(4), "label": ["neg", "pos"][i % 2]},
            "entailment": {"premise": words(5), "hypothesis": words(2), "label": i % 3},
            "similarity": {"text_a": words(3), "text_b": words(3), "label": i % 2},
            # The first context is longer than the 48-token context: it is cut, the choices kept.
            "multiple_choice": {"context": words(30 if i == 0 else 3), "choices": [words(2), words(1), "é"],
                                "label": i % 3},
        }[task]
        if split:
            record["split"] = "dev" if i >= n - 4 else "train"
        lines.append(json.dumps(record))
    return "\n".join(lines) + "\n"


GPT_TASK_RUNS = [
    pytest.param("classification", marks=pytest.mark.one_leg("jax")),
    pytest.param("entailment", marks=pytest.mark.one_leg("tensorflow")),
    pytest.param("similarity", marks=pytest.mark.one_leg("torch")),
    pytest.param("multiple_choice", marks=pytest.mark.one_leg("torch")),
]


@pytest.mark.parametrize("task", GPT_TASK_RUNS)
def test_gpt_recipe_fine_tunes_a_gpt_classifier_on_task_data(tmp_path, tiny_preset, task):
    from keras_paperzoo.models.gpt import task_token_ids

    data = tmp_path / f"{task}.jsonl"
    split = task == "entailment"  # a "split" field: its 4 dev lines; otherwise a seeded 10 % (2 of 20)
    data.write_text(_task_lines(task, split=split), encoding="utf-8")
    metrics = recipe.run(_args(tmp_path, preset=tiny_preset, steps_per_epoch=1, batch_size=4, task=task,
                               task_data=str(data)))
    out = tmp_path / "run"
    saved = json.loads((out / "metrics.json").read_text())
    assert saved["task"] == task and saved["task_data"] == str(data) and "GPT-1" in saved["task_paper"]
    assert (saved["train_examples"], saved["dev_examples"]) == ((16, 4) if split else (18, 2))
    assert saved["fine_tuning_epochs"] == 3 and saved["fine_tuning_steps_per_epoch"] == 1
    for name in ("fine_tuning_loss", "fine_tuning_task_loss", "fine_tuning_lm_loss"):
        assert np.isfinite(saved[name])
    # eq. (5): L_3 = L_2 + 0.5 L_1 (the epoch means of one dropout draw per step: equal up to float sums)
    assert saved["fine_tuning_loss"] == pytest.approx(saved["fine_tuning_task_loss"] + 0.5 * saved["fine_tuning_lm_loss"],
                                                      rel=1e-4)
    assert saved["truncated_examples"] == (1 if task == "multiple_choice" else 0)

    # The classifier and the LM reload; the dev accuracy is the reloaded classifier's argmax accuracy.
    classifier = keras.saving.load_model(out / "model.keras")
    lm = keras.saving.load_model(out / "lm.keras")
    assert type(classifier).__name__ == "GPTClassifier" and classifier.task == task and classifier.lm_weight == 0.5
    assert classifier.backbone.vocabulary_size == lm.backbone.vocabulary_size + 3 == saved["vocabulary_size"] + 3
    train, dev, classes = recipe.read_task_data(data, task)
    assert len(dev) == saved["dev_examples"]
    x, y, _ = recipe.task_inputs(task, dev, lm.tokenizer, task_token_ids(classifier.backbone), 48)
    special = task_token_ids(classifier.backbone)
    assert (x["token_ids"][..., 0] == special["start"]).all()
    assert ((x["token_ids"] == special["delimiter"]).sum(-1) == (0 if task == "classification" else 1)).all()
    accuracy = np.mean(classifier.predict(x, verbose=0)["logits"].argmax(-1) == y)
    assert saved["dev_accuracy"] == pytest.approx(accuracy) and 0.0 <= accuracy <= 1.0
    if task == "multiple_choice":
        assert saved["choices"] == 3 and "é" in lm.tokenizer.vocabulary  # the task's characters join the vocabulary
    else:
        assert saved["classes"] == (["neg", "pos"] if task == "classification" else [0, 1, 2][: 3 if split else 2])
    assert metrics["parameters"] == lm.count_params()


@pytest.mark.backend_free("jax")  # pure Python: the same on every leg
@pytest.mark.parametrize("task, line, message", [
    ("classification", '{"text": "a"}', r"line 2: no 'label' field; each line needs 'text', 'label'\.$"),
    ("entailment", '{"premise": "a", "label": 1}', r"line 2: no 'hypothesis' field; each line needs 'premise', "
                                                   r"'hypothesis', 'label'\.$"),
    ("similarity", '{"text_a": "a", "text_b": 3, "label": 1}', r"line 2: 'text_b' should be a non-empty string; got 3\.$"),
    ("classification", '{"text": "a", "label": 1.5}', r"line 2: 'label' should be a string or an int \(a class\); got 1\.5\.$"),
    ("multiple_choice", '{"context": "a", "choices": ["b", "c"], "label": 2}',
     r"line 2: 'label' should be the right choice's index, an int in \[0, 2\); got 2\.$"),
    ("multiple_choice", '{"context": "a", "choices": ["b", "c", "d"], "label": 0}',
     r"line 2: 3 choices, but line 1 has 2; every line needs the same number\.$"),
    ("multiple_choice", '{"context": "a", "choices": "b", "label": 0}', r"line 2: 'choices' should be a list of at least 2"),
    ("classification", '{"text": "a", "label": 1, "split": "test"}', r"line 2: 'split' should be 'train' or 'dev'; got 'test'\.$"),
    ("classification", '{"text": "a", "label": "x", "split": "dev"}', r"line 2: a 'split' field, unlike line 1; give it "
                                                                      r"on every line or on none\.$"),
    ("classification", '{"text": "a", "label": 0}', r"every line has the label 0; a classifier needs at least 2 classes\.$"),
    ("classification", "[1]", r"line 2: a JSON list, not an object with 'text', 'label'\.$"),
])
def test_gpt_recipe_refuses_bad_task_data_in_one_line(tmp_path, task, line, message):
    first = {"classification": '{"text": "b", "label": 0}', "entailment": '{"premise": "a", "hypothesis": "b", "label": 0}',
             "similarity": '{"text_a": "a", "text_b": "b", "label": 0}',
             "multiple_choice": '{"context": "a", "choices": ["b", "c"], "label": 0}'}[task]
    path = tmp_path / "task.jsonl"
    path.write_text(first + "\n" + line + "\n\n", encoding="utf-8")
    with pytest.raises(RecipeError, match=r"^gpt: --task-data .*task\.jsonl:? " + message):
        recipe.run(_args(tmp_path, task=task, task_data=str(path)))
    assert not (tmp_path / "run" / "checkpoint").exists()  # refused before the LM trains


@pytest.mark.backend_free("jax")  # pure Python: the same on every leg
def test_gpt_task_requests_and_splits(tmp_path):
    with pytest.raises(RecipeError, match=r"^gpt: --task classification needs --task-data PATH"):
        recipe.run(_args(tmp_path, task="classification"))
    with pytest.raises(RecipeError, match=r"^gpt: --task 'swag' is not one of lm, classification, entailment, "):
        recipe.run(_args(tmp_path, task="swag", task_data="x.jsonl"))
    with pytest.raises(RecipeError, match=r"^gpt: --task-data is read by --task classification / entailment / "
                                          r"similarity / multiple_choice; --task lm takes no task file\.$"):
        recipe.run(_args(tmp_path, task_data="x.jsonl"))
    with pytest.raises(RecipeError, match=r"^gpt: --task-data '.*missing\.jsonl' does not exist\.$"):
        recipe.run(_args(tmp_path, task="entailment", task_data=str(tmp_path / "missing.jsonl")))
    path = tmp_path / "one.jsonl"
    path.write_text('{"text": "a", "label": 0}\n', encoding="utf-8")
    with pytest.raises(RecipeError, match=r"every line has the label 0"):
        recipe.read_task_data(path, "classification")
    path.write_text(_task_lines("classification", n=30), encoding="utf-8")
    train, dev, classes = recipe.read_task_data(path, "classification")
    assert (len(train), len(dev), classes) == (27, 3, ["neg", "pos"])  # a seeded 10 %, the same every time
    assert recipe.read_task_data(path, "classification")[1] == dev
    texts = {json.loads(line)["text"] for line in path.read_text().splitlines()}
    assert {t[0][0] for t in train + dev} == texts
    # Round robin: the longest part loses a token at a time.
    assert recipe._truncate([[1] * 10, [2] * 3], 8) == [[1] * 5, [2] * 3]
    assert recipe._truncate([[1] * 6, [2] * 6], 8) == [[1] * 4, [2] * 4]
    assert recipe._truncate([[1, 2]], 5) == [[1, 2]]


@pytest.mark.backend_free("jax")  # argument parsing and a refusal before any model: the same on every leg
def test_the_train_command_takes_task_and_task_data_and_refuses_a_missing_file_in_one_line(tmp_path, capsys):
    from keras_paperzoo.cli import build_parser, main

    args = build_parser().parse_args(["train", "gpt", "--task", "entailment", "--task-data", "nli.jsonl"])
    assert (args.task, args.task_data) == ("entailment", "nli.jsonl")
    defaults = build_parser().parse_args(["train", "moco"])  # other recipes: unset, as their other options
    assert defaults.task is None and defaults.task_data is None
    for recipe_name, task in (("gpt", "similarity"), ("bert", "squad")):
        assert main(["train", recipe_name, "--task", task, "--output-dir", str(tmp_path / recipe_name)]) == 2
        err = capsys.readouterr().err.strip()
        assert err == f"paperzoo: error: {recipe_name}: --task {task} needs --task-data PATH, the fine-tuning examples."
