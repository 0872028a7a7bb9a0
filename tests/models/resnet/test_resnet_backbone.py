"""ResNetBackbone (He et al. 2016): parameter counts, shapes, shortcuts, save/fit, converter."""

import contextlib
import functools
import inspect
import os

import numpy as np
import pytest

import keras
from keras.src.backend.common import global_state

from keras_paperzoo.models.resnet import (
    RESNET_PRESETS,
    ResNetBackbone,
    ZeroPadShortcut,
    apply_basic_block,
    resnet_from_torch_state_dict,
)
from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model

# torchvision's `sum(p.numel() for p in model.parameters())` (trainable parameters, no BN
# running statistics), with the 1000-way fc head.
TORCHVISION_PARAMS = {
    "resnet18": 11_689_512,
    "resnet34": 21_797_672,
    "resnet50": 25_557_032,
    "resnet101": 44_549_160,
    "resnet152": 60_192_808,
}
# What shortcut B adds to ResNet-18/34 over A: a 1x1 projection + BN (gamma, beta) at the
# start of stages 2, 3 and 4: (64*128 + 2*128) + (128*256 + 2*256) + (256*512 + 2*512).
BASIC_PROJECTIONS = 8_448 + 33_280 + 132_096  # 173,824

# CIFAR-10 nets (Sec. 4.2), 6n+2 layers, option A, 10-way head, by hand:
#   convs: stem 3*3*3*16 = 432; stage 1: 2n convs 3*3*16*16 = 2,304 each;
#          stage 2: 3*3*16*32 = 4,608 then (2n-1) x 3*3*32*32 = 9,216;
#          stage 3: 3*3*32*64 = 18,432 then (2n-1) x 3*3*64*64 = 36,864;
#          sum = 96,768 n - 22,608.
#   BN:    16 + 2n*(16 + 32 + 64) = 16 + 224 n channels, gamma and beta: 32 + 448 n
#          (the moving mean and variance add as many again, non-trainable).
#   head:  64*10 + 10 = 650.   Option A shortcuts have no parameters.
#   trainable = 97,216 n - 21,926:  n=3 (ResNet-20) 269,722;  with the BN statistics
#   (count_params) 97,664 n - 21,894 = 271,098.
# The paper rounds these to 0.27M, 0.46M, 0.66M, 0.85M, 1.7M and 19.4M.
CIFAR_N = {"resnet20_cifar": 3, "resnet32_cifar": 5, "resnet44_cifar": 7, "resnet56_cifar": 9,
           "resnet110_cifar": 18, "resnet1202_cifar": 200}
CIFAR_PAPER_PARAMS = {"resnet20_cifar": 0.27e6, "resnet32_cifar": 0.46e6, "resnet44_cifar": 0.66e6,
                      "resnet56_cifar": 0.85e6, "resnet110_cifar": 1.7e6, "resnet1202_cifar": 19.4e6}


def cifar_trainable(n):
    return 97_216 * n - 21_926


def analytic_params(config, classes, trainable_only=True):
    """Parameters of a config + linear head, from the architecture (not from Keras)."""
    bn = 2 if trainable_only else 4  # gamma, beta (+ moving mean, moving variance)
    imagenet = config.get("stem", "imagenet") == "imagenet"
    c = config.get("stem_filters") or (64 if imagenet else 16)
    k = 7 if imagenet else 3
    total = k * k * config.get("image_shape", (224, 224, 3))[-1] * c + bn * c
    basic = config.get("block_type", "basic") == "basic"
    for s, (n, f) in enumerate(zip(config["stage_blocks"], config["stage_filters"])):
        for b in range(n):
            stride = 2 if s > 0 and b == 0 else 1
            if basic:
                out = f
                total += 9 * c * f + 9 * f * f + bn * 2 * f
            else:
                out = 4 * f
                total += c * f + 9 * f * f + f * out + bn * (2 * f + out)
            shortcut = config.get("shortcut", "B")
            if config.get("residual", True) and (
                shortcut == "C" or (shortcut == "B" and (stride > 1 or c != out))
            ):
                total += c * out + bn * out
            c = out
    return total + c * classes + classes


@contextlib.contextmanager
def shapes_only():
    """Build models whose variables have their shapes but no values.

    Keras defers the initialisation of variables created in a `StatelessScope`; with
    `initialize_variables=False` they are never filled. Counting parameters and reading
    shapes need nothing more, and skipping the random initialisers makes the big presets
    ~10x cheaper to build (on JAX each new kernel shape compiles its own RNG program, 1-3 s
    on a busy 2-core machine). Models built here must not be called.
    """
    try:
        with keras.StatelessScope(initialize_variables=False):
            yield
    finally:
        # Forget the unfilled variables, or the next StatelessScope to close would fill them.
        global_state.set_global_attribute("uninitialized_variables", [])


