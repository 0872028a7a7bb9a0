"""VGGBackbone (Simonyan & Zisserman 2015, Tables 1 and 2).

Full-size networks are only built symbolically, with their weights left undrawn
(`shapes_only`); forward passes and `fit` use 32x32 networks with a few channels.
"""

import numpy as np
import pytest

import keras

from keras_paperzoo.layers.local_response_normalization import LocalResponseNormalization
from keras_paperzoo.models.vgg import PAPER_PARAMETER_MILLIONS, VGG_CONFIGURATIONS, VGG_PRESETS, VGGBackbone
from tests.model_checks import check_saved_model
from tests.model_tests import run_backbone_test, shapes_only

FC8 = 4096 * 1000 + 1000  # the 1000-way layer the classifier head adds
TINY = {"image_shape": (32, 32, 3), "filters": (8, 8, 8, 8, 8), "fc_units": (16, 16)}
# torchvision's parameter counts (trainable parameters; batch norm's statistics are buffers).
TORCHVISION_COUNTS = {"vgg11": 132_863_336, "vgg13": 133_047_848, "vgg16": 138_357_544, "vgg19": 143_667_240}
TORCHVISION_BN_COUNTS = {
    "vgg11": 132_868_840,
    "vgg13": 133_053_736,
    "vgg16": 138_365_992,
    "vgg19": 143_678_248,
}


@pytest.fixture(scope="module")
def paper_networks():
    with shapes_only():
        return {configuration: VGGBackbone(configuration) for configuration in VGG_CONFIGURATIONS}


def test_table_2_parameter_counts(paper_networks):
    counts = {c: backbone.count_params() + FC8 for c, backbone in paper_networks.items()}
    assert {c: round(n / 1e6) for c, n in counts.items()} == PAPER_PARAMETER_MILLIONS
    assert counts == {
        "A": 132_863_336,
        "A-LRN": 132_863_336,  # LRN has no parameters
        "B": 133_047_848,
        "C": 133_638_952,  # B + three 1x1 convolutions: 256*256+256 + 2 * (512*512+512)
        "D": 138_357_544,
        "E": 143_667_240,
    }
    assert counts["C"] - counts["B"] == 256 * 256 + 256 + 2 * (512 * 512 + 512)
    assert counts["B"] < counts["C"] < counts["D"]


@pytest.mark.parametrize("preset", sorted(TORCHVISION_COUNTS))
def test_vgg11_13_16_19_have_torchvisions_counts(preset):
    with shapes_only():
        backbone = VGGBackbone.from_preset(preset)
        with_bn = VGGBackbone.from_preset(preset, batch_norm=True)
    assert backbone.count_params() + FC8 == TORCHVISION_COUNTS[preset]
    # vgg*_bn: batch norm's moving statistics are buffers in PyTorch, weights in Keras.
    trainable = sum(int(np.prod(w.shape)) for w in with_bn.trainable_weights)
    assert trainable + FC8 == TORCHVISION_BN_COUNTS[preset]


def test_presets_and_aliases():
    expected = {"vgg_a": "A", "vgg_a_lrn": "A-LRN", "vgg_b": "B", "vgg_c": "C", "vgg_d": "D", "vgg_e": "E"}
    expected.update({"vgg11": "A", "vgg13": "B", "vgg16": "D", "vgg19": "E"})
    assert {name: VGG_PRESETS[name]["config"]["configuration"] for name in VGG_PRESETS} == expected
    assert VGGBackbone.preset_names() == sorted(expected)


def test_table_1_structure(paper_networks):
    weight_layers = {"A": 11, "A-LRN": 11, "B": 13, "C": 16, "D": 16, "E": 19}
    for configuration, backbone in paper_networks.items():
        convs = [layer for layer in backbone.layers if isinstance(layer, keras.layers.Conv2D)]
        denses = [layer for layer in backbone.layers if isinstance(layer, keras.layers.Dense)]
        assert len(convs) + len(denses) + 1 == weight_layers[configuration]  # + fc8 in the head
        assert all(c.strides == (1, 1) and c.activation is keras.activations.relu for c in convs)
        pools = [layer for layer in backbone.layers if isinstance(layer, keras.layers.MaxPooling2D)]
        assert [(p.pool_size, p.strides) for p in pools] == [((2, 2), (2, 2))] * 5
        assert backbone.get_layer("block5_pool").output.shape[1:] == (7, 7, 512)
        widths = [backbone.get_layer(f"block{s}_pool").output.shape[-1] for s in range(1, 6)]
        assert widths == [64, 128, 256, 512, 512]
        assert backbone.output_shape == (None, 4096)
        assert [backbone.get_layer(f"fc{i}_dropout").rate for i in (6, 7)] == [0.5, 0.5]
    one_by_one = [c.name for c in paper_networks["C"].layers if getattr(c, "kernel_size", None) == (1, 1)]
    assert one_by_one == ["block3_conv3", "block4_conv3", "block5_conv3"]
    names = [layer.name for layer in paper_networks["A-LRN"].layers[:4]]
    assert names == ["images", "block1_conv1", "block1_lrn", "block1_pool"]
    assert sum(isinstance(layer, LocalResponseNormalization) for layer in paper_networks["A-LRN"].layers) == 1
    assert not any(isinstance(layer, LocalResponseNormalization) for layer in paper_networks["A"].layers)


