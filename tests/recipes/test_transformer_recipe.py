"""`paperzoo train transformer`: a short run on a small toy corpus writes the model, metrics and BLEU."""

import argparse
import json

import keras
import pytest

from keras_paperzoo.data.translation_toy import toy_translation_corpus
from keras_paperzoo.recipes import transformer
from keras_paperzoo.recipes.common import RecipeError

pytest.importorskip("sacrebleu")


def args(tmp_path, **overrides):
    values = dict(dataset=None, epochs=1, steps_per_epoch=2, batch_size=8, preset=None,
                  output_dir=str(tmp_path / "run"), seed=0, resume=False, verbose=0)
    values.update(overrides)
    return argparse.Namespace(**values)


def test_toy_run_writes_model_metrics_and_translations(tmp_path, monkeypatch):
    def small_corpus(dataset, seed):
        return ("toy", toy_translation_corpus(64, seed), toy_translation_corpus(16, seed + 1),
                toy_translation_corpus(4, seed + 2))

    monkeypatch.setattr(transformer, "load_corpus", small_corpus)
    metrics = transformer.run(args(tmp_path))
    saved = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert saved["preset"] == "transformer_tiny" and saved["dataset"] == "toy"
    assert saved["epochs"] == 1 and saved["steps_per_epoch"] == 2 and saved["warmup_steps"] == 1
    assert 0.0 <= saved["test_bleu"] <= 100.0 and "tok:13a" in saved["test_bleu_signature"]
    assert len(saved["samples"]) == 4 and saved["backend"] == keras.backend.backend()
    lines = (tmp_path / "run" / "test_translations.txt").read_text(encoding="utf-8").split("\n")
    assert len(lines) == 5  # four translations and the final newline
    model = keras.saving.load_model(tmp_path / "run" / "model.keras")
    assert model.count_params() == metrics["parameters"]
    assert len(model.translate(["Ein Hund läuft."], beam_size=1, max_length=3)) == 1
    assert not (tmp_path / "run" / "checkpoint").exists()


def test_the_built_in_corpus_and_bad_datasets(tmp_path):
    name, train, valid, test = transformer.load_corpus(None, seed=0)
    assert name == "toy" and len(train[0]) == 4000 and len(valid[1]) == 200 and len(test[0]) == 200
    with pytest.raises(RecipeError, match="neither 'toy' nor a folder of Multi30k files"):
        transformer.load_corpus(str(tmp_path / "missing"), seed=0)
    with pytest.raises(RecipeError, match="No train.de or train.de.gz"):
        transformer.load_corpus(str(tmp_path), seed=0)
    with pytest.raises(RecipeError, match="Unknown --preset 'nope'"):
        transformer.run(args(tmp_path, preset="nope"))