@functools.lru_cache(maxsize=None)
def preset(name, **overrides):
    """A preset with a linear head, built once per session with `shapes_only` (not callable)."""
    with shapes_only():
        backbone = ResNetBackbone.from_preset(name, **overrides)
        classes = 10 if name.endswith("_cifar") else 1000
        return backbone, with_head(backbone, classes)


def trainable_count(model):
    return sum(int(np.prod(w.shape)) for w in model.trainable_weights)


def with_head(backbone, classes):
    return keras.Sequential(
        [backbone, keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(classes)]
    )


def tiny(**overrides):
    config = dict(
        stage_blocks=[1, 1], stage_filters=[4, 8], block_type="basic", shortcut="A",
        stem="cifar", stem_filters=4, image_shape=(16, 16, 3),
    )
    config.update(overrides)
    return ResNetBackbone(**config)


def images(n=4, size=16, channels=3, seed=0):
    return np.random.default_rng(seed).normal(size=(n, size, size, channels)).astype("float32")


# --- parameter counts --------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(TORCHVISION_PARAMS))
def test_imagenet_parameter_counts_match_torchvision(name):
    _, model = preset(name)
    assert trainable_count(model) == TORCHVISION_PARAMS[name]
    config = RESNET_PRESETS[name]["config"]
    assert trainable_count(model) == analytic_params(config, 1000)
    assert model.count_params() == analytic_params(config, 1000, trainable_only=False)


@pytest.mark.parametrize("depth", [18, 34])
def test_plain_imagenet_nets_have_no_additions_and_option_a_counts(depth):
    plain, plain_model = preset(f"plain{depth}")
    residual, _ = preset(f"resnet{depth}")
    option_a, option_a_model = preset(f"resnet{depth}", shortcut="A")
    assert not [l for l in plain.layers if isinstance(l, keras.layers.Add)]
    blocks = sum(RESNET_PRESETS[f"resnet{depth}"]["config"]["stage_blocks"])
    assert len([l for l in residual.layers if isinstance(l, keras.layers.Add)]) == blocks
    assert len([l for l in option_a.layers if isinstance(l, keras.layers.Add)]) == blocks
    assert trainable_count(plain_model) == TORCHVISION_PARAMS[f"resnet{depth}"] - BASIC_PROJECTIONS
    assert plain_model.count_params() == option_a_model.count_params()  # identity adds nothing


@pytest.mark.parametrize("name", [n for n in CIFAR_N if n != "resnet1202_cifar"])
def test_cifar_parameter_counts(name):
    _, model = preset(name)
    n = CIFAR_N[name]
    assert trainable_count(model) == cifar_trainable(n)
    assert model.count_params() == 97_664 * n - 21_894  # + BN moving mean and variance
    assert trainable_count(model) == pytest.approx(CIFAR_PAPER_PARAMS[name], rel=0.02)
    plain, plain_model = preset(name.replace("resnet", "plain"))
    assert not [l for l in plain.layers if isinstance(l, keras.layers.Add)]
    assert plain_model.count_params() == model.count_params()  # identity adds nothing
    assert analytic_params(RESNET_PRESETS[name]["config"], 10) == cifar_trainable(n)


def test_resnet1202_parameter_count_from_the_config():
    # Building ResNet-1202 takes ~10 s even with `shapes_only` (see the slow test below).
    config = RESNET_PRESETS["resnet1202_cifar"]["config"]
    assert config["stage_blocks"] == [200, 200, 200] and config["shortcut"] == "A"
    assert analytic_params(config, 10) == cifar_trainable(200) == 19_421_274
    assert cifar_trainable(200) == pytest.approx(19.4e6, rel=0.02)


@pytest.mark.slow(reason="builds the largest CIFAR ResNets; run only with $PAPERZOO_SLOW=1")
@pytest.mark.skipif(
    not os.environ.get("PAPERZOO_SLOW"), reason="10-30 s build; set PAPERZOO_SLOW=1 to run"
)
def test_resnet1202_builds_with_its_parameter_count():
    backbone, model = preset("resnet1202_cifar")
    assert tuple(backbone.output.shape) == (None, 8, 8, 64)
    assert trainable_count(model) == 19_421_274


