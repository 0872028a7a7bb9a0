"""`from_torchvision` / `from_timm`: the architecture is read from the model object and the
converted Keras model computes what the torch model computes (eval mode, float32).

CI cannot import torchvision or timm, so the first tests use `tests/torch_references.py`
(their modules re-stated in plain PyTorch, same class and parameter names) at tiny widths;
the `test_real_*` tests run on the real libraries where they import (the bench venv). On
TensorFlow, import torchvision first (torchvision 0.29 segfaults when its C++ ops load after
TensorFlow 2.21): `KERAS_BACKEND=tensorflow python -c "import torchvision, timm, pytest;
pytest.main(['tests/test_convert.py', '-k', 'real'])"`.
"""

import copy
import importlib

import numpy as np
import pytest

import keras

torch = pytest.importorskip("torch")

from keras_paperzoo.convert import UnsupportedModelError, from_timm, from_torchvision  # noqa: E402
from keras_paperzoo.models import ImageClassifier, ResNetBackbone, VGGBackbone, ViTBackbone  # noqa: E402
from tests import torch_references as ref  # noqa: E402

TOLERANCE = 1e-4  # max abs difference, float32


def _images(height, width=None, seed=0, n=2):
    return np.random.default_rng(seed).normal(size=(n, height, width or height, 3)).astype("float32")  # NHWC


def _logits(model, t):
    return model(t)


def _outputs(keras_model, torch_model, function, x):
    """(Keras output, torch output of `function(torch_model, x)`), both NHWC where 4-D."""
    with torch.no_grad():
        expected = function(torch_model, torch.from_numpy(x.transpose(0, 3, 1, 2).copy())).numpy()
    if expected.ndim == 4:
        expected = expected.transpose(0, 2, 3, 1)
    ours = keras.ops.convert_to_numpy(keras_model(x, training=False))
    assert ours.shape == expected.shape
    assert np.abs(expected).max() > 1e-2  # not trivially zero
    return ours, expected


def _max_difference(keras_model, torch_model, function, x, label):
    """max |keras_model(x) - function(torch_model, x)|, printed for the report."""
    ours, expected = _outputs(keras_model, torch_model, function, x)
    difference = float(np.abs(ours - expected).max())
    print(f"MAXDIFF {keras.backend.backend()} {label}: {difference:.2e} (max |output| {np.abs(expected).max():.2f})")
    return difference


def _assert_agrees_with_torch(keras_model, torch_model, function, x, label):
    """Max abs difference under TOLERANCE; or, where torch's own float32 result is further than that
    from its float64 result (deep random nets), ours no further from float64 than 2x torch's float32."""
    ours, expected = _outputs(keras_model, torch_model, function, x)
    difference = float(np.abs(ours - expected).max())
    note = ""
    if difference >= TOLERANCE:
        model64 = copy.deepcopy(torch_model).double()
        with torch.no_grad():
            exact = function(model64, torch.from_numpy(x.transpose(0, 3, 1, 2).astype("float64"))).numpy()
        exact = exact.transpose(0, 2, 3, 1) if exact.ndim == 4 else exact
        ours_error, torch_error = float(np.abs(ours - exact).max()), float(np.abs(expected - exact).max())
        note = f"; vs float64: ours {ours_error:.2e}, torch float32 {torch_error:.2e}"
    print(
        f"MAXDIFF {keras.backend.backend()} {label}: {difference:.2e} "
        f"(max |output| {np.abs(expected).max():.2f}){note}"
    )
    if difference >= TOLERANCE:
        assert torch_error > TOLERANCE / 2 and ours_error <= 2 * torch_error, note


# --- torchvision ResNet and VGG (re-stated) -------------------------------------------------


@pytest.mark.parametrize(
    "block, layers, image_shape, size",
    [
        (ref.BasicBlock, [2, 2, 2, 2], None, 224),  # the default input size
        # 46 -> 23 -> 12 -> 6 -> 3 -> 2: odd sizes round up, even ones pad both sides.
        (ref.Bottleneck, [2, 1, 1, 1], (None, None, 3), 46),
    ],
)
def test_torchvision_resnet(block, layers, image_shape, size):
    torch.manual_seed(0)
    model = ref.randomize(ref.ResNet(block, layers, num_classes=5, widths=(4, 4, 8, 8), stem_width=4))
    classifier = from_torchvision(model, include_head=True, image_shape=image_shape)
    assert isinstance(classifier, ImageClassifier) and classifier.num_classes == 5
    backbone = classifier.backbone
    assert isinstance(backbone, ResNetBackbone)
    assert backbone.stage_blocks == layers and backbone.stage_filters == [4, 4, 8, 8]
    assert backbone.block_type == ("basic" if block is ref.BasicBlock else "bottleneck")
    assert (backbone.shortcut, backbone.stem, backbone.stem_filters) == ("B", "imagenet", 4)
    assert backbone.image_shape == (image_shape or (224, 224, 3))
    x = _images(size)
    label = f"resnet {backbone.block_type} {size}px"
    assert _max_difference(backbone, model, ref.resnet_features, x, label + " layer4") < TOLERANCE
    assert _max_difference(classifier, model, _logits, x, label + " logits") < TOLERANCE


