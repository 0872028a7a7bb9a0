"""torchvision and timm models as keras-paperzoo backbones, with their weights.

```python
import timm, torchvision
from keras_paperzoo.convert import from_timm, from_torchvision

backbone = from_torchvision(torchvision.models.resnet50(weights="IMAGENET1K_V2"))  # ResNetBackbone
classifier = from_timm(timm.create_model("vit_base_patch16_224", pretrained=True), include_head=True)
```

The architecture is read from the model object itself (block classes, blocks per
stage, widths, patch size, depth, heads, pooling, ...), never from its name, so models
built with other depths or widths convert too; whatever our backbone cannot express is
refused with one `UnsupportedModelError` that names the class, the part that differs
and what is supported. The weights go through the state-dict converters that live
beside each model (`resnet_from_torch_state_dict`, `vgg_from_torch_state_dict`,
`vit_from_timm_state_dict`), which check every name and shape. torch is never
imported here: modules are recognised by class name and attributes.
"""

from keras_paperzoo.convert.hf import from_transformers
from keras_paperzoo.convert.resnet import read_resnet
from keras_paperzoo.convert.torch_modules import UnsupportedModelError, unsupported
from keras_paperzoo.convert.vgg import read_vgg
from keras_paperzoo.convert.vit import read_vit
from keras_paperzoo.models.image_classifier import ImageClassifier

# Class name -> reader. torchvision's ResNet and timm's default ResNet share their layout.
READERS = {
    "torchvision": {"ResNet": read_resnet, "VGG": read_vgg},
    "timm": {"ResNet": read_resnet, "VisionTransformer": read_vit},
}

__all__ = ["UnsupportedModelError", "from_timm", "from_torchvision", "from_transformers"]


def from_torchvision(model, include_head=False, image_shape=None):
    """A keras-paperzoo model holding a torchvision model's weights.

    | torchvision | result |
    |---|---|
    | `ResNet` (`resnet18` ... `resnet152`) | `ResNetBackbone`: the `layer4` map, (B, h, w, C) |
    | `VGG` (`vgg11` ... `vgg19`, `_bn`) | `VGGBackbone`: the fc7 feature, (B, 4096) |

    The outputs equal the torch model's in eval mode (inputs channels-last, NHWC).

    Args:
        model: a `torchvision.models.ResNet` or `VGG` object (its weights are read, the
            model is not changed).
        include_head: False (default) returns the backbone; True returns an
            `ImageClassifier(backbone, num_classes)` whose `predictions` layer holds the
            torch classifier's last Linear (`fc`, `classifier.6`), so its logits equal
            `model(x)`.
        image_shape: (height, width, channels) of the Keras model; default (224, 224,
            in_channels), torchvision's training size. A ResNet also takes
            (None, None, 3) (any size, like the torch model); a VGG's fc6 takes the
            pool5 map of any fixed size (torchvision's adaptive 7x7 pooling folded in).

    Returns:
        The backbone, or with `include_head=True` the `ImageClassifier`.

    Raises:
        UnsupportedModelError (a ValueError): another architecture or variant; the
            message names the class, the part that differs and what is supported.

    Example:

    ```python
    torch_model = torchvision.models.vgg16_bn(weights="IMAGENET1K_V1").eval()
    classifier = from_torchvision(torch_model, include_head=True)
    logits = classifier.predict(images_nhwc)  # == torch_model(images_nchw)
    ```
    """
    return _convert(model, "torchvision", include_head, image_shape)


def from_timm(model, include_head=False, image_shape=None):
    """A keras-paperzoo model holding a timm model's weights.

    | timm | result |
    |---|---|
    | `ResNet` (`resnet18` ... `resnet152`) | `ResNetBackbone`: the `layer4` map, (B, h, w, C) |
    | `VisionTransformer` (`vit_*`) | `ViTBackbone`: the pooled feature, timm's `forward_head(..., pre_logits=True)` |

    ViTs convert with `global_pool="token"` (class token) or `global_pool="avg"` with
    `class_token=False, fc_norm=False` (ViTBackbone's `pooling="gap"`: mean of the
    final-normed patch tokens). timm's default for "avg" is `fc_norm=True` (LayerNorm
    after pooling), which ViTBackbone does not have, so such models are refused rather
    than converted approximately. Dropout rates are copied (timm's default 0); drop-path
    (stochastic depth) has no counterpart in ViTBackbone and is dropped.

    Args:
        model: a `timm.models.resnet.ResNet` or `timm.models.vision_transformer.VisionTransformer`.
        include_head: False (default) returns the backbone; True returns an
            `ImageClassifier` with the model's `fc` / `head` (and timm's head dropout rate),
            whose logits equal `model(x)`.
        image_shape: (height, width, channels); default the model's own input size (a
            ViT's `patch_embed.img_size`, so a `vit_*_224` built with `img_size=96` gives a
            96x96 backbone). A ViT converted to another size gets its position table
            resized as timm resizes it (bicubic, antialiased), the paper's Sec. 3.2.

    Returns:
        The backbone, or with `include_head=True` the `ImageClassifier`.

    Raises:
        UnsupportedModelError (a ValueError): another architecture or variant (deep-stem
            or SE ResNets, ViTs with register tokens, layer scale, fc_norm, ...).

    Example:

    ```python
    torch_model = timm.create_model("vit_small_patch16_224", pretrained=True, img_size=384)
    backbone = from_timm(torch_model)  # ViTBackbone at 384x384, 24x24 patches
    ```
    """
    return _convert(model, "timm", include_head, image_shape)


def _convert(model, library, include_head, image_shape):
    if not (hasattr(model, "state_dict") and hasattr(model, "named_children")):
        raise UnsupportedModelError(
            f"from_{library} takes a PyTorch model object (torch.nn.Module); got a {type(model).__name__}. "
            "For a state dict, use resnet_from_torch_state_dict, vgg_from_torch_state_dict or "
            "vit_from_timm_state_dict with a configuration."
        )
    if not isinstance(include_head, bool):
        raise ValueError(f"include_head must be True or False; got {include_head!r}.")
    name = type(model).__name__
    reader = READERS[library].get(name)
    if reader is None:
        others = [other for other, readers in READERS.items() if other != library and name in readers]
        hint = f" (from_{others[0]} reads {others[0]}'s {name})" if others else ""
        unsupported(model, library, f"{name} is not one of its architectures{hint}")
    backbone, head = reader(model, library, image_shape=image_shape, include_head=include_head)
    if not include_head:
        return backbone
    if head is None:
        raise UnsupportedModelError(
            f"include_head=True, but this {name} has no classifier head (num_classes=0); "
            "use include_head=False for the backbone."
        )
    (kernel, bias), dropout = head
    classifier = ImageClassifier(backbone, num_classes=int(kernel.shape[1]), dropout=dropout)
    classifier.get_layer("predictions").set_weights([kernel, bias])
    return classifier