def test_shortcut_c_has_more_parameters_than_b_and_b_than_a():
    counts = {s: preset("resnet20_cifar", shortcut=s)[0].count_params() for s in "ABC"}
    assert counts["C"] > counts["B"] > counts["A"]
    # B projects 16->32 and 32->64 at the two downsampling blocks: (16*32 + 4*32) + (32*64 + 4*64).
    assert counts["B"] - counts["A"] == 640 + 2_304
    config = dict(RESNET_PRESETS["resnet20_cifar"]["config"], shortcut="C")
    assert counts["C"] == analytic_params(config, 0, trainable_only=False)


# --- shapes ------------------------------------------------------------------------------


def test_resnet50_shapes_and_pyramid():
    backbone, _ = preset("resnet50")
    assert tuple(backbone.output.shape) == (None, 7, 7, 2048)
    assert {k: tuple(v.shape) for k, v in backbone.pyramid_outputs.items()} == {
        "P2": (None, 56, 56, 256),  # stride 4
        "P3": (None, 28, 28, 512),  # stride 8
        "P4": (None, 14, 14, 1024),  # stride 16
        "P5": (None, 7, 7, 2048),  # stride 32
    }
    assert backbone.pyramid_outputs["P5"] is backbone.output
    # The paper's bottleneck: 1x1 64 -> 3x3 64 -> 1x1 256; stride 2 in the 3x3 (torchvision).
    assert backbone.get_layer("stage2_block1_conv1").strides == (1, 1)
    assert backbone.get_layer("stage2_block1_conv2").strides == (2, 2)
    caffe, _ = preset("resnet50", stride_in_1x1=True, image_shape=(64, 64, 3))
    assert caffe.get_layer("stage2_block1_conv1").strides == (2, 2)
    assert caffe.get_layer("stage2_block1_conv2").strides == (1, 1)
    assert tuple(caffe.output.shape) == (None, 2, 2, 2048)


def test_cifar_nets_output_8x8x64_and_pyramid_p0_to_p2():
    backbone, _ = preset("resnet20_cifar")
    assert tuple(backbone.output.shape) == (None, 8, 8, 64)
    assert {k: tuple(v.shape) for k, v in backbone.pyramid_outputs.items()} == {
        "P0": (None, 32, 32, 16), "P1": (None, 16, 16, 32), "P2": (None, 8, 8, 64),
    }
    plain, _ = preset("plain56_cifar")
    assert tuple(plain.output.shape) == (None, 8, 8, 64)


def test_from_preset_overrides_and_unknown_spatial_dims():
    gray, _ = preset("resnet20_cifar", image_shape=(28, 28, 1))
    assert tuple(gray.output.shape) == (None, 7, 7, 64)
    assert gray.get_config()["image_shape"] == (28, 28, 1)
    any_size = tiny(image_shape=(None, None, 3))
    assert tuple(any_size.output.shape) == (None, None, None, 8)
    assert keras.ops.convert_to_numpy(any_size(images(2, 16))).shape == (2, 8, 8, 8)


# --- the shortcut ------------------------------------------------------------------------


@pytest.mark.parametrize("size", [4, 5])
def test_option_a_shortcut_subsamples_and_zero_pads(size):
    x = np.arange(2 * size * size * 3, dtype="float32").reshape(2, size, size, 3)
    out = keras.ops.convert_to_numpy(ZeroPadShortcut(filters=8, strides=2)(x))
    half = (size + 1) // 2
    assert out.shape == (2, half, half, 8)
    np.testing.assert_array_equal(out[..., :3], x[:, ::2, ::2, :])
    np.testing.assert_array_equal(out[..., 3:], 0.0)


def test_option_a_block_adds_the_zero_padded_input():
    # A basic block whose residual branch is switched off (last BN: gamma = beta = 0)
    # outputs ReLU(shortcut(x)): the subsampled input with zeros in the new channels.
    inputs = keras.Input((5, 5, 4))
    block = keras.Model(inputs, apply_basic_block(inputs, 8, strides=2, shortcut="A", name="b"))
    bn2 = block.get_layer("b_bn2")
    bn2.gamma.assign(np.zeros(8, "float32"))
    bn2.beta.assign(np.zeros(8, "float32"))
    x = np.random.default_rng(0).random((2, 5, 5, 4)).astype("float32") + 0.1  # positive
    out = keras.ops.convert_to_numpy(block(x, training=False))
    assert out.shape == (2, 3, 3, 8)
    np.testing.assert_allclose(out[..., :4], x[:, ::2, ::2, :], rtol=0, atol=1e-6)
    np.testing.assert_array_equal(out[..., 4:], 0.0)
    assert not [w for w in block.get_layer("b_shortcut_pad").weights]