@pytest.mark.parametrize(
    "convs_per_stage, batch_norm, size, configuration",
    [((1, 1, 2, 2, 2), False, 32, "A"), ((2, 2, 3, 3, 3), True, 64, "D")],  # vgg11; vgg16_bn
)
def test_torchvision_vgg(convs_per_stage, batch_norm, size, configuration):
    torch.manual_seed(0)
    features = ref.make_vgg_layers(convs_per_stage, (8, 8, 8, 8, 8), batch_norm)
    model = ref.randomize(ref.VGG(features, num_classes=5, dropout=0.3, fc_units=(16, 16)))
    classifier = from_torchvision(model, include_head=True, image_shape=(size, size, 3))
    backbone = classifier.backbone
    assert isinstance(backbone, VGGBackbone)
    assert (backbone.configuration, backbone.batch_norm, backbone.dropout) == (configuration, batch_norm, 0.3)
    assert (backbone.filters, backbone.fc_units) == ((8,) * 5, (16, 16))
    x = _images(size)
    label = f"vgg {configuration} bn={batch_norm} {size}px"
    assert _max_difference(backbone, model, ref.vgg_fc7, x, label + " fc7") < TOLERANCE
    assert _max_difference(classifier, model, _logits, x, label + " logits") < TOLERANCE


# --- timm VisionTransformer (re-stated) -----------------------------------------------------

TINY_VIT = dict(patch_size=8, embed_dim=32, depth=2, num_heads=2, mlp_ratio=2.0, num_classes=5)


def _vit(**kwargs):
    torch.manual_seed(0)
    return ref.randomize(ref.VisionTransformer(**{**TINY_VIT, **kwargs}))


def test_timm_vit_class_token_at_a_non_default_non_square_size():
    model = _vit(img_size=(32, 48))
    classifier = from_timm(model, include_head=True)
    backbone = classifier.backbone
    assert isinstance(backbone, ViTBackbone)
    assert (backbone.image_shape, backbone.grid_size, backbone.patch_size) == ((32, 48, 3), (4, 6), 8)
    assert (backbone.num_layers, backbone.hidden_dim, backbone.num_heads, backbone.mlp_dim) == (2, 32, 2, 64)
    assert (backbone.pooling, backbone.layer_norm_epsilon, backbone.dropout_rate) == ("token", 1e-6, 0.0)
    x = _images(32, 48)
    assert _max_difference(backbone, model, ref.vit_pre_logits, x, "vit token 32x48 pre-logits") < TOLERANCE
    assert _max_difference(classifier, model, _logits, x, "vit token 32x48 logits") < TOLERANCE


def test_timm_vit_global_average_pooling():
    model = _vit(img_size=32, class_token=False, global_pool="avg", fc_norm=False)
    backbone = from_timm(model)
    assert isinstance(backbone, ViTBackbone) and backbone.pooling == "gap" and backbone.sequence_length == 16
    x = _images(32)
    assert _max_difference(backbone, model, ref.vit_pre_logits, x, "vit gap 32px pre-logits") < TOLERANCE


def test_timm_vit_converted_to_another_image_size():
    model = _vit(img_size=32)  # a 4x4 grid
    backbone = from_timm(model, image_shape=(48, 48, 3))  # 6x6: positions resized as timm resizes them
    assert backbone.grid_size == (6, 6)
    # timm's resample_abs_pos_embed: class row kept, the grid resized by bicubic antialiased interpolation.
    pos = model.pos_embed.detach()
    grid = pos[:, 1:].reshape(1, 4, 4, -1).permute(0, 3, 1, 2)
    grid = torch.nn.functional.interpolate(grid, size=(6, 6), mode="bicubic", antialias=True)  # (1, D, 6, 6)
    resized = torch.cat([pos[:, :1], grid.flatten(2).transpose(1, 2)], dim=1)  # (1, 1 + 36, D)
    at_48 = ref.VisionTransformer(**{**TINY_VIT, "img_size": 48}).eval()
    at_48.load_state_dict({**model.state_dict(), "pos_embed": resized})
    x = _images(48)
    assert _max_difference(backbone, at_48, ref.vit_pre_logits, x, "vit 32->48px pre-logits") < TOLERANCE


