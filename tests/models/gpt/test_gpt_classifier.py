"""GPT-1 fine-tuning: last-token head, L_3 = L_2 + 0.5 L_1, schedule, save/load, fit."""

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.models.gpt.gpt_backbone import GPTBackbone
from keras_paperzoo.models.gpt.gpt_classifier import GPTClassifier, LastTokenPooling, fine_tuning_optimizer
from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model

V, T = 20, 8
RNG = np.random.default_rng(0)
LENGTHS = np.array([8, 5, 3, 6])
MASK = np.arange(T)[None, :] < LENGTHS[:, None]
IDS = np.where(MASK, RNG.integers(1, V, (4, T)), 0).astype("int32")
X = {"token_ids": IDS, "padding_mask": MASK}
Y = np.array([0, 1, 1, 0])


def np_(x):
    return np.asarray(ops.convert_to_numpy(x))


@pytest.fixture(scope="module")
def classifier():
    backbone = GPTBackbone(vocabulary_size=V, num_layers=2, hidden_dim=32, num_heads=4, intermediate_dim=64,
                           max_sequence_length=T, dropout=0.0, norm_first=False)  # GPT-1's post-norm
    return GPTClassifier(backbone, num_classes=2)


def test_head_reads_the_last_real_token(classifier):
    hidden = np_(classifier.backbone(IDS))  # (4, T, D)
    pooled = np_(LastTokenPooling()(hidden, MASK))
    np.testing.assert_allclose(pooled, hidden[np.arange(4), LENGTHS - 1], atol=1e-6)
    out = classifier(X)
    assert tuple(out["logits"].shape) == (4, 2) and tuple(out["lm_logits"].shape) == (4, T, V)


def _log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def test_loss_is_task_plus_half_the_language_model_loss(classifier):
    out = {k: np_(v) for k, v in classifier(X).items()}
    task = -_log_softmax(out["logits"])[np.arange(4), Y].mean()  # L_2
    lm_logp = _log_softmax(out["lm_logits"][:, :-1])  # predicts tokens 1..T-1
    token_nll = -np.take_along_axis(lm_logp, IDS[:, 1:, None], axis=-1)[..., 0]
    weights = MASK[:, 1:]
    lm = (token_nll * weights).sum() / weights.sum()  # L_1 over real tokens only
    assert classifier.lm_weight == 0.5  # lambda, GPT-1 Sec. 4.1
    loss = float(np_(classifier.compute_loss(X, Y, classifier(X))))
    np.testing.assert_allclose(loss, task + 0.5 * lm, rtol=1e-5)


def test_fine_tuning_schedule_warms_up_over_0_2_percent_then_decays_linearly():
    opt = fine_tuning_optimizer(total_steps=10_000)
    schedule = opt._learning_rate
    lrs = [float(np_(schedule(s))) for s in (0, 10, 20, 5010, 10_000)]
    np.testing.assert_allclose(lrs, [0.0, 3.125e-5, 6.25e-5, 3.125e-5, 0.0], rtol=1e-5, atol=1e-12)


@pytest.mark.parametrize(
    "kwargs, message",
    [(dict(num_classes=1), "num_classes must be an int >= 2"), (dict(num_classes=2, lm_weight=-1), "lm_weight"),
     (dict(num_classes=2, dropout=1.5), "dropout must be in")],
)
def test_bad_arguments(classifier, kwargs, message):
    with pytest.raises(ValueError, match=message):
        GPTClassifier(classifier.backbone, **kwargs)


def test_fit_logs_the_three_losses_and_accuracy_then_saves(classifier, tmp_path):
    keras.utils.set_random_seed(0)
    ids = RNG.integers(1, V, (64, T)).astype("int32")
    labels = (ids == 3).any(axis=1).astype("int32")  # does the sequence contain token 3?
    data = {"token_ids": ids, "padding_mask": np.ones((64, T), bool)}
    classifier.compile(optimizer=keras.optimizers.Adam(1e-3))
    history = check_fit(classifier, data, labels, epochs=2, batch_size=16)
    assert {"loss", "task_loss", "lm_loss", "accuracy"} <= set(history.history)
    np.testing.assert_allclose(history.history["loss"][-1],
                               history.history["task_loss"][-1] + 0.5 * history.history["lm_loss"][-1], rtol=1e-3)
    check_config_roundtrip(classifier)
    check_saved_model(classifier, X, tmp_path, outputs_of=lambda m, x: m(x)["logits"])
