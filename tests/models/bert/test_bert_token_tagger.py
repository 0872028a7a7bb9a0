"""BertTokenTagger: first-subword loss against NumPy, save/load and fit on each backend."""

import numpy as np
import pytest

import keras

from keras_paperzoo.models.bert.bert_backbone import BertBackbone
from keras_paperzoo.models.bert.bert_token_tagger import BertTokenTagger, tagging_loss
from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model
from tests.models.bert.test_bert_heads import TINY, B, T, _inputs


def test_token_tagger(tmp_path):
    keras.utils.set_random_seed(3)
    backbone = BertBackbone(**TINY)
    tagger = BertTokenTagger(backbone, num_tags=5)
    assert tagger.count_params() == backbone.count_params() + 16 * 5 + 5  # W in R^{K x H} and b only
    x = _inputs()
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, size=(B, T)).astype("int32")
    y[:, 0] = -1  # [CLS]
    y[:, 3::2] = -1  # non-first sub-tokens
    y[2, 7:] = -1  # padding
    logits = keras.ops.convert_to_numpy(tagger(x, training=False))
    assert logits.shape == (B, T, 5)

    log_p = logits.astype("float64") - logits.max(-1, keepdims=True)
    log_p = log_p - np.log(np.exp(log_p).sum(-1, keepdims=True))
    labelled = y >= 0
    nll = -np.take_along_axis(log_p, np.maximum(y, 0)[..., None], -1)[..., 0]
    np.testing.assert_allclose(float(keras.ops.convert_to_numpy(tagging_loss(y, logits))),
                               nll[labelled].mean(), rtol=1e-5)
    # Ignored positions add nothing, whatever their logits; sample weights weigh the mean.
    other = logits.copy()
    other[~labelled] += rng.normal(0, 5, size=other[~labelled].shape)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(tagging_loss(y, other)),
                               keras.ops.convert_to_numpy(tagging_loss(y, logits)), rtol=1e-6)
    weights = np.ones((B, T), "float32")
    weights[0] = 0.0
    np.testing.assert_allclose(float(keras.ops.convert_to_numpy(tagging_loss(y, logits, weights))),
                               nll[labelled & (weights > 0)].mean(), rtol=1e-5)

    check_config_roundtrip(tagger)
    tagger.compile()
    assert float(keras.ops.convert_to_numpy(tagger.optimizer.learning_rate)) == pytest.approx(5e-5)
    history = check_fit(tagger, x, y, batch_size=2, epochs=1)
    assert "accuracy" in history.history
    check_saved_model(tagger, x, tmp_path)
    with pytest.raises(ValueError, match="num_tags must be an int >= 2; got 1"):
        BertTokenTagger(backbone, num_tags=1)
