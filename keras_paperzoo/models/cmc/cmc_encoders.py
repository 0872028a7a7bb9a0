"""CMC's two view encoders: the ab encoder built like the L one, the pair checked, and the encoder evaluated.

CMC (Tian et al. 2019) encodes each view with its own network: f1 on L (one channel),
f2 on ab (two channels), of the same architecture (the authors' `resnet50v1` halves,
their AlexNet's two halves). The representation evaluated downstream is the two pooled
features concatenated (the authors' `LinearProbing.py` concatenates `feat_l` and
`feat_ab`).
"""

import keras

from keras_paperzoo.models.self_supervised import check_backbone

VIEW_CHANNELS = (("backbone", 1), ("ab_backbone", 2))  # L: 1 channel; ab: 2


def view_backbones(backbone, ab_backbone=None):
    """(backbone, ab_backbone) checked as CMC's L and ab encoders; ab_backbone=None builds one like `backbone`."""
    _check_view_backbone("backbone", backbone, 1)
    if ab_backbone is None:
        ab_backbone = backbone_for_channels(backbone, 2, name=f"{backbone.name}_ab")
    _check_view_backbone("ab_backbone", ab_backbone, 2)
    if tuple(ab_backbone.input_shape[1:3]) != tuple(backbone.input_shape[1:3]):
        raise ValueError(f"CMC's two encoders see the same crops, so backbone and ab_backbone need the same image "
                         f"size; got {tuple(backbone.input_shape[1:3])} and {tuple(ab_backbone.input_shape[1:3])}.")
    if ab_backbone.name == backbone.name:
        raise ValueError(f"backbone and ab_backbone need different names (the encoder holds both); both are "
                         f"named {backbone.name!r}.")
    return backbone, ab_backbone


def backbone_for_channels(backbone, channels, name):
    """A new network like `backbone` (same architecture, fresh weights) taking images of `channels` channels."""
    shape = tuple(backbone.input_shape[1:3]) + (channels,)
    config = backbone.get_config()
    if isinstance(config, dict) and "image_shape" in config:  # the package's backbones
        return type(backbone).from_config({**config, "image_shape": shape, "name": name})
    if isinstance(backbone, keras.Sequential):
        layers = [type(layer).from_config(layer.get_config()) for layer in backbone.layers]
        return keras.Sequential([keras.Input(shape), *layers], name=name)
    try:
        clone = keras.models.clone_model(backbone, input_tensors=keras.Input(shape))
    except (ValueError, TypeError) as error:
        raise ValueError(f"CMC cannot rebuild {backbone.name} for the ab view's {channels} channels ({error}); "
                         "pass ab_backbone=.") from error
    return keras.Model(clone.inputs, clone.outputs, name=name)


def _check_view_backbone(argument, backbone, channels):
    check_backbone("CMC", backbone)
    got = backbone.input_shape[-1]
    if got != channels:
        view = "L" if channels == 1 else "ab"
        raise ValueError(f"CMC's {argument} encodes the {view} view, so it takes {channels}-channel images "
                         f"(B, H, W, {channels}); {backbone.name} has input shape {backbone.input_shape}.")


def cmc_encoder(lab_views, backbone, ab_backbone, name):
    """RGB images -> [pool(f1(L)) | pool(f2(ab))] (B, D_L + D_ab): a new functional model on the shared encoders."""
    inputs = keras.Input(tuple(backbone.input_shape[1:3]) + (3,), name="images")
    luminance, chroma = lab_views(inputs)
    features = []
    for view, network, images in (("l", backbone, luminance), ("ab", ab_backbone, chroma)):
        x = network(images)
        if len(x.shape) == 4:
            x = keras.layers.GlobalAveragePooling2D(name=f"{view}_avg_pool")(x)
        features.append(x)
    outputs = keras.layers.Concatenate(name="representation")(features)  # (B, D_L + D_ab)
    return keras.Model(inputs, outputs, name=name)
