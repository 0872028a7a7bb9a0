"""Fill a `VGGBackbone` with the weights of a torchvision VGG (`vgg11`, `vgg13_bn`, ...).

torchvision names its parameters `features.{i}.weight` / `.bias` (convolutions, and the
batch normalizations of `vgg*_bn` with `running_mean` / `running_var`) and
`classifier.{0,3,6}.weight` / `.bias` (fc6, fc7, fc8); `i` counts every module of the
`features` sequence (convolution, batch norm, ReLU, max pooling).
"""

import numpy as np

from keras_paperzoo.models.vgg.vgg_backbone import VGGBackbone
from keras_paperzoo.models.vgg.vgg_presets import VGG_CONFIGURATIONS, VGG_PRESETS

# torchvision's AdaptiveAvgPool2d((7, 7)) sits between the last pooling and fc6.
TORCH_POOLED_SIZE = 7
# vgg11, vgg13, vgg16, vgg19 (torchvision has no A-LRN or C).
TORCHVISION_CONFIGURATIONS = ("A", "B", "D", "E")
TORCH_FC_INDICES = (0, 3)  # classifier.0 = fc6, classifier.3 = fc7 (1, 4 are ReLUs; 2, 5 dropouts)
TORCH_HEAD_INDEX = 6  # classifier.6 = fc8, the 1000-way layer