def test_option_b_projects_only_where_the_shape_changes_and_c_everywhere():
    names = lambda b: {l.name for l in b.layers if l.name.endswith("shortcut_conv")}
    with shapes_only():
        b = tiny(stage_blocks=[2, 2], shortcut="B")
        narrower = tiny(stage_blocks=[2, 2], shortcut="B", stem_filters=8)  # 8 -> 4 channels
        c = tiny(stage_blocks=[2, 2], shortcut="C")
    assert names(b) == {"stage2_block1_shortcut_conv"}  # 4 -> 8 channels, stride 2
    assert names(narrower) == {"stage1_block1_shortcut_conv", "stage2_block1_shortcut_conv"}
    assert len(names(c)) == 4


# --- the checks every model passes ---------------------------------------------------------


def test_config_roundtrip():
    with shapes_only():  # the config is all that is compared
        backbone = tiny(bn_momentum=0.8, bn_epsilon=1e-3)
        clone = check_config_roundtrip(backbone)
    config = backbone.get_config()
    for key in ("name", "trainable"):
        config.pop(key)
    assert set(config) == set(inspect.signature(ResNetBackbone.__init__).parameters) - {"self", "kwargs"}
    assert clone.count_params() == backbone.count_params()


@pytest.mark.parametrize(
    "overrides",
    [
        {},  # basic, option A (ZeroPadShortcut), CIFAR stem
        dict(block_type="bottleneck", shortcut="B", stem="imagenet", stride_in_1x1=True,
             image_shape=(32, 32, 3)),
    ],
    ids=["basic_A_cifar", "bottleneck_B_imagenet"],
)
def test_saved_model_and_pyramid_survive_keras_save_load(overrides, tmp_path):
    backbone = tiny(**overrides)
    x = images(2, backbone.image_shape[0])
    loaded = check_saved_model(backbone, x, tmp_path)
    assert loaded.get_config() == backbone.get_config()
    pyramid = keras.Model(backbone.input, backbone.pyramid_outputs)
    loaded_pyramid = keras.Model(loaded.input, loaded.pyramid_outputs)
    before, after = pyramid(x, training=False), loaded_pyramid(x, training=False)
    assert sorted(after) == sorted(before) == sorted(backbone.pyramid_outputs)
    for key in before:
        np.testing.assert_allclose(
            keras.ops.convert_to_numpy(after[key]), keras.ops.convert_to_numpy(before[key]), atol=1e-6
        )


