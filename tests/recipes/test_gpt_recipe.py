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


@pytest.mark.one_leg("torch")
def test_gpt_recipe_on_the_built_in_text_writes_metrics_samples_and_model(tmp_path, monkeypatch):
    # The default run with a one-layer model and short samples: XLA compile time dominates.
    monkeypatch.setattr(recipe, "SAMPLE_LENGTH", 24)
    tiny = dict(GPT_PRESETS["gpt_char_tiny"]["config"], num_layers=1, hidden_dim=32, intermediate_dim=64,
                max_sequence_length=48)
    monkeypatch.setitem(GPT_PRESETS, "gpt_char_test", {"description": "test", "config": tiny})
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
    tmp_path, monkeypatch, shared_data
):
    from keras_paperzoo.reproductions import gpt_shakespeare as app

    text = tmp_path / "shakespeare_head.txt"  # the first 20,000 characters: the test stays short
    text.write_text((shared_data / "tinyshakespeare.txt").read_text(encoding="utf-8")[:20_000], encoding="utf-8")
    monkeypatch.setattr(recipe, "SAMPLE_LENGTH", 24)
    tiny = dict(GPT_PRESETS["gpt_char_tiny"]["config"], num_layers=1, hidden_dim=32, intermediate_dim=64,
                max_sequence_length=48)
    monkeypatch.setitem(GPT_PRESETS, "gpt_char_test", {"description": "test", "config": tiny})
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