def vgg_from_torch_state_dict(state_dict, preset, **overrides):
    """A `VGGBackbone` holding a torchvision VGG's weights, and the weights of its fc8.

    Convolution kernels go from PyTorch's (out, in, h, w) to Keras's (h, w, in, out),
    dense kernels from (out, in) to (in, out). torchvision's classifier takes the pool5
    map after an adaptive average pooling to 7x7, flattened in (channel, height, width)
    order; fc6's rows are permuted to the backbone's (height, width, channel) order and,
    when the backbone's pool5 map is not 7x7 (images other than 224x224), the adaptive
    pooling is folded into fc6 (it is linear), so the two models agree on any size.

    Whether the state dict has batch normalization (torchvision's `vgg*_bn`) is read
    from its keys (`running_var`); `batch_norm=` need not be given.

    Args:
        state_dict: mapping of torchvision names to tensors or arrays (a
            `torch.nn.Module.state_dict()`; torch is not imported here).
        preset: a `VGGBackbone` preset of configuration A, B, D or E ("vgg11",
            "vgg13", "vgg16", "vgg19", "vgg_a", ...).
        **overrides: `VGGBackbone` arguments (`image_shape`, `include_fc`, and the
            widths `filters` / `fc_units` of a non-standard network).

    Returns:
        `(backbone, head)`: the backbone with the converted weights, and `head`, a list
        `[kernel (4096, classes), bias (classes,)]` for the classifier's last Dense layer
        (None when the state dict has no `classifier.6` or `include_fc=False`).

    Example:

    ```python
    import torchvision
    torch_model = torchvision.models.vgg16(weights="IMAGENET1K_V1").eval()
    backbone, head = vgg_from_torch_state_dict(torch_model.state_dict(), "vgg16")
    ```
    """
    if preset not in VGG_PRESETS:
        raise ValueError(
            f"Unknown VGGBackbone preset {preset!r}; available: {', '.join(sorted(VGG_PRESETS))}."
        )
    configuration = overrides.get("configuration", VGG_PRESETS[preset]["config"]["configuration"])
    if configuration not in TORCHVISION_CONFIGURATIONS:
        raise ValueError(
            f"torchvision's VGGs have configurations {', '.join(TORCHVISION_CONFIGURATIONS)}; "
            f"got configuration {configuration!r} (preset {preset!r})."
        )
    weights = {key: _to_numpy(value) for key, value in state_dict.items()}
    has_batch_norm = any(key.startswith("features.") and key.endswith(".running_var") for key in weights)
    if overrides.get("batch_norm", has_batch_norm) != has_batch_norm:
        raise ValueError(
            f"batch_norm={overrides['batch_norm']} was asked for, but the state dict "
            f"{'has' if has_batch_norm else 'has no'} batch normalization statistics (running_var)."
        )
    overrides["batch_norm"] = has_batch_norm
    fc_units = tuple(overrides.get("fc_units", (4096, 4096)))
    if overrides.get("include_fc", True) and len(fc_units) != len(TORCH_FC_INDICES):
        raise ValueError(
            f"torchvision's VGG classifier has {len(TORCH_FC_INDICES)} hidden fully connected "
            f"layers; got fc_units={fc_units}."
        )
    backbone = VGGBackbone.from_preset(preset, **overrides)
    used = set()

    def take(key, shape):
        if key not in weights:
            raise ValueError(
                f"The state dict has no {key!r}, which VGG configuration {configuration} "
                f"(batch_norm={has_batch_norm}) needs; does it come from another configuration?"
            )
        value = weights[key]
        if value.shape != tuple(shape):
            raise ValueError(
                f"{key} has shape {value.shape} in the state dict but the backbone needs "
                f"{tuple(shape)} (from PyTorch's layout); check filters / fc_units / image_shape."
            )
        used.add(key)
        return value

    # --- features: conv (+ batch norm) + ReLU per convolution, one max pooling per stage ---
    index = 0
    for stage, kernel_sizes in enumerate(VGG_CONFIGURATIONS[configuration], start=1):
        for i in range(1, len(kernel_sizes) + 1):
            conv = backbone.get_layer(f"block{stage}_conv{i}")
            h, w, c_in, c_out = conv.kernel.shape
            kernel = take(f"features.{index}.weight", (c_out, c_in, h, w))  # OIHW
            bias = take(f"features.{index}.bias", (c_out,))
            conv.set_weights([kernel.transpose(2, 3, 1, 0), bias])  # HWIO
            if has_batch_norm:
                prefix = f"features.{index + 1}"
                bn = backbone.get_layer(f"block{stage}_conv{i}_bn")
                names = ("weight", "bias", "running_mean", "running_var")  # gamma, beta, mean, variance
                bn.set_weights([take(f"{prefix}.{name}", (c_out,)) for name in names])
                used.add(f"{prefix}.num_batches_tracked")
            index += 3 if has_batch_norm else 2
        index += 1  # the max pooling

    # --- classifier: fc6, fc7 (the backbone) and fc8 (returned) ---
    head = None
    if backbone.include_fc:
        height, width, channels = backbone.get_layer("block5_pool").output.shape[1:]
        fc6 = backbone.get_layer("fc6")
        units = fc6.kernel.shape[1]
        torch_kernel = take("classifier.0.weight", (units, channels * TORCH_POOLED_SIZE**2))
        torch_kernel = torch_kernel.reshape(units, channels, TORCH_POOLED_SIZE, TORCH_POOLED_SIZE)
        if (height, width) != (TORCH_POOLED_SIZE, TORCH_POOLED_SIZE):
            rows, cols = _adaptive_pooling_matrix(height), _adaptive_pooling_matrix(width)
            torch_kernel = np.einsum("ocij,ip,jq->ocpq", torch_kernel, rows, cols)  # (units, C, H, W)
            torch_kernel = torch_kernel.astype(weights["classifier.0.weight"].dtype)
        kernel = torch_kernel.transpose(2, 3, 1, 0).reshape(height * width * channels, units)  # HWC rows
        fc6.set_weights([kernel, take("classifier.0.bias", (units,))])
        fc7 = backbone.get_layer("fc7")
        units_in, units_out = fc7.kernel.shape
        kernel = take(f"classifier.{TORCH_FC_INDICES[1]}.weight", (units_out, units_in))
        fc7.set_weights([kernel.T, take(f"classifier.{TORCH_FC_INDICES[1]}.bias", (units_out,))])
        key = f"classifier.{TORCH_HEAD_INDEX}"
        if f"{key}.weight" in weights:
            classes = weights[f"{key}.weight"].shape[0]
            kernel = take(f"{key}.weight", (classes, backbone.fc_units[-1]))
            head = [kernel.T.copy(), take(f"{key}.bias", (classes,))]
    else:
        used.update(key for key in weights if key.startswith("classifier."))

    unused = sorted(set(weights) - used)
    if unused:
        listed = ", ".join(unused[:6]) + (" ..." if len(unused) > 6 else "")
        raise ValueError(
            f"The state dict has {len(unused)} entries that VGG configuration {configuration} has no "
            f"place for (from another configuration?): {listed}."
        )
    return backbone, head


def _adaptive_pooling_matrix(size, pooled=TORCH_POOLED_SIZE):
    """(pooled, size) matrix of PyTorch's AdaptiveAvgPool along one axis.

    Output cell i averages input cells floor(i * size / pooled) .. ceil((i + 1) * size / pooled) - 1.
    """
    matrix = np.zeros((pooled, size))
    for i in range(pooled):
        start, end = (i * size) // pooled, -((-(i + 1) * size) // pooled)
        matrix[i, start:end] = 1.0 / (end - start)
    return matrix


def _to_numpy(value):
    if hasattr(value, "detach"):  # a torch tensor
        value = value.detach().cpu().float().numpy()  # .float(): numpy has no bfloat16
    return np.asarray(value)
