"""Hugging Face GPT-2 -> GPTBackbone: hidden states and logits agree, from the object and from a folder."""

import json

import numpy as np
import pytest

from keras import ops

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

from keras_paperzoo.convert.hf import from_transformers  # noqa: E402
from keras_paperzoo.convert.hf_gpt2 import gpt2_config_from_hf, gpt2_from_hf  # noqa: E402
from keras_paperzoo.models.gpt.gpt_causal_lm import GPTCausalLM  # noqa: E402

CONFIG = dict(n_embd=32, n_layer=2, n_head=4, vocab_size=99, n_positions=64)
IDS = np.random.default_rng(0).integers(0, 99, (2, 11)).astype("int64")


@pytest.fixture(scope="module")
def hf_model():
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(**CONFIG)).eval()
    with torch.no_grad():  # larger, non-trivial weights (LayerNorms included) so mistakes show
        for name, parameter in model.named_parameters():
            parameter.add_(0.2 * torch.randn_like(parameter))
    return model


@pytest.fixture(scope="module")
def hf_outputs(hf_model):
    with torch.no_grad():
        out = hf_model(torch.as_tensor(IDS), output_hidden_states=True)
    return out.hidden_states[-1].numpy(), out.logits.numpy()


def _check(backbone, hf_outputs):
    hidden, logits = hf_outputs
    np.testing.assert_allclose(np.asarray(ops.convert_to_numpy(backbone(IDS.astype("int32")))), hidden, atol=1e-4, rtol=0)
    lm = GPTCausalLM(backbone)
    np.testing.assert_allclose(np.asarray(ops.convert_to_numpy(lm(IDS.astype("int32")))), logits, atol=1e-4, rtol=0)


def test_from_the_model_object(hf_model, hf_outputs):
    backbone, tokenizer = from_transformers(hf_model, return_tokenizer=True)
    assert tokenizer is None and backbone.num_layers == 2 and backbone.norm_first
    _check(backbone, hf_outputs)


def test_from_a_safetensors_folder_with_a_byte_pair_tokenizer(hf_model, hf_outputs, tmp_path):
    hf_model.save_pretrained(tmp_path, safe_serialization=True)
    vocabulary = {"<|endoftext|>": 0, "a": 1, "b": 2, "ab": 3, "\u0120": 4, "\u0120a": 5, "\u0120ab": 6}
    (tmp_path / "vocab.json").write_text(json.dumps(vocabulary), encoding="utf-8")
    (tmp_path / "merges.txt").write_text("#version: 0.2\na b\n\u0120 a\n\u0120a b\n", encoding="utf-8")
    backbone, tokenizer = from_transformers(str(tmp_path), return_tokenizer=True)
    _check(backbone, hf_outputs)
    reference = transformers.GPT2Tokenizer(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt"))
    for text in ("ab ab a", "ba a b"):
        ids = np.asarray(ops.convert_to_numpy(tokenizer(text))).tolist()
        assert ids == reference(text)["input_ids"]
    assert np.asarray(ops.convert_to_numpy(tokenizer("ab ab a"))).tolist() == [3, 4, 3, 5]  # "ab", " ", "ab", " a"
    expected = [3, 4]  # greedy continuation of the converted model, computed with transformers
    with torch.no_grad():
        for _ in range(4):
            expected.append(int(hf_model(torch.as_tensor([expected])).logits[0, -1].argmax()))
    assert GPTCausalLM(backbone).generate([[3, 4]], max_length=6, sampler="greedy")[0] == expected


def test_the_bare_gpt2_model_has_no_prefix(hf_model, hf_outputs):
    weights = {k: v.numpy() for k, v in hf_model.transformer.state_dict().items()}
    backbone, _ = gpt2_from_hf(hf_model.config.to_dict(), weights)
    _check(backbone, hf_outputs)


def test_unsupported_settings_and_missing_weights_are_named(hf_model):
    config = hf_model.config.to_dict()
    with pytest.raises(ValueError, match="activation_function 'relu'"):
        gpt2_config_from_hf(dict(config, activation_function="relu"))
    with pytest.raises(ValueError, match="scale_attn_by_inverse_layer_idx"):
        gpt2_config_from_hf(dict(config, scale_attn_by_inverse_layer_idx=True))
    weights = {k: v.numpy() for k, v in hf_model.transformer.state_dict().items() if k != "h.1.mlp.c_fc.bias"}
    with pytest.raises(ValueError, match="h.1.mlp.c_fc.bias"):
        gpt2_from_hf(config, weights)
