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
