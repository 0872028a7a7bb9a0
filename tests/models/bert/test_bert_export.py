"""BERT exports: the classifier to a SavedModel and the backbone to LiteRT, token-id inputs, within 1e-4 of Keras."""

import numpy as np
import pytest

import keras

from keras_paperzoo.export import export_model
from keras_paperzoo.models.bert.bert_backbone import BertBackbone
from keras_paperzoo.models.bert.bert_classifier import BertClassifier

TINY = dict(vocabulary_size=50, num_layers=2, num_heads=2, hidden_dim=16, intermediate_dim=32, max_sequence_length=16)

# On JAX and PyTorch the export runs in a TensorFlow child process that loads the model
# from a .keras file: it knows the BERT classes through `import keras_paperzoo.models`.

pytestmark = pytest.mark.needs_tensorflow  # SavedModel and LiteRT export


def _inputs():
    rng = np.random.default_rng(0)
    padding_mask = np.ones((3, 12), "int32")
    padding_mask[1, 8:] = 0
    return {
        "token_ids": rng.integers(0, 50, size=(3, 12)).astype("int32") * padding_mask,
        "segment_ids": np.concatenate([np.zeros((3, 6), "int32"), np.ones((3, 6), "int32")], 1) * padding_mask,
        "padding_mask": padding_mask,
    }


def test_classifier_to_saved_model_and_backbone_to_litert(tmp_path, capsys):
    keras.utils.set_random_seed(0)
    backbone = BertBackbone(**TINY)
    classifier = BertClassifier(backbone, num_classes=2)
    # `paperzoo export` of a saved classifier: sample token ids of the default length (16).
    classifier.save(tmp_path / "classifier.keras")
    from keras_paperzoo.cli import main

    capsys.readouterr()
    assert main(["export", str(tmp_path / "classifier.keras"), "--format", "saved_model"]) == 0
    out = capsys.readouterr().out
    assert "classifier_saved_model" in out and float(out.rsplit("=", 1)[1]) <= 1e-4
    result = export_model(backbone, str(tmp_path / "backbone.tflite"), format="litert", sample_inputs=_inputs())
    assert result.ok, result