# --- what is refused, and how ---------------------------------------------------------------


class DenseNet(torch.nn.Module):  # any architecture the converters do not know
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Conv2d(3, 4, 3)


def _resnet(**changes):
    torch.manual_seed(0)
    model = ref.ResNet(ref.BasicBlock, [1, 1, 1, 1], num_classes=5, widths=(4, 4, 8, 8), stem_width=4)
    for path, module in changes.items():
        parent, _, name = path.replace("__", ".").rpartition(".")
        setattr(model.get_submodule(parent) if parent else model, name, module)
    return model


def _vgg(convs_per_stage):
    return ref.VGG(ref.make_vgg_layers(convs_per_stage, (4,) * 5), num_classes=5, fc_units=(8, 8))


REFUSALS = [
    (from_torchvision, lambda: DenseNet(), r"cannot convert tests\.test_convert\.DenseNet: DenseNet is not one of"),
    (from_torchvision, lambda: _vit(), r"VisionTransformer is not one of .*\(from_timm reads timm's Vis"),
    (from_timm, lambda: _vgg((1, 1, 2, 2, 2)), r"VGG is not one of its architectures \(from_torchvision reads"),
    (from_torchvision, lambda: _vgg((1, 1, 1, 1, 1)), r"convolutions per stage are \(1, 1, 1, 1, 1\)"),
    (from_torchvision, lambda: _resnet(conv1=torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3))), "deep stem"),
    (from_timm, lambda: _resnet(layer1__0__se=torch.nn.Conv2d(4, 4, 1)), r"`layer1\.0\.se` is a Conv2d, which"),
    (
        from_torchvision,
        lambda: _resnet(layer2__0__conv2=torch.nn.Conv2d(4, 4, 3, 1, 1, groups=2, bias=False)),
        r"`layer2\.0\.conv2` is a Conv2d with groups=2",
    ),
    (from_timm, lambda: _vit(img_size=32, class_token=False, global_pool="avg"), "it has fc_norm"),
    (from_timm, lambda: _vit(img_size=32, global_pool="avg", fc_norm=False), r"global_pool='avg' with a class"),
    (from_timm, lambda: _vit(img_size=32, init_values=1e-5), r"`blocks\.0\.ls1` is a LayerScale"),
    (from_timm, lambda: _vit(img_size=32, reg_tokens=1), "register tokens"),
    (from_timm, lambda: _vit(img_size=32, qkv_bias=False), r"qkv_bias=False"),
    (from_timm, lambda: _vit(img_size=32, qk_norm=True), r"`blocks\.0\.attn\.q_norm` is a LayerNorm"),
    (from_timm, lambda: _vit(img_size=32, act_layer=lambda: torch.nn.GELU("tanh")), "exact GELU"),
]


@pytest.mark.parametrize("convert, build, message", REFUSALS)
def test_unsupported_models_are_refused_by_name(convert, build, message):
    with pytest.raises(UnsupportedModelError, match=message) as error:
        convert(build())
    library = convert.__name__.removeprefix("from_")
    assert f"from_{library} cannot convert" in str(error.value) and f"Supported: {library}'s" in str(error.value)


def test_wrong_inputs_are_named():
    state_dict = _resnet().state_dict()
    with pytest.raises(UnsupportedModelError, match="takes a PyTorch model object .*got a OrderedDict"):
        from_torchvision(state_dict)
    with pytest.raises(UnsupportedModelError, match="include_head=True, but this VisionTransformer has no"):
        from_timm(_vit(img_size=32, num_classes=0), include_head=True)
    with pytest.raises(ValueError, match="include_head must be True or False; got 'yes'"):
        from_timm(_vit(img_size=32), include_head="yes")


# --- the real libraries (skipped where they do not import, as in CI) ------------------------


def _library(name):
    try:  # a torchvision whose C++ ops do not match torch raises RuntimeError, not ImportError
        return importlib.import_module(name)
    except Exception as error:  # noqa: BLE001
        pytest.skip(f"{name} does not import here: {type(error).__name__}: {str(error)[:80]}")


def _calibrated(model, size=224):
    """Batch-norm statistics of random images (as a trained net's match its data; see calibrate_batch_norm)."""
    images = torch.from_numpy(_images(size, seed=5, n=8).transpose(0, 3, 1, 2).copy())
    return ref.calibrate_batch_norm(model, images)


