"""Hugging Face `transformers` checkpoints as keras-paperzoo backbones: `from_transformers`.

```python
from keras_paperzoo.convert.hf import from_transformers

backbone = from_transformers(transformers.BertModel.from_pretrained("bert-base-uncased"))
backbone, tokenizer = from_transformers("/path/to/bert-base-uncased", return_tokenizer=True)
```

The source is either a `transformers` model object (`PreTrainedModel`: its config from
`model.config.to_dict()`, its weights from `model.state_dict()` as float32 numpy), or a
checkpoint folder with `config.json` and `model.safetensors` (read with
`safetensors.numpy`, so no torch is needed) or `pytorch_model.bin` (needs torch). The
architecture is chosen by `config["model_type"]` through `READERS`, a dict of
"module:function" strings imported only when used.

The reader contract (one per architecture, beside the others in this folder):

    reader(config: dict, weights: dict[str, numpy.ndarray], checkpoint_dir: str | None)
        -> (backbone, tokenizer or None)

`weights` keeps the names of the HF state dict; a head model's prefix ("bert.",
"transformer.", ...) is for the reader to strip (`strip_prefix` helps), and its head
weights are ignored. Every weight the backbone needs must be found with the right
shape, else a ValueError names it. When `checkpoint_dir` holds the vocabulary files
(BERT: `vocab.txt`; GPT-2: `vocab.json` and `merges.txt`), the reader also returns a
keras-hub tokenizer built from them, else None. The tokenizer is returned beside the
backbone, not attached to it, so the backbone saves and exports exactly as one built
from a preset.
"""

import importlib
import json
import os

import numpy as np

READERS = {
    "beit": "keras_paperzoo.convert.hf_beit:beit_from_hf",
    "bert": "keras_paperzoo.convert.hf_bert:bert_from_hf",
    "gpt2": "keras_paperzoo.convert.hf_gpt2:gpt2_from_hf",
}

__all__ = ["READERS", "from_transformers", "read_config", "read_weights", "strip_prefix", "take"]


def from_transformers(model_or_checkpoint_dir, return_tokenizer=False):
    """A keras-paperzoo backbone holding a Hugging Face model's weights.

    | `model_type` | result |
    |---|---|
    | `"bert"` | `BertBackbone` (`BertModel`, `BertForPreTraining`, `BertForMaskedLM`, ... : the encoder and pooler) |
    | `"gpt2"` | `GPTBackbone` (`GPT2Model`, `GPT2LMHeadModel`) |
    | `"beit"` | `BEiTBackbone` (`BeitModel`, `BeitForImageClassification`, `BeitForMaskedImageModeling`) |

    Args:
        model_or_checkpoint_dir: a `transformers.PreTrainedModel`, or the path of a folder
            with `config.json` and `model.safetensors` or `pytorch_model.bin` (what
            `save_pretrained` writes).
        return_tokenizer: False (default) returns the backbone; True returns
            `(backbone, tokenizer)`, where the tokenizer is built from the folder's
            vocabulary files (None for a model object or a folder without them).

    Raises:
        ValueError: an unknown `model_type` (the message names it and the supported
            ones), a missing file, or a weight missing or of the wrong shape.
        ImportError: `pytorch_model.bin` without torch installed.

    Example:

    ```python
    hf = transformers.BertModel(transformers.BertConfig(vocab_size=99, hidden_size=32,
        num_hidden_layers=2, num_attention_heads=4, intermediate_size=37)).eval()
    backbone = from_transformers(hf)   # outputs equal hf's last_hidden_state / pooler_output
    ```
    """
    if not isinstance(return_tokenizer, bool):
        raise ValueError(f"return_tokenizer must be True or False; got {return_tokenizer!r}.")
    config = read_config(model_or_checkpoint_dir)
    model_type = config.get("model_type")
    if model_type not in READERS:
        raise ValueError(
            f"from_transformers cannot convert model_type {model_type!r}; supported: "
            f"{', '.join(repr(name) for name in sorted(READERS))}."
        )
    module_name, function_name = READERS[model_type].split(":")
    reader = getattr(importlib.import_module(module_name), function_name)
    weights, checkpoint_dir = read_weights(model_or_checkpoint_dir)
    backbone, tokenizer = reader(config, weights, checkpoint_dir)
    return (backbone, tokenizer) if return_tokenizer else backbone


def read_config(model_or_checkpoint_dir):
    """The HF config dict of a `PreTrainedModel` or of a folder's `config.json`."""
    source = model_or_checkpoint_dir
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.isdir(path):
            raise ValueError(f"Checkpoint folder {path!r} does not exist.")
        config_path = os.path.join(path, "config.json")
        if not os.path.isfile(config_path):
            raise ValueError(f"Checkpoint folder {path!r} has no config.json.")
        with open(config_path) as f:
            return json.load(f)
    if hasattr(source, "config") and hasattr(source, "state_dict") and hasattr(source.config, "to_dict"):
        return source.config.to_dict()
    raise ValueError(
        "from_transformers takes a transformers PreTrainedModel or a checkpoint folder path; "
        f"got a {type(source).__name__}."
    )


def read_weights(model_or_checkpoint_dir):
    """({HF state-dict name: float32 numpy array}, checkpoint folder or None) of a model object or folder."""
    source = model_or_checkpoint_dir
    if not isinstance(source, (str, os.PathLike)):
        return {name: _to_numpy(value) for name, value in source.state_dict().items()}, None
    path = os.fspath(source)
    safetensors_path = os.path.join(path, "model.safetensors")
    bin_path = os.path.join(path, "pytorch_model.bin")
    if os.path.isfile(safetensors_path):
        from safetensors.numpy import load_file

        weights = load_file(safetensors_path)
    elif os.path.isfile(bin_path):
        try:
            import torch
        except ImportError as error:
            raise ImportError(
                f"{bin_path} is a PyTorch pickle and reading it needs torch, which is not installed; "
                "install torch or save the checkpoint with safe_serialization=True (model.safetensors)."
            ) from error
        state = torch.load(bin_path, map_location="cpu", weights_only=True)
        weights = {name: _to_numpy(value) for name, value in state.items()}
    else:
        raise ValueError(
            f"Checkpoint folder {path!r} has neither model.safetensors nor pytorch_model.bin "
            "(sharded checkpoints are not supported)."
        )
    return {name: np.asarray(value, dtype=np.float32) for name, value in weights.items()}, path


def _to_numpy(value):
    """A torch tensor (any float dtype, bfloat16 included) or array as float32 numpy."""
    if hasattr(value, "detach"):
        value = value.detach().cpu()
        if value.is_floating_point():
            value = value.float()
        return value.numpy().astype(np.float32)
    return np.asarray(value, dtype=np.float32)


def strip_prefix(weights, prefixes):
    """The weights with the first of `prefixes` that some names start with removed from those names.

    Names without it (a head model's own head weights, e.g. "cls.predictions.bias")
    are kept unchanged. Example: `strip_prefix(weights, ("bert.",))`.
    """
    for prefix in prefixes:
        if any(name.startswith(prefix) for name in weights):
            return {name[len(prefix):] if name.startswith(prefix) else name: value for name, value in weights.items()}
    return dict(weights)


def take(weights, name, shape, source="checkpoint"):
    """`weights[name]` checked against `shape`; a ValueError names what is missing or different."""
    if name not in weights:
        raise ValueError(f"The {source} has no weight {name!r}.")
    value = weights[name]
    if tuple(value.shape) != tuple(shape):
        raise ValueError(f"The {source}'s {name!r} has shape {tuple(value.shape)}; expected {tuple(shape)}.")
    return value
