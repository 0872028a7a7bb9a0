"""BertBackbone, BertPretrainer and BERT's optimizer: sizes, objective values, save/load and fit on each backend."""

import numpy as np
import pytest

import keras

from keras_paperzoo.models.bert.bert_backbone import BertBackbone
from keras_paperzoo.models.bert.bert_optimizer import WarmupLinearDecay, fine_tuning_optimizer, pretraining_optimizer
from keras_paperzoo.models.bert.bert_presets import BERT_PRESETS, bert_parameter_count
from keras_paperzoo.models.bert.bert_pretrainer import BertPretrainer, masked_lm_loss
from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model

TINY = dict(vocabulary_size=99, num_layers=2, num_heads=4, hidden_dim=32, intermediate_dim=37, max_sequence_length=16)
B, T, M = 4, 12, 3


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    padding_mask = np.ones((B, T), "int32")
    padding_mask[1, 9:] = 0
    segment_ids = np.zeros((B, T), "int32")
    segment_ids[:, 6:] = 1
    return {
        "token_ids": rng.integers(5, 99, size=(B, T)).astype("int32") * padding_mask,
        "segment_ids": segment_ids * padding_mask,
        "padding_mask": padding_mask,
        "mask_positions": np.array([[1, 2, 7], [3, 4, 0], [1, 5, 8], [2, 9, 10]], "int32"),
    }


def _targets(seed=0):
    rng = np.random.default_rng(seed + 1)
    return {
        "mask_ids": rng.integers(0, 99, size=(B, M)).astype("int32"),
        "mask_weights": np.array([[1, 1, 1], [1, 1, 0], [1, 1, 1], [1, 1, 1]], "float32"),
        "next_sentence_labels": np.array([0, 1, 1, 0], "int32"),
    }


@pytest.fixture(scope="module")
def pretrainer():
    keras.utils.set_random_seed(0)
    return BertPretrainer(BertBackbone(**TINY))


def test_parameter_counts():
    # The formula against built models (a tiny one, and BERT-Tiny with the full 30,522-token
    # vocabulary and 512 positions), then at the paper's sizes: Hugging Face's
    # BertModel(BertConfig()) has 109,482,240 parameters with the pooler, its large
    # configuration 335,141,888 (counted once from transformers; building them here
    # would take half a minute). test_hf_bert checks the count against transformers too.
    tiny = BertBackbone(**TINY)
    assert tiny.count_params() == bert_parameter_count(**TINY) == 18_442
    with keras.device("cpu"):
        preset = BertBackbone.from_preset("bert_tiny", num_segments=3)
    assert preset.count_params() == bert_parameter_count(**preset.get_config()) == 4_386_048
    assert bert_parameter_count(**BERT_PRESETS["bert_base"]["config"]) == 109_482_240
    assert bert_parameter_count(**BERT_PRESETS["bert_large"]["config"]) == 335_141_888


def test_backbone_outputs_and_padding(pretrainer):
    backbone = pretrainer.backbone
    x = {k: v for k, v in _inputs().items() if k != "mask_positions"}
    out = backbone(x, training=False)
    sequence = keras.ops.convert_to_numpy(out["sequence_output"])
    pooled = keras.ops.convert_to_numpy(out["pooled_output"])
    assert sequence.shape == (B, T, 32) and pooled.shape == (B, 32)
    assert np.all(np.abs(pooled) <= 1.0)  # tanh pooler
    # Padding is invisible: changing padded tokens leaves the real tokens' states unchanged.
    changed = {k: v.copy() for k, v in x.items()}
    changed["token_ids"][1, 9:] = 42
    again = keras.ops.convert_to_numpy(backbone(changed, training=False)["sequence_output"])
    np.testing.assert_allclose(again[1, :9], sequence[1, :9], atol=1e-5)
    # Segments matter: B's tokens with segment id 0 give other states.
    same_segment = dict(x, segment_ids=np.zeros((B, T), "int32"))
    other = keras.ops.convert_to_numpy(backbone(same_segment, training=False)["sequence_output"])
    assert np.max(np.abs(other[0, 6:] - sequence[0, 6:])) > 1e-3


def test_arguments_are_validated():
    with pytest.raises(ValueError, match="hidden_dim 30 should be divisible by num_heads 4"):
        BertBackbone(**{**TINY, "hidden_dim": 30})
    with pytest.raises(ValueError, match="activation 'tanh'"):
        BertBackbone(**TINY, activation="tanh")
    with pytest.raises(ValueError, match="num_layers must be a positive int"):
        BertBackbone(**{**TINY, "num_layers": 0})
    with pytest.raises(ValueError, match="Unknown BertBackbone preset 'bert_huge'"):
        BertBackbone.from_preset("bert_huge")
    with pytest.raises(ValueError, match="needs a BertBackbone"):
        BertPretrainer(keras.Sequential([keras.layers.Dense(2)]))