@pytest.mark.parametrize("name, block_type", [("resnet18", "basic"), ("resnet50", "bottleneck")])
def test_real_torchvision_resnet(name, block_type):
    torchvision = _library("torchvision")
    torch.manual_seed(0)
    model = _calibrated(ref.randomize(getattr(torchvision.models, name)(weights=None)))
    classifier = from_torchvision(model, include_head=True)
    backbone = classifier.backbone
    preset = ResNetBackbone.presets[name]["config"]
    assert (backbone.stage_blocks, backbone.block_type) == (preset["stage_blocks"], block_type)
    assert backbone.count_params() == ResNetBackbone.from_preset(name).count_params()
    x = _images(224)
    _assert_agrees_with_torch(backbone, model, ref.resnet_features, x, f"tv {name} layer4")
    _assert_agrees_with_torch(classifier, model, _logits, x, f"tv {name} logits")


def test_real_torchvision_vgg11_bn():
    torchvision = _library("torchvision")
    torch.manual_seed(0)
    model = _calibrated(ref.randomize(torchvision.models.vgg11_bn(weights=None)))
    classifier = from_torchvision(model, include_head=True)
    assert (classifier.backbone.configuration, classifier.backbone.batch_norm) == ("A", True)
    x = _images(224)
    _assert_agrees_with_torch(classifier.backbone, model, ref.vgg_fc7, x, "tv vgg11_bn fc7")
    _assert_agrees_with_torch(classifier, model, _logits, x, "tv vgg11_bn logits")


@pytest.mark.parametrize("name", ["resnet18", "resnet50"])
def test_real_timm_resnet(name):
    timm = _library("timm")
    torch.manual_seed(0)
    model = _calibrated(ref.randomize(timm.create_model(name, pretrained=False)))
    classifier = from_timm(model, include_head=True)
    assert classifier.backbone.stage_blocks == ResNetBackbone.presets[name]["config"]["stage_blocks"]
    x = _images(224)
    _assert_agrees_with_torch(classifier.backbone, model, ref.resnet_features, x, f"timm {name} layer4")
    _assert_agrees_with_torch(classifier, model, _logits, x, f"timm {name} logits")


@pytest.mark.parametrize(
    "kwargs, image_shape, size",
    [
        ({}, None, 224),
        ({"img_size": 96}, None, 96),  # a non-default size: 6x6 patches
        ({"dynamic_img_size": True}, (96, 96, 3), 96),  # 224 -> 96: timm resamples its positions at run time
        ({"class_token": False, "global_pool": "avg", "fc_norm": False}, None, 224),
    ],
)
def test_real_timm_vit_tiny(kwargs, image_shape, size):
    timm = _library("timm")
    torch.manual_seed(0)
    model = ref.randomize(timm.create_model("vit_tiny_patch16_224", pretrained=False, **kwargs))
    classifier = from_timm(model, include_head=True, image_shape=image_shape)
    backbone = classifier.backbone
    assert (backbone.image_shape, backbone.hidden_dim, backbone.num_layers, backbone.num_heads) == (
        (size, size, 3), 192, 12, 3
    )
    x = _images(size)
    label = f"timm vit_tiny {kwargs} {size}px"
    _assert_agrees_with_torch(backbone, model, ref.vit_pre_logits, x, label + " pre-logits")
    _assert_agrees_with_torch(classifier, model, _logits, x, label + " logits")


def test_real_models_that_are_refused():
    timm = _library("timm")
    torchvision = _library("torchvision")
    with pytest.raises(UnsupportedModelError, match="deep stem"):
        from_timm(timm.create_model("resnet50d", pretrained=False))
    with pytest.raises(UnsupportedModelError, match=r"`layer1\.0\.se` is a SEModule"):
        from_timm(timm.create_model("seresnet18", pretrained=False))
    with pytest.raises(UnsupportedModelError, match="it has fc_norm"):
        from_timm(timm.create_model("vit_tiny_patch16_224", pretrained=False, global_pool="avg", class_token=False))
    with pytest.raises(UnsupportedModelError, match="ResNeXt have other bottleneck widths"):
        from_torchvision(torchvision.models.wide_resnet50_2(weights=None))
    with pytest.raises(UnsupportedModelError, match="VisionTransformer is not one of its architectures"):
        from_torchvision(torchvision.models.vit_b_32(weights=None))
    with pytest.raises(UnsupportedModelError, match="torchvision's VisionTransformer"):
        from_timm(torchvision.models.vit_b_32(weights=None))
