"""BertMultipleChoice: one score per (context, ending) pair, save/load and fit on each backend."""

import numpy as np
import pytest

import keras

from keras_paperzoo.models.bert.bert_backbone import BertBackbone
from keras_paperzoo.models.bert.bert_multiple_choice import BertMultipleChoice
from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model
from tests.models.bert.test_bert_heads import TINY

B, N, T = 2, 3, 8


def _inputs():
    rng = np.random.default_rng(0)
    padding_mask = np.ones((B, N, T), "int32")
    padding_mask[1, 2, 5:] = 0
    segment_ids = np.zeros((B, N, T), "int32")
    segment_ids[..., 4:] = 1  # the endings
    return {
        "token_ids": rng.integers(5, 50, size=(B, N, T)).astype("int32") * padding_mask,
        "segment_ids": segment_ids * padding_mask,
        "padding_mask": padding_mask,
    }


def test_multiple_choice(tmp_path):
    keras.utils.set_random_seed(4)
    backbone = BertBackbone(**TINY)
    model = BertMultipleChoice(backbone, num_choices=N)
    assert model.count_params() == backbone.count_params() + 16 + 1  # the vector V (and a bias)
    x = _inputs()
    logits = keras.ops.convert_to_numpy(model(x, training=False))
    assert logits.shape == (B, N)
    # Each pair is scored alone: V . C of the backbone on that one packed sequence.
    pooled = backbone({k: v.reshape(B * N, T) for k, v in x.items()}, training=False)["pooled_output"]
    kernel, bias = (keras.ops.convert_to_numpy(w) for w in model.get_layer("choice_score").weights)
    expected = (keras.ops.convert_to_numpy(pooled) @ kernel + bias).reshape(B, N)
    np.testing.assert_allclose(logits, expected, atol=1e-5)
    order = [2, 0, 1]  # permuting the choices permutes the scores
    permuted = keras.ops.convert_to_numpy(model({k: v[:, order] for k, v in x.items()}, training=False))
    np.testing.assert_allclose(permuted, logits[:, order], atol=1e-5)

    check_config_roundtrip(model)
    model.compile()
    assert float(keras.ops.convert_to_numpy(model.optimizer.learning_rate)) == pytest.approx(2e-5)
    history = check_fit(model, x, np.array([0, 2], "int32"), batch_size=1, epochs=1)
    assert "accuracy" in history.history
    check_saved_model(model, x, tmp_path)
    with pytest.raises(ValueError, match="num_choices must be an int >= 2 .* got 1"):
        BertMultipleChoice(backbone, num_choices=1)