def test_objective_values(pretrainer):
    x, y = _inputs(), _targets()
    out = pretrainer(x, training=False)
    mlm = keras.ops.convert_to_numpy(out["mlm_logits"]).astype("float64")
    nsp = keras.ops.convert_to_numpy(out["nsp_logits"]).astype("float64")
    assert mlm.shape == (B, M, 99) and nsp.shape == (B, 2)

    def cross_entropy(logits, labels):
        logits = logits - logits.max(-1, keepdims=True)
        log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
        return -np.take_along_axis(log_p, labels[..., None], -1)[..., 0]

    w = y["mask_weights"]
    expected = (cross_entropy(mlm, y["mask_ids"]) * w).sum() / w.sum() + cross_entropy(nsp, y["next_sentence_labels"]).mean()
    loss = pretrainer.compute_loss(x, y, out)
    np.testing.assert_allclose(float(keras.ops.convert_to_numpy(loss)), expected, rtol=1e-5)
    # Slots with weight 0 do not count, whatever they hold.
    other = dict(y, mask_ids=y["mask_ids"].copy())
    other["mask_ids"][1, 2] = (y["mask_ids"][1, 2] + 1) % 99
    a = masked_lm_loss(y["mask_ids"], out["mlm_logits"], w)
    b = masked_lm_loss(other["mask_ids"], out["mlm_logits"], w)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b), rtol=1e-6)
    # The MLM output layer is the token embedding, transposed (tied weights).
    assert pretrainer.masked_lm_head.token_embedding is pretrainer.backbone.token_embedding
    with pytest.raises(ValueError, match="y as a dict with mask_ids"):
        pretrainer.compute_loss(x, y["mask_ids"], out)


def test_schedule_and_weight_decay(pretrainer):
    schedule = WarmupLinearDecay(1e-4, warmup_steps=100, total_steps=1100)
    # One schedule for BERT and GPT-1, in training/schedules.py.
    assert keras.saving.get_registered_name(WarmupLinearDecay) == "keras_paperzoo>WarmupLinearDecay"
    values = [float(keras.ops.convert_to_numpy(schedule(s))) for s in (0, 50, 100, 600, 1100, 2000)]
    np.testing.assert_allclose(values, [0.0, 5e-5, 1e-4, 5e-5, 0.0, 0.0], atol=1e-12)
    paper = pretraining_optimizer()
    assert (paper._learning_rate.warmup_steps, paper._learning_rate.total_steps) == (10_000, 1_000_000)
    assert pretraining_optimizer(total_steps=2_000)._learning_rate.warmup_steps == 20
    assert fine_tuning_optimizer(300)._learning_rate.warmup_steps == 30
    assert (paper.beta_1, paper.beta_2, paper.weight_decay, paper.epsilon) == (0.9, 0.999, 0.01, 1e-6)
    # The reference create_optimizer clips to global norm 1.0, in pre-training and fine-tuning.
    assert paper.global_clipnorm == 1.0 and fine_tuning_optimizer(300).global_clipnorm == 1.0
    assert type(paper).from_config(paper.get_config()).global_clipnorm == 1.0
    paper.build(pretrainer.trainable_variables)
    decayed = {v.path for v in pretrainer.trainable_variables if paper.decays(v)}
    assert any(p.endswith("transformer_layer_0/feedforward_intermediate_dense/kernel") for p in decayed)
    assert any(p.endswith("token_embedding/embeddings") for p in decayed)
    assert not any("layer_norm" in p or p.endswith("bias") for p in decayed)
    with pytest.raises(ValueError, match="total_steps must be a positive int"):
        pretraining_optimizer(total_steps=0)


def test_config_save_load_and_fit(pretrainer, tmp_path):
    check_config_roundtrip(pretrainer.backbone)
    check_config_roundtrip(pretrainer)
    x, y = _inputs(), _targets()
    pretrainer.compile(total_steps=4)
    history = check_fit(pretrainer, x, y, batch_size=2, epochs=1)
    assert {"loss", "mlm_loss", "nsp_loss", "mlm_accuracy", "nsp_accuracy"} <= set(history.history)
    loaded = check_saved_model(pretrainer, x, tmp_path, outputs_of=lambda m, x: m(x, training=False)["mlm_logits"])
    assert isinstance(loaded.backbone, BertBackbone)
    assert loaded.masked_lm_head.token_embedding is loaded.backbone.token_embedding
