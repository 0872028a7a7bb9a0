"""BertClassifier and BertSpanExtractor: outputs, loss values, save/load and fit on each backend."""

import numpy as np
import pytest

import keras

from keras_paperzoo.models.bert.bert_backbone import BertBackbone
from keras_paperzoo.models.bert.bert_classifier import BertClassifier
from keras_paperzoo.models.bert.bert_span_extractor import BertSpanExtractor, best_spans, span_loss
from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model

TINY = dict(vocabulary_size=50, num_layers=2, num_heads=2, hidden_dim=16, intermediate_dim=32, max_sequence_length=16)
B, T = 4, 10


def _inputs():
    rng = np.random.default_rng(0)
    padding_mask = np.ones((B, T), "int32")
    padding_mask[2, 7:] = 0
    return {
        "token_ids": rng.integers(5, 50, size=(B, T)).astype("int32") * padding_mask,
        "segment_ids": np.zeros((B, T), "int32"),
        "padding_mask": padding_mask,
    }


def test_classifier(tmp_path):
    keras.utils.set_random_seed(1)
    backbone = BertBackbone(**TINY)
    classifier = BertClassifier(backbone, num_classes=3)
    assert classifier.count_params() == backbone.count_params() + 16 * 3 + 3  # only W in R^{K x H} and b are new
    x, y = _inputs(), np.array([0, 1, 2, 1], "int32")
    assert tuple(classifier(x).shape) == (B, 3)
    check_config_roundtrip(classifier)
    classifier.compile(total_steps=4)
    assert classifier.optimizer.weight_decay == 0.01 and classifier.optimizer.epsilon == 1e-6
    history = check_fit(classifier, x, y, batch_size=2, epochs=1)
    assert "accuracy" in history.history
    check_saved_model(classifier, x, tmp_path)
    with pytest.raises(ValueError, match="num_classes must be an int >= 2; got 1"):
        BertClassifier(backbone, num_classes=1)


def test_best_spans():
    start = np.array([[0.0, 5.0, 1.0, 0.0], [3.0, 0.0, 0.0, 9.0]])
    end = np.array([[0.0, 0.0, 4.0, 0.0], [9.0, 0.0, 1.0, 0.0]])
    # Row 1: the best end (0) lies before the best start (3), which would score 18;
    # with end >= start the best is (0, 0) = 12.
    np.testing.assert_array_equal(best_spans(start, end), [[1, 2], [0, 0]])
    np.testing.assert_array_equal(best_spans(start, end, max_answer_length=1), [[1, 1], [0, 0]])
    allowed = np.array([[True, True, True, True], [False, True, True, True]])
    np.testing.assert_array_equal(best_spans(start, end, allowed=allowed)[1], [3, 3])


def test_span_extractor(tmp_path):
    keras.utils.set_random_seed(2)
    reader = BertSpanExtractor(BertBackbone(**TINY))
    x = _inputs()
    y = {"start_positions": np.array([1, 2, 3, 4], "int32"), "end_positions": np.array([2, 2, 5, 6], "int32")}
    out = reader(x, training=False)
    start = keras.ops.convert_to_numpy(out["start_logits"]).astype("float64")
    end = keras.ops.convert_to_numpy(out["end_logits"]).astype("float64")
    assert start.shape == (B, T) and np.all(start[2, 7:] < -1e8) and np.all(end[2, 7:] < -1e8)

    def nll(logits, labels):
        logits = logits - logits.max(-1, keepdims=True)
        return -(logits[np.arange(B), labels] - np.log(np.exp(logits).sum(-1)))

    expected = 0.5 * (nll(start, y["start_positions"]).mean() + nll(end, y["end_positions"]).mean())
    loss = span_loss(y["start_positions"], y["end_positions"], out["start_logits"], out["end_logits"])
    np.testing.assert_allclose(float(keras.ops.convert_to_numpy(loss)), expected, rtol=1e-5)
    check_config_roundtrip(reader)
    reader.compile()
    assert float(keras.ops.convert_to_numpy(reader.optimizer.learning_rate)) == pytest.approx(5e-5)
    history = check_fit(reader, x, y, batch_size=2, epochs=1)
    assert {"start_accuracy", "end_accuracy"} <= set(history.history)
    check_saved_model(reader, x, tmp_path, outputs_of=lambda m, x: m(x, training=False)["start_logits"])
    with pytest.raises(ValueError, match="y as a dict with start_positions"):
        reader.compute_loss(x, y["start_positions"], out)