def test_include_fc_false_and_batch_norm_layout():
    with shapes_only():
        features = VGGBackbone("D", include_fc=False)
        any_size = VGGBackbone("E", image_shape=(None, None, 3), include_fc=False)
        with_bn = VGGBackbone("A", batch_norm=True, include_fc=False)
    assert features.output_shape == (None, 7, 7, 512)
    assert features.count_params() == 138_357_544 - FC8 - (25088 * 4096 + 4096) - (4096 * 4096 + 4096)
    assert any_size.output_shape == (None, None, None, 512)
    names = [layer.name for layer in with_bn.layers[:5]]
    assert names == ["images", "block1_conv1", "block1_conv1_bn", "block1_conv1_relu", "block1_pool"]
    assert with_bn.get_layer("block1_conv1").activation is keras.activations.linear
    assert with_bn.get_layer("block1_conv1_bn").epsilon == 1e-5


def test_bad_arguments_name_the_value_and_rule():
    with pytest.raises(ValueError, match="Unknown VGG configuration 'F'; Table 1 has 'A', 'A-LRN'"):
        VGGBackbone("F")
    with pytest.raises(ValueError, match="image height 16 is too small.*at least 32 pixels"):
        VGGBackbone("A", image_shape=(16, 16, 3), include_fc=False)
    with pytest.raises(ValueError, match="image width 31 is too small.*at least 32 pixels"):
        VGGBackbone("A", image_shape=(224, 31, 3))
    with pytest.raises(ValueError, match="include_fc=True needs a known height and width"):
        VGGBackbone("A", image_shape=(None, None, 3))
    with pytest.raises(ValueError, match="filters must be 5 positive ints; got filters=.64, 128"):
        VGGBackbone("A", filters=(64, 128))
    with pytest.raises(ValueError, match="fc_units must be a non-empty list of positive ints"):
        VGGBackbone("A", fc_units=())
    with pytest.raises(ValueError, match=r"dropout must be a number in \[0, 1\); got -0.1"):
        VGGBackbone("A", dropout=-0.1)
    with pytest.raises(ValueError, match="Unknown VGGBackbone preset 'vgg18'"):
        VGGBackbone.from_preset("vgg18")


def test_tiny_from_preset_config_save_and_fit(tmp_path):
    keras.utils.set_random_seed(2)
    x = np.random.default_rng(0).normal(size=(8, 32, 32, 3)).astype("float32")
    # Config round trip, output shape, .keras outputs, a step of fit (training-mode batch norm).
    backbone = run_backbone_test(VGGBackbone, {**TINY, "batch_norm": True}, x, (8, 16), tmp_path, preset="vgg_c")
    assert backbone.configuration == "C" and backbone.batch_norm
    assert backbone.get_layer("block5_pool").output.shape[1:] == (1, 1, 8)
    assert backbone.output_shape == (None, 16)
    clone = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(backbone))
    assert clone.filters == TINY["filters"] and clone.batch_norm
    moving_mean = keras.ops.convert_to_numpy(backbone.get_layer("block1_conv1_bn").moving_mean)
    assert np.any(moving_mean != 0)  # batch norm's statistics were updated

    lrn = VGGBackbone.from_preset("vgg_a_lrn", **TINY, include_fc=False)
    (tmp_path / "lrn").mkdir()
    loaded = check_saved_model(lrn, x[:2], tmp_path / "lrn")
    assert isinstance(loaded.get_layer("block1_lrn"), LocalResponseNormalization)
    assert lrn(x[:2]).shape == (2, 1, 1, 8)
