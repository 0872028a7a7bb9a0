"""from_transformers on BERT: a transformers model with random weights (no download) converts exactly."""

import json

import numpy as np
import pytest

import keras

from keras_paperzoo.convert.hf import from_transformers
from keras_paperzoo.models.bert.bert_backbone import BertBackbone

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "##s", "dog", "."]


@pytest.fixture(scope="module")
def hf_bert():
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
        max_position_embeddings=64,
    )
    return transformers.BertModel(config).eval()


@pytest.fixture(scope="module")
def batch():
    rng = np.random.default_rng(0)
    token_ids = rng.integers(0, 99, size=(2, 12)).astype("int32")
    segment_ids = np.zeros((2, 12), "int32")
    segment_ids[:, 7:] = 1
    padding_mask = np.ones((2, 12), "int32")
    padding_mask[1, 9:] = 0  # the second sequence has 3 padding tokens
    return {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}


def _hf_outputs(model, batch):
    with torch.no_grad():
        out = model(
            input_ids=torch.tensor(batch["token_ids"], dtype=torch.long),
            token_type_ids=torch.tensor(batch["segment_ids"], dtype=torch.long),
            attention_mask=torch.tensor(batch["padding_mask"], dtype=torch.long),
        )
    return out.last_hidden_state.numpy(), out.pooler_output.numpy()


def _check_same(backbone, hf_model, batch):
    expected_sequence, expected_pooled = _hf_outputs(hf_model, batch)
    out = backbone(batch, training=False)
    sequence = keras.ops.convert_to_numpy(out["sequence_output"])
    pooled = keras.ops.convert_to_numpy(out["pooled_output"])
    real = batch["padding_mask"].astype(bool)  # padded positions' states are not defined alike
    assert np.max(np.abs(sequence[real] - expected_sequence[real])) < 1e-4
    assert np.max(np.abs(pooled - expected_pooled)) < 1e-4


def test_from_model_object(hf_bert, batch):
    backbone = from_transformers(hf_bert)
    assert isinstance(backbone, BertBackbone)
    assert backbone.count_params() == sum(p.numel() for p in hf_bert.parameters())
    _check_same(backbone, hf_bert, batch)


def test_from_safetensors_folder_with_tokenizer(hf_bert, batch, tmp_path):
    hf_bert.save_pretrained(tmp_path, safe_serialization=True)
    (tmp_path / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": True}))
    backbone, tokenizer = from_transformers(str(tmp_path), return_tokenizer=True)
    _check_same(backbone, hf_bert, batch)
    ids = keras.ops.convert_to_numpy(tokenizer("The cats sat."))
    assert ids.tolist() == [5, 6, 10, 7, 12]


def test_head_model_prefix_and_errors(hf_bert, batch, tmp_path):
    pretraining = transformers.BertForPreTraining(hf_bert.config).eval()
    pretraining.bert.load_state_dict(hf_bert.state_dict())
    _check_same(from_transformers(pretraining), hf_bert, batch)  # "bert." stripped, cls.* ignored

    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama"}))
    with pytest.raises(ValueError, match="model_type 'llama'.*'bert', 'gpt2'"):
        from_transformers(str(tmp_path))
    (tmp_path / "config.json").write_text(json.dumps(hf_bert.config.to_dict()))
    with pytest.raises(ValueError, match="neither model.safetensors nor pytorch_model.bin"):
        from_transformers(str(tmp_path))
    relative = transformers.BertConfig(**{**hf_bert.config.to_dict(), "position_embedding_type": "relative_key"})
    with pytest.raises(ValueError, match="position_embedding_type 'relative_key'"):
        from_transformers(transformers.BertModel(relative))
    state = {k: v for k, v in hf_bert.state_dict().items() if k != "encoder.layer.1.output.dense.weight"}
    broken = type("Broken", (), {"config": hf_bert.config, "state_dict": lambda self: state})()
    with pytest.raises(ValueError, match="no weight 'encoder.layer.1.output.dense.weight'"):
        from_transformers(broken)