def test_fit_with_a_small_head():
    backbone = tiny()
    model = with_head(backbone, 3)
    model.compile(
        optimizer=keras.optimizers.SGD(0.05, momentum=0.9),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    x = images(16, 16)
    y = np.random.default_rng(1).integers(0, 3, 16)
    mean_before = keras.ops.convert_to_numpy(backbone.get_layer("stem_bn").moving_mean).copy()
    kernel_before = keras.ops.convert_to_numpy(backbone.get_layer("stem_conv").kernel).copy()
    check_fit(model, x, y, epochs=2, batch_size=8)
    assert not np.allclose(keras.ops.convert_to_numpy(backbone.get_layer("stem_conv").kernel), kernel_before)
    assert not np.allclose(
        keras.ops.convert_to_numpy(backbone.get_layer("stem_bn").moving_mean), mean_before
    )


# --- argument errors ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: ResNetBackbone.from_preset("resnet19"), "Unknown ResNetBackbone preset 'resnet19'"),
        (lambda: tiny(shortcut="D"), "shortcut should be one of .* got 'D'"),
        (lambda: tiny(block_type="huge"), "block_type should be one of .* got 'huge'"),
        (lambda: tiny(stage_filters=[4, 8, 16]), r"same length; got stage_blocks=\[1, 1\]"),
        (lambda: ResNetBackbone.from_preset("resnet18", image_shape=(16, 16, 3)),
         "Input height 16 should be at least the total stride 32"),
        (lambda: tiny(image_shape=(16, 1, 3)), "Input width 1 should be at least the total stride 2"),
        (lambda: tiny(stem="vit"), "stem should be one of .* got 'vit'"),
        (lambda: tiny(stem_filters=16), "Shortcut 'A' .* stage 1 goes from 16 to 4 channels"),
        (lambda: tiny(stage_blocks=[1, 0]), r"Every entry of stage_blocks should be an int >= 1; got \[1, 0\]"),
        (lambda: tiny(image_shape=(16, 16)), r"image_shape should be \(height, width, channels\)"),
        (lambda: tiny(residual="yes"), "residual should be True or False; got 'yes'"),
        (lambda: tiny(bn_momentum=1.5), r"bn_momentum should be in \[0, 1\); got 1.5"),
    ],
)
def test_bad_arguments_raise_clear_value_errors(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_every_preset_is_listed_with_a_description():
    expected = {f"resnet{d}" for d in (18, 34, 50, 101, 152)} | {"plain18", "plain34"}
    expected |= {f"resnet{d}_cifar" for d in (20, 32, 44, 56, 110, 1202)}
    expected |= {f"plain{d}_cifar" for d in (20, 32, 44, 56, 110)}
    assert set(ResNetBackbone.preset_names()) == expected
    for name, preset in RESNET_PRESETS.items():
        assert preset["description"]
        plain = name.startswith("plain")
        assert preset["config"]["residual"] is not plain
        twin = RESNET_PRESETS[name.replace("plain", "resnet")]["config"]
        assert {**preset["config"], "residual": True} == twin  # plain = residual net - shortcuts
        assert preset["config"]["shortcut"] == ("A" if name.endswith("_cifar") else "B")


# --- torchvision weights -----------------------------------------------------------------


def _torch_resnet(block_type, stem_width, widths, blocks):
    """A tiny torchvision ResNet (tests/torch_references.py: same modules, names and forward)."""
    torch = pytest.importorskip("torch")
    from tests import torch_references as ref

    block = ref.BasicBlock if block_type == "basic" else ref.Bottleneck
    torch.manual_seed(0)
    return ref.randomize(ref.ResNet(block, blocks, num_classes=10, widths=widths, stem_width=stem_width))


def _features(torch_model):
    """x -> the torch ResNet's layer4 map (what ResNetBackbone returns)."""
    from tests import torch_references as ref

    return lambda x: ref.resnet_features(torch_model, x)


def _compare_with_torch(torch_model, features, backbone, size=46):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(2).normal(size=(2, size, size, 3)).astype("float32")
    with torch.no_grad():
        expected = features(torch.from_numpy(x.transpose(0, 3, 1, 2))).numpy().transpose(0, 2, 3, 1)
    ours = keras.ops.convert_to_numpy(backbone(x, training=False))
    assert ours.shape == expected.shape
    assert np.abs(ours - expected).max() < 1e-4


@pytest.mark.parametrize(
    "block_type, stem_width, widths, blocks",
    [("basic", 4, [4, 4, 8, 8], [2, 2, 2, 2]), ("bottleneck", 4, [4, 4, 8, 8], [2, 1, 1, 1])],
)
def test_converter_matches_a_torchvision_style_resnet(block_type, stem_width, widths, blocks):
    torch_model = _torch_resnet(block_type, stem_width, widths, blocks)
    config = dict(stage_blocks=blocks, stage_filters=widths, block_type=block_type,
                  stem_filters=stem_width, image_shape=(None, None, 3))
    backbone = resnet_from_torch_state_dict(torch_model.state_dict(), config)
    # 46 -> 23 -> 12 -> 6 -> 3 -> 2: even sizes, where Keras "same" would pad a stride-2 conv
    # on one side only (PyTorch pads both), and odd ones, where output sizes round up.
    _compare_with_torch(torch_model, _features(torch_model), backbone)


def test_converter_rejects_a_state_dict_of_another_architecture():
    torch_model = _torch_resnet("basic", 4, [4, 4, 8, 8], [2, 2, 2, 2])
    state = torch_model.state_dict()
    config = dict(stage_blocks=[2, 2, 2, 2], stage_filters=[4, 4, 8, 8], stem_filters=4)
    with shapes_only():  # names and shapes are checked; assignments go to the scope
        with pytest.raises(ValueError, match="no layer in the backbone"):
            resnet_from_torch_state_dict(state, dict(config, stage_blocks=[2, 2, 2, 1]))
        with pytest.raises(ValueError, match="Shape mismatch"):
            resnet_from_torch_state_dict(state, dict(config, stage_filters=[4, 4, 8, 16]))
        with pytest.raises(ValueError, match="has no .*shortcut_conv"):
            resnet_from_torch_state_dict(state, dict(config, shortcut="C"))


def test_converter_on_torchvision_resnet18():
    pytest.importorskip("torch")
    try:  # on a CPU torch build that torchvision's C++ ops do not match, the import raises
        import torchvision  # RuntimeError, not ImportError: pytest.importorskip would fail
    except Exception as error:  # noqa: BLE001
        pytest.skip(f"torchvision is not importable: {error}")
    from tests import torch_references as ref

    torch_model = ref.randomize(torchvision.models.resnet18(weights=None))
    backbone = resnet_from_torch_state_dict(torch_model.state_dict(), "resnet18", image_shape=(64, 64, 3))
    _compare_with_torch(torch_model, _features(torch_model), backbone, size=64)
