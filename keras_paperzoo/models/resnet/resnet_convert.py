"""torchvision ResNet weights -> `ResNetBackbone` (timm's `checkpoint_filter_fn` idea).

torchvision's `state_dict()` names and ours:

| torchvision                         | ResNetBackbone layer              |
|-------------------------------------|-----------------------------------|
| `conv1.weight`, `bn1.*`             | `stem_conv`, `stem_bn`            |
| `layer{s}.{j}.conv{i}.weight`       | `stage{s}_block{j+1}_conv{i}`     |
| `layer{s}.{j}.bn{i}.*`              | `stage{s}_block{j+1}_bn{i}`       |
| `layer{s}.{j}.downsample.0.weight`  | `stage{s}_block{j+1}_shortcut_conv` |
| `layer{s}.{j}.downsample.1.*`       | `stage{s}_block{j+1}_shortcut_bn` |
| `fc.*`, `*.num_batches_tracked`     | ignored (the backbone has no head) |

Conv kernels go from PyTorch's (out, in, kh, kw) to Keras's (kh, kw, in, out); batch
norm's weight, bias, running_mean, running_var become gamma, beta, moving_mean,
moving_variance. torchvision's nets are shortcut B with the stride in the bottleneck's
3x3 conv, which is what the ImageNet presets build. PyTorch is not imported here: any
mapping of names to arrays (or tensors with `.detach()`) works.
"""

import re

import numpy as np

import keras

from keras_paperzoo.models.resnet.resnet_backbone import ResNetBackbone

_BN_FIELDS = ("weight", "bias", "running_mean", "running_var")  # Keras: gamma, beta, mean, var
_BLOCK_LAYER = re.compile(r"stage(\d+)_block(\d+)_(conv\d+|bn\d+|shortcut_conv|shortcut_bn)$")
_IGNORED = re.compile(r"(^fc\.|\.num_batches_tracked$)")


def torch_prefix(layer_name):
    """The torchvision `state_dict` prefix of one of our conv / BN layers, or None."""
    if layer_name == "stem_conv":
        return "conv1"
    if layer_name == "stem_bn":
        return "bn1"
    match = _BLOCK_LAYER.match(layer_name)
    if not match:
        return None
    stage, block, part = int(match[1]), int(match[2]), match[3]
    part = {"shortcut_conv": "downsample.0", "shortcut_bn": "downsample.1"}.get(part, part)
    return f"layer{stage}.{block - 1}.{part}"


def _to_numpy(value):
    if hasattr(value, "detach"):  # a torch tensor, without importing torch
        value = value.detach().cpu().float().numpy()  # .float(): numpy has no bfloat16
    return np.asarray(value, dtype="float32")


def resnet_from_torch_state_dict(state_dict, preset_or_config, **overrides):
    """Build a `ResNetBackbone` and fill it from a torchvision ResNet `state_dict()`.

    Args:
        state_dict: mapping of torchvision parameter / buffer names to tensors or arrays.
        preset_or_config: a preset name (`"resnet50"`) or a dict of constructor arguments.
        **overrides: constructor arguments replacing the preset's (e.g. `image_shape`).

    Returns:
        The backbone, whose output equals the torch model's last stage (`layer4`) in eval
        mode, in NHWC.

    Raises:
        ValueError: when a name of the state dict has no layer in the backbone, a layer has
            no entry in the state dict, or a shape differs.

    Example:

    ```python
    import torchvision
    torch_model = torchvision.models.resnet50(weights="IMAGENET1K_V1")
    backbone = resnet_from_torch_state_dict(torch_model.state_dict(), "resnet50")
    ```
    """
    if isinstance(preset_or_config, str):
        backbone = ResNetBackbone.from_preset(preset_or_config, **overrides)
    else:
        backbone = ResNetBackbone(**{**dict(preset_or_config), **overrides})
    arrays = {k: _to_numpy(v) for k, v in state_dict.items() if not _IGNORED.search(k)}
    used = set()
    for layer in backbone.layers:
        if not layer.weights:
            continue
        prefix = torch_prefix(layer.name)
        if prefix is None:
            raise ValueError(f"Layer {layer.name!r} has weights but no torchvision name.")
        if isinstance(layer, keras.layers.Conv2D):
            names = [f"{prefix}.weight"]
        elif isinstance(layer, keras.layers.BatchNormalization):
            names = [f"{prefix}.{field}" for field in _BN_FIELDS]
        else:
            raise ValueError(f"Layer {layer.name!r} ({type(layer).__name__}) cannot be converted.")
        missing = [n for n in names if n not in arrays]
        if missing:
            raise ValueError(
                f"The state dict has no {missing} for layer {layer.name!r}: the config does not "
                "match the torch model (torchvision ResNets are shortcut 'B')."
            )
        values = [arrays[n] for n in names]
        if isinstance(layer, keras.layers.Conv2D):
            values = [values[0].transpose(2, 3, 1, 0)]  # (O, I, kh, kw) -> (kh, kw, I, O)
        targets = [layer.gamma, layer.beta, layer.moving_mean, layer.moving_variance] if isinstance(
            layer, keras.layers.BatchNormalization
        ) else [layer.kernel]
        for name, variable, value in zip(names, targets, values):
            if tuple(variable.shape) != value.shape:
                raise ValueError(
                    f"Shape mismatch for {name!r} -> {layer.name!r}: torch gives {value.shape} "
                    f"(after transposing), the backbone has {tuple(variable.shape)}."
                )
            variable.assign(value)
        used.update(names)
    unused = sorted(set(arrays) - used)
    if unused:
        raise ValueError(
            f"{len(unused)} state dict entries have no layer in the backbone, e.g. {unused[:5]}: "
            "the config does not match the torch model."
        )
    return backbone
