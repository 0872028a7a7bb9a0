"""`vgg_from_torch_state_dict` against a plain-PyTorch VGG with torchvision's names.

torchvision itself often cannot be imported next to a CPU torch build (its C++ ops
must match), so the reference is torchvision's VGG re-stated in `tests/torch_references.py`:
`features` (conv [+ batch norm] + ReLU per convolution, max pooling per stage), `avgpool`
(adaptive 7x7), `classifier` (Linear, ReLU, Dropout, Linear, ReLU, Dropout, Linear).
"""

import numpy as np
import pytest

import keras

from keras_paperzoo.models.vgg import VGG_CONFIGURATIONS, VGGBackbone, vgg_from_torch_state_dict

torch = pytest.importorskip("torch")

from tests import torch_references as ref  # noqa: E402

# The widths of test_vgg_backbone's tiny networks: on JAX each new weight shape costs a compilation.
WIDTHS = {"filters": (8, 8, 8, 8, 8), "fc_units": (16, 16)}
CONFIGURATION_OF = {"vgg11": "A", "vgg13": "B", "vgg16": "D", "vgg19": "E"}


def _torch_vgg(preset, batch_norm, seed=0, num_classes=5):
    torch.manual_seed(seed)
    convs_per_stage = [len(stage) for stage in VGG_CONFIGURATIONS[CONFIGURATION_OF[preset]]]
    features = ref.make_vgg_layers(convs_per_stage, WIDTHS["filters"], batch_norm)
    model = ref.VGG(features, num_classes=num_classes, fc_units=WIDTHS["fc_units"])
    return ref.randomize(model, seed)  # batch norm statistics and affine parameters away from identity


def _images(size, seed=0):
    return np.random.default_rng(seed).normal(size=(2, 3, size, size)).astype("float32")  # NCHW


@pytest.mark.parametrize(
    "preset,batch_norm,size",
    [
        ("vgg11", False, 224),  # pool5 7x7: fc6's rows only permuted from (C, H, W) to (H, W, C)
        ("vgg16", True, 64),  # pool5 2x2: torchvision's adaptive pooling (overlapping bins) folded into fc6
    ],
)
def test_outputs_match_torchvisions_vgg(preset, batch_norm, size):
    torch_model = _torch_vgg(preset, batch_norm)
    state_dict = torch_model.state_dict()
    backbone, head = vgg_from_torch_state_dict(state_dict, preset, image_shape=(size, size, 3), **WIDTHS)
    assert backbone.batch_norm == batch_norm and backbone.configuration == CONFIGURATION_OF[preset]
    x = _images(size)
    with torch.no_grad():
        expected_fc7 = ref.vgg_fc7(torch_model, torch.from_numpy(x)).numpy()
        expected_logits = torch_model(torch.from_numpy(x)).numpy()
    fc7 = keras.ops.convert_to_numpy(backbone(x.transpose(0, 2, 3, 1), training=False))
    assert np.abs(expected_fc7).max() > 1e-2  # not all zeros after the ReLUs
    np.testing.assert_allclose(fc7, expected_fc7, atol=1e-4, rtol=1e-4)
    kernel, bias = head
    assert kernel.shape == (16, 5) and bias.shape == (5,)
    np.testing.assert_allclose(fc7 @ kernel + bias, expected_logits, atol=1e-4, rtol=1e-4)


def test_convolutions_only():
    torch_model = _torch_vgg("vgg16", batch_norm=True, seed=1)
    backbone, head = vgg_from_torch_state_dict(
        torch_model.state_dict(), "vgg_d", image_shape=(None, None, 3), include_fc=False, **WIDTHS
    )
    assert head is None
    x = _images(64, seed=1)
    with torch.no_grad():
        expected = torch_model.features(torch.from_numpy(x)).numpy().transpose(0, 2, 3, 1)
    features = keras.ops.convert_to_numpy(backbone(x.transpose(0, 2, 3, 1), training=False))
    assert features.shape == (2, 2, 2, 8)
    np.testing.assert_allclose(features, expected, atol=1e-4, rtol=1e-4)


def test_mismatches_are_named():
    state_dict = _torch_vgg("vgg11", batch_norm=False).state_dict()
    with pytest.raises(ValueError, match="VGGs have configurations A, B, D, E; got configuration 'C'"):
        vgg_from_torch_state_dict(state_dict, "vgg_c", **WIDTHS)
    with pytest.raises(ValueError, match="batch_norm=True was asked for, but the state dict has no batch"):
        vgg_from_torch_state_dict(state_dict, "vgg11", batch_norm=True, **WIDTHS)
    with pytest.raises(ValueError, match="state dict has no 'features.2.weight', which VGG configuration B"):
        vgg_from_torch_state_dict(state_dict, "vgg13", image_shape=(32, 32, 3), **WIDTHS)
    with pytest.raises(ValueError, match="2 hidden fully connected layers; got fc_units=.16,."):
        vgg_from_torch_state_dict(state_dict, "vgg11", filters=WIDTHS["filters"], fc_units=(16,))
    narrower = {**state_dict, "features.0.weight": state_dict["features.0.weight"][:4]}
    with pytest.raises(ValueError, match=r"features.0.weight has shape \(4, 3, 3, 3\) .* needs \(8, 3, 3, 3"):
        vgg_from_torch_state_dict(narrower, "vgg11", image_shape=(32, 32, 3), include_fc=False, **WIDTHS)
    extra = {**state_dict, "features.30.weight": state_dict["features.0.weight"]}
    with pytest.raises(ValueError, match="1 entries that VGG configuration A has no place .*: features.30.w"):
        vgg_from_torch_state_dict(extra, "vgg11", image_shape=(32, 32, 3), include_fc=False, **WIDTHS)
    with pytest.raises(ValueError, match="Unknown VGGBackbone preset 'vgg12'"):
        vgg_from_torch_state_dict(state_dict, "vgg12")


def test_real_torchvision_vgg11():
    try:
        import torchvision
    except Exception as error:  # ImportError, or RuntimeError when its C++ ops do not match torch
        pytest.skip(f"torchvision is not usable here: {type(error).__name__}: {error}")
    torch.manual_seed(0)
    torch_model = torchvision.models.vgg11(weights=None).eval()
    backbone, head = vgg_from_torch_state_dict(torch_model.state_dict(), "vgg11", image_shape=(32, 32, 3))
    assert isinstance(backbone, VGGBackbone) and head[0].shape == (4096, 1000)
    x = _images(32)
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(x)).numpy()
    fc7 = keras.ops.convert_to_numpy(backbone(x.transpose(0, 2, 3, 1), training=False))
    np.testing.assert_allclose(fc7 @ head[0] + head[1], expected, atol=1e-4, rtol=1e-3)
