"""`paperzoo train transformer`: a short run on a small toy corpus writes the model, metrics and BLEU."""

import argparse
import json

import keras
import numpy as np
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


def small_corpus(test_pairs):
    """A stand-in for `transformer.load_corpus`: the toy corpus, 64 training, 16 validation, `test_pairs` test pairs."""

    def load_corpus(dataset, seed):
        return ("toy", toy_translation_corpus(64, seed), toy_translation_corpus(16, seed + 1),
                toy_translation_corpus(test_pairs, seed + 2))

    return load_corpus


@pytest.mark.one_leg("tensorflow")
def test_toy_run_writes_model_metrics_and_translations(tmp_path, monkeypatch):
    monkeypatch.setattr(transformer, "load_corpus", small_corpus(4))
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


def test_repetitive_count_flags_runs_of_characters_and_words():
    texts = ["A spppppppan runs.", "a dog dog dog dog runs", "A good man sleeps.", "a dog dog dog runs"]
    assert transformer.repetitive_count(texts) == 2


@pytest.mark.one_leg("tensorflow")
def test_snapshots_are_averaged_and_the_vocabulary_is_cached(tmp_path, monkeypatch):
    """Three epochs with snapshots, the mean of the last two loaded; alpha picked on validation."""
    monkeypatch.setattr(transformer, "load_corpus", small_corpus(3))
    corpus = transformer.load_corpus(None, 0)
    metrics = transformer.train_and_evaluate(
        corpus, tmp_path / "run", epochs=3, steps_per_epoch=1, batch_size=8, verbose=0, beam_size=2,
        warmup_steps=2, peak_rate=1e-3, buckets=(24, 64), average_last=2, tune_length_penalty=(0.6, 1.0),
        tune_pairs=4,
    )
    snapshots = sorted((tmp_path / "run" / "snapshots").glob("*.npz"))
    assert [p.name for p in snapshots] == ["epoch_0002.npz", "epoch_0003.npz"]
    assert metrics["averaged_snapshots"] == ["epoch_0002.npz", "epoch_0003.npz"]
    assert metrics["updates_done"] == 3 and metrics["warmup_steps"] == 2 and metrics["buckets"] == [24, 64]
    assert set(metrics["validation_bleu_by_length_penalty"]) == {"0.6", "1.0"}
    assert metrics["length_penalty"] in (0.6, 1.0)
    model = keras.saving.load_model(tmp_path / "run" / "model.keras")
    expected = [np.mean([np.load(p)[f"arr_{i}"] for p in snapshots], axis=0) for i in range(len(np.load(snapshots[0]).files))]
    for weight, mean in zip(model.get_weights(), expected):
        np.testing.assert_allclose(weight, mean, rtol=1e-5, atol=1e-6)
    vocabulary = (tmp_path / "run" / "vocabulary.txt").read_text(encoding="utf-8").split("\n")[:-1]
    assert vocabulary[:4] == ["[PAD]", "[UNK]", "[START]", "[END]"]
    assert metrics["vocabulary_size"] == len(vocabulary)
