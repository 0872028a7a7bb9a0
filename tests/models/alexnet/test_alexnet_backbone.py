"""AlexNetBackbone (Krizhevsky et al. 2012, Sec. 3.5 and Figure 2).

Full-size networks are only built symbolically, with their weights left undrawn
(`shapes_only`); forward passes and `fit` use a 67x67 network with a few channels.
"""

import numpy as np
import pytest

import keras

from keras_paperzoo.layers.local_response_normalization import LocalResponseNormalization
from keras_paperzoo.models.alexnet import ALEXNET_PRESETS, AlexNetBackbone
from tests.model_checks import check_fit, check_saved_model
from tests.model_tests import run_backbone_test, shapes_only

FC8 = 4096 * 1000 + 1000  # the 1000-way layer the classifier head adds
TINY = {"image_shape": (67, 67, 3), "filters": (8, 8, 8, 8, 8), "fc_units": (16, 16)}


def test_papers_network_has_60965224_parameters_with_two_towers():
    with shapes_only():
        backbone = AlexNetBackbone.from_preset("alexnet")
    assert backbone.count_params() + FC8 == 60_965_224
    assert backbone.output_shape == (None, 4096)
    assert backbone.input_shape == (None, 227, 227, 3)
    names = ("conv1", "pool1", "pool2", "conv5", "pool5")
    shapes = {name: backbone.get_layer(name).output.shape[1:] for name in names}
    assert shapes == {
        "conv1": (55, 55, 96),
        "pool1": (27, 27, 96),
        "pool2": (13, 13, 256),
        "conv5": (13, 13, 256),
        "pool5": (6, 6, 256),
    }
    # Towers: conv2, conv4 and conv5 see half of the channels below (48, 192, 192).
    groups = {f"conv{i}": backbone.get_layer(f"conv{i}").groups for i in range(1, 6)}
    assert groups == {"conv1": 1, "conv2": 2, "conv3": 1, "conv4": 2, "conv5": 2}
    kernels = [tuple(backbone.get_layer(f"conv{i}").kernel.shape) for i in range(1, 6)]
    assert kernels == [(11, 11, 3, 96), (5, 5, 48, 256), (3, 3, 256, 384), (3, 3, 192, 384), (3, 3, 192, 256)]
    assert backbone.get_layer("fc6").kernel.shape == (6 * 6 * 256, 4096)


def test_one_tower_is_larger_by_the_halved_kernels():
    with shapes_only():
        one_tower = AlexNetBackbone.from_preset("alexnet_one_tower")
    # conv2, conv4, conv5 see all 96, 384, 384 channels: + 5*5*48*256 + 3*3*192*384 + 3*3*192*256.
    assert one_tower.count_params() + FC8 == 62_378_344
    assert 62_378_344 - 60_965_224 == 5 * 5 * 48 * 256 + 3 * 3 * 192 * 384 + 3 * 3 * 192 * 256
    assert not one_tower.two_towers and ALEXNET_PRESETS["alexnet"]["config"]["two_towers"]
    assert all(one_tower.get_layer(f"conv{i}").groups == 1 for i in range(1, 6))


def test_layer_order_relu_then_lrn_then_overlapping_pooling():
    with shapes_only():
        backbone = AlexNetBackbone()
    names = [layer.name for layer in backbone.layers]
    assert names == [
        "images", "conv1", "norm1", "pool1", "conv2", "norm2", "pool2", "conv3", "conv4", "conv5", "pool5",
        "flatten", "fc6", "fc6_dropout", "fc7", "fc7_dropout",
    ]  # fmt: skip
    for i in range(1, 6):  # ReLU inside every convolution, so LRN follows the ReLU (Sec. 3.5)
        assert backbone.get_layer(f"conv{i}").activation is keras.activations.relu
    norm = backbone.get_layer("norm1")
    assert isinstance(norm, LocalResponseNormalization)
    assert (norm.size, norm.k, norm.alpha, norm.beta) == (5, 2.0, 1e-4, 0.75)
    for name in ("pool1", "pool2", "pool5"):
        assert backbone.get_layer(name).pool_size == (3, 3) and backbone.get_layer(name).strides == (2, 2)
    assert [backbone.get_layer(f"fc{i}_dropout").rate for i in (6, 7)] == [0.5, 0.5]
    # The ablations: no LRN, non-overlapping 2x2 pooling.
    with shapes_only():
        ablated = AlexNetBackbone(response_normalization=False, pool_size=2)
    assert not any(isinstance(layer, LocalResponseNormalization) for layer in ablated.layers)
    assert ablated.get_layer("pool5").output.shape[1:] == (6, 6, 256)  # 55 -> 27 -> 13 -> 6 either way


def test_include_fc_false_ends_with_the_pooled_conv5_map():
    with shapes_only():
        features = AlexNetBackbone(include_fc=False)
        any_size = AlexNetBackbone(image_shape=(None, None, 3), include_fc=False)
    assert features.output_shape == (None, 6, 6, 256)
    assert features.count_params() == 60_965_224 - FC8 - (9216 * 4096 + 4096) - (4096 * 4096 + 4096)
    assert any_size.output_shape == (None, None, None, 256)


