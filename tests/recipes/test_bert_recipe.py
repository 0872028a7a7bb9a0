"""`paperzoo train bert`: pre-training then fine-tuning on the built-in sample, outputs written and loadable."""

import argparse
import json

import numpy as np
import pytest

import keras

from keras_paperzoo.recipes import bert as recipe
from keras_paperzoo.recipes.common import RecipeError


def _args(tmp_path, **overrides):
    values = dict(recipe="bert", dataset=None, epochs=1, steps_per_epoch=2, batch_size=16, image_size=None,
                  preset=None, output_dir=str(tmp_path), backend=None, seed=0, resume=False, verbose=0)
    values.update(overrides)
    return argparse.Namespace(**values)


@pytest.mark.one_leg("torch")
def test_bert_recipe_on_the_sample(tmp_path, monkeypatch):
    from keras_paperzoo.models.bert import BertBackbone

    build = recipe.build_backbone

    def micro(preset, vocabulary_size, sequence_length, seed=0):  # the recipe's preset check, a 1-layer model
        build(preset, vocabulary_size, 8, seed)
        return BertBackbone(vocabulary_size, num_layers=1, num_heads=2, hidden_dim=16, intermediate_dim=32,
                            max_sequence_length=sequence_length)

    monkeypatch.setattr(recipe, "build_backbone", micro)
    metrics = recipe.run(_args(tmp_path))
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert saved["preset"] == "bert_tiny" and saved["dataset"] == "sample"
    assert saved["fine_tuning_task"] == "sample_sentiment"
    assert saved["steps_per_epoch"] == 2 and saved["epochs"] == 1 and saved["sequence_length"] == 64
    for name in ("pretraining_loss", "pretraining_mlm_loss", "pretraining_nsp_loss"):
        assert np.isfinite(saved[name])
    # At initialisation the MLM loss is about ln(V); the NSP loss about ln 2.
    assert abs(saved["pretraining_mlm_loss"] - np.log(saved["vocabulary_size"])) < 1.5
    assert 0.0 <= saved["dev_accuracy"] <= 1.0
    vocabulary = (tmp_path / "vocabulary.txt").read_text().split("\n")
    assert vocabulary[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    backbone = keras.saving.load_model(tmp_path / "backbone.keras")
    assert backbone.count_params() == metrics["parameters"]
    classifier = keras.saving.load_model(tmp_path / "model.keras")
    x = {k: np.ones((2, 8), "int32") for k in ("token_ids", "segment_ids", "padding_mask")}
    assert tuple(classifier(x).shape) == (2, 2)
    assert not (tmp_path / "checkpoint").exists()


def test_bad_requests_are_one_clear_error(tmp_path):
    with pytest.raises(RecipeError, match="--preset 'vit_b16' is not a BERT preset; known: bert_base"):
        recipe.run(_args(tmp_path / "a", preset="vit_b16"))
    with pytest.raises(RecipeError, match="Unknown text corpus 'nowhere.txt'"):
        recipe.run(_args(tmp_path / "b", dataset="nowhere.txt"))
