"""Reading a PyTorch module tree without importing torch: class names and attributes.

`keras_paperzoo.convert` works out an architecture from the model object it is given.
It never imports torch (a test / bench extra, not a dependency): a module is recognised
by its class name (`type(m).__name__`, which is the same for `torch.nn.Conv2d` and
for the plain re-statements in the tests) and read through the attributes PyTorch
documents (`kernel_size`, `stride`, `padding`, `out_channels`, `eps`, ...).
"""

LIBRARIES = {
    "torchvision": (
        "torchvision's ResNet (resnet18, resnet34, resnet50, resnet101, resnet152, and the same layout "
        "at other widths and depths) and VGG (vgg11, vgg13, vgg16, vgg19, with or without _bn)"
    ),
    "timm": (
        "timm's ResNet (resnet18 ... resnet152: 7x7 stem, plain basic or bottleneck blocks, no squeeze-"
        "excitation, anti-aliasing, deep stem or average-pool downsampling) and VisionTransformer (vit_* "
        "models with a class token or plain average pooling, learned 1-D position embeddings, qkv bias, "
        "exact GELU; no register tokens, layer scale, qk-norm, fc_norm or attention pooling)"
    ),
}


class UnsupportedModelError(ValueError):
    """The PyTorch model is not one `from_timm` / `from_torchvision` can rebuild in Keras."""


def unsupported(model, library, reason):
    """Raise `UnsupportedModelError` naming the model's class, the reason and what is supported."""
    cls = type(model)
    raise UnsupportedModelError(
        f"from_{library} cannot convert {cls.__module__}.{cls.__qualname__}: {reason}. "
        f"Supported: {LIBRARIES[library]}."
    )


def kind(module):
    """The class name of a module (`"Conv2d"`, `"BatchNorm2d"`, ...), or `"None"`."""
    return type(module).__name__


def is_identity(module):
    """True for a missing module (None) or an `nn.Identity`."""
    return module is None or kind(module) == "Identity"


def pair(value):
    """PyTorch's int-or-tuple arguments as a 2-tuple of ints (a string, e.g. padding="same", as is)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (tuple, list)):
        return tuple(int(v) for v in value) if len(value) == 2 else (int(value[0]),) * 2
    return (int(value), int(value))


def conv_problem(conv, kernel, stride, padding, bias):
    """None when `conv` is a plain `nn.Conv2d` with these settings, else what differs."""
    if kind(conv) != "Conv2d":
        return f"a {kind(conv)}, not a Conv2d"
    wanted = {
        "kernel_size": pair(kernel),
        "stride": pair(stride),
        "padding": pair(padding),
        "dilation": (1, 1),
        "groups": 1,
    }
    for name, value in wanted.items():
        actual = getattr(conv, name)
        actual = actual if name == "groups" else pair(actual)
        if actual != value:
            return f"a Conv2d with {name}={actual} (needed: {value})"
    if getattr(conv, "padding_mode", "zeros") != "zeros":
        return f"a Conv2d with padding_mode={conv.padding_mode!r}"
    if (conv.bias is not None) != bias:
        return f"a Conv2d {'without' if bias else 'with'} a bias"
    return None


BATCH_NORMS = ("BatchNorm2d", "FrozenBatchNorm2d", "SyncBatchNorm")


def batch_norm_problem(bn, channels, eps):
    """None when `bn` is an affine batch norm over `channels` with epsilon `eps`, else what differs."""
    if kind(bn) not in BATCH_NORMS:
        return f"a {kind(bn)}, not a BatchNorm2d"
    if getattr(bn, "weight", None) is None or getattr(bn, "running_var", None) is None:
        return "a BatchNorm2d without affine parameters or running statistics"
    if int(bn.weight.shape[0]) != channels:
        return f"a BatchNorm2d over {int(bn.weight.shape[0])} channels (needed: {channels})"
    if abs(bn.eps - eps) > 1e-12:
        return f"a BatchNorm2d with eps={bn.eps} where the others have {eps}"
    return None


def linear_size(linear):
    """(in_features, out_features) of an `nn.Linear` with a bias, else None."""
    if kind(linear) != "Linear" or linear.bias is None:
        return None
    return int(linear.in_features), int(linear.out_features)


def head_weights(linear):
    """A PyTorch `Linear` as the Keras Dense weights `[kernel (in, out), bias (out,)]`."""
    kernel = linear.weight.detach().cpu().float().numpy().T.copy()
    bias = linear.bias.detach().cpu().float().numpy().copy()
    return [kernel, bias]


def input_size(model, default=(224, 224)):
    """(height, width) the model was made for: timm's `pretrained_cfg["input_size"]`, else `default`."""
    cfg = getattr(model, "pretrained_cfg", None) or {}
    size = cfg.get("input_size") if isinstance(cfg, dict) else None
    return tuple(int(s) for s in size[1:]) if size and len(size) == 3 else tuple(default)