def test_the_papers_initialisation():
    keras.utils.set_random_seed(0)
    backbone = AlexNetBackbone(**TINY)
    biases = {
        layer.name: keras.ops.convert_to_numpy(layer.bias) for layer in backbone.layers if hasattr(layer, "bias")
    }
    for name in ("conv2", "conv4", "conv5", "fc6", "fc7"):
        np.testing.assert_array_equal(biases[name], 1.0)
    for name in ("conv1", "conv3"):
        np.testing.assert_array_equal(biases[name], 0.0)
    kernel = keras.ops.convert_to_numpy(backbone.get_layer("conv1").kernel)  # 2904 draws of N(0, 0.01^2)
    assert abs(kernel.mean()) < 1e-3 and kernel.std() == pytest.approx(0.01, rel=0.06)
    conv4, conv5 = (keras.ops.convert_to_numpy(backbone.get_layer(n).kernel) for n in ("conv4", "conv5"))
    assert conv4.shape == conv5.shape and not np.allclose(conv4, conv5)  # independent draws


def test_he_normal_scales_each_layer_to_its_fan_in_and_saves(tmp_path):
    # The narrow nets' alternative (Sec. 5's fixed 0.01 leaves a quarter-width net at chance): std sqrt(2 / fan_in),
    # the paper's biases kept.
    keras.utils.set_random_seed(0)
    wide = {**TINY, "filters": (64, 64, 64, 64, 64)}
    backbone = AlexNetBackbone(**wide, kernel_initializer="he_normal")
    for name, fan_in in (("conv1", 11 * 11 * 3), ("conv3", 3 * 3 * 64), ("conv4", 3 * 3 * 32)):  # conv4: two towers
        kernel = keras.ops.convert_to_numpy(backbone.get_layer(name).kernel)
        assert kernel.std() == pytest.approx(np.sqrt(2 / fan_in), rel=0.1), name
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(backbone.get_layer("conv4").bias), 1.0)
    clone = AlexNetBackbone.from_config(backbone.get_config())
    assert isinstance(clone.get_layer("fc6").kernel_initializer, keras.initializers.HeNormal)
    x = np.random.default_rng(0).normal(size=(2, 67, 67, 3)).astype("float32")
    run_backbone_test(AlexNetBackbone, {**TINY, "kernel_initializer": "he_normal"}, x, (2, 16), tmp_path)


def test_bad_arguments_name_the_value_and_rule():
    with pytest.raises(ValueError, match="image height 32 is too small.*at least 67 pixels"):
        AlexNetBackbone(image_shape=(32, 32, 3))
    with pytest.raises(ValueError, match="image height 32 is too small.*at least 67 pixels"):
        AlexNetBackbone(image_shape=(32, 32, 3), include_fc=False)  # the convolutions need it too
    with pytest.raises(ValueError, match="image width 60 is too small.*at least 67"):
        AlexNetBackbone(image_shape=(227, 60, 3))
    with pytest.raises(ValueError, match="2x2 max-poolings .* at least 39"):
        AlexNetBackbone(image_shape=(38, 38, 3), pool_size=2)
    with pytest.raises(ValueError, match="include_fc=True needs a known height and width"):
        AlexNetBackbone(image_shape=(None, None, 3))
    with pytest.raises(ValueError, match=r"image_shape must be \(height, width, channels\)"):
        AlexNetBackbone(image_shape=(227, 227))
    with pytest.raises(ValueError, match="filters must be even; got filters=.*95"):
        AlexNetBackbone(filters=(95, 256, 384, 384, 256))
    with pytest.raises(ValueError, match="filters must be 5 positive ints"):
        AlexNetBackbone(filters=(96, 256, 384))
    with pytest.raises(ValueError, match="fc_units must be a non-empty list of positive ints"):
        AlexNetBackbone(fc_units=(4096, 0))
    with pytest.raises(ValueError, match=r"pool_size .* int >= 2; got 1"):
        AlexNetBackbone(pool_size=1)
    with pytest.raises(ValueError, match=r"dropout must be a number in \[0, 1\); got 1.5"):
        AlexNetBackbone(dropout=1.5)
    with pytest.raises(ValueError, match="kernel_initializer must be None .* got 'he'"):
        AlexNetBackbone(kernel_initializer="he")
    with pytest.raises(ValueError, match="Unknown AlexNetBackbone preset 'alexnet_v2'"):
        AlexNetBackbone.from_preset("alexnet_v2")


def test_tiny_from_preset_config_save_and_fit(tmp_path):
    keras.utils.set_random_seed(1)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 67, 67, 3)).astype("float32")
    y = rng.integers(0, 3, size=(8,))
    # Config round trip, output shape, .keras outputs and a step of fit.
    backbone = run_backbone_test(AlexNetBackbone, {**TINY, "dropout": 0.25}, x[:2], (2, 16), tmp_path,
                                 preset="alexnet")
    assert backbone.two_towers and backbone.get_layer("conv2").groups == 2
    assert backbone.get_layer("conv1").output.shape[1:] == (15, 15, 8)
    assert backbone.output_shape == (None, 16) and backbone.dropout == 0.25
    clone = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(backbone))
    assert clone.filters == TINY["filters"] and clone.image_shape == (67, 67, 3)

    images = keras.Input(TINY["image_shape"])
    classifier = keras.Model(images, keras.layers.Dense(3, name="fc8")(backbone(images)))
    classifier.compile(
        optimizer=keras.optimizers.SGD(0.01, momentum=0.9),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    check_fit(classifier, x, y, batch_size=4, epochs=1)
    (tmp_path / "classifier").mkdir()
    check_saved_model(classifier, x[:2], tmp_path / "classifier")

    features = AlexNetBackbone.from_preset("alexnet", **TINY, include_fc=False)
    assert features(x[:2]).shape == (2, 1, 1, 8)  # 67 -> conv1 15 -> 7 -> 3 -> 1
