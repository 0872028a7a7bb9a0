"""The CIFAR classifier ablations (AlexNet's LRN, VGG's configurations): the papers' centered raw RGB inputs against
NumPy (common.center_raw_rgb), AlexNet's --kernel-initializer, and the direction of VGG's claims."""

import numpy as np
import pytest

from keras_paperzoo.reproductions import alexnet_cifar, common, vgg_cifar

pytestmark = pytest.mark.backend_free("torch")


def _images(rng, n):
    return rng.uniform(0, 1, size=(n, 4, 4, 3)).astype("float32"), rng.integers(0, 10, size=(n,))


def test_centered_raw_rgb_is_0_to_255_less_the_training_mean_pixel():
    rng = np.random.default_rng(0)
    (x_train, y_train), (x_test, y_test) = _images(rng, 50), _images(rng, 20)
    (a, ya, b, yb), mean = common.center_raw_rgb((x_train, y_train, x_test, y_test))
    expected_mean = x_train.reshape(-1, 3).mean(axis=0)
    np.testing.assert_allclose(mean, expected_mean, rtol=1e-6)
    np.testing.assert_allclose(a, (x_train - expected_mean) * 255, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(b, (x_test - expected_mean) * 255, rtol=1e-5, atol=1e-4)  # the training mean
    assert np.abs(a.reshape(-1, 3).mean(axis=0)).max() < 1e-3 and 60 < a.std() < 90  # uniform: 255 / sqrt(12) = 74
    assert a.dtype == np.float32 and (ya is y_train) and (yb is y_test)
    standardized = common.standardize((x_train, y_train, x_test, y_test))[0][0]
    assert standardized.std() == pytest.approx(1.0, abs=1e-3)  # the other choice: unit scale


def test_inputs_must_be_known():
    with pytest.raises(common.UsageError, match="--inputs 'raw': expected one of standardized, raw-rgb"):
        common.load_cifar("digits", 10, 10, 0, inputs="raw")


def test_kernel_initializer_text():
    assert alexnet_cifar.kernel_initializer("paper") is None  # the backbone's N(0, 0.01^2)
    assert alexnet_cifar.kernel_initializer("0.02") == {"class_name": "RandomNormal",
                                                        "config": {"mean": 0.0, "stddev": 0.02}}
    assert alexnet_cifar.kernel_initializer("he_normal") == "he_normal"
    with pytest.raises(common.UsageError, match="--kernel-initializer '-0.1': a standard deviation must be > 0"):
        alexnet_cifar.kernel_initializer("-0.1")


def test_vgg_claims_hold_when_the_effect_shows():
    # "holds" and the difference share a direction (A's error minus the other's), as seeds.py averages it; the paper's
    # "LRN does not improve on A" is the LRN claim not holding.
    nets = {"A": {"test_error_percent": 44.0}, "A-LRN": {"test_error_percent": 41.0}, "B": {"test_error_percent": 44.5}}
    claims = vgg_cifar.claims(nets, {"test_images": 10000})
    lrn = claims["LRN improves on A (A-LRN below A; the paper: it does not)"]
    assert lrn["holds"] and lrn["difference_points"] == pytest.approx(3.0)
    depth = claims["depth helps (B below A)"]
    assert not depth["holds"] and depth["difference_points"] == pytest.approx(-0.5)
    se = 100 * np.sqrt(0.44 * 0.56 / 10000 + 0.41 * 0.59 / 10000)  # two binomial errors, independent test sets
    assert lrn["two_standard_errors_points"] == pytest.approx(2 * se, abs=0.02)


def test_alexnet_fixed_scale_is_lrn_with_alpha_0():
    # The "fixed scale" arm: LRN's division by (k + alpha * sum)^beta with alpha = 0, i.e. by 2^0.75 everywhere, at
    # LRN's two places; the "with LRN" arm keeps alpha = 1e-4 and is not linear on large activations.
    import keras

    assert alexnet_cifar.NETS == ("with LRN", "without LRN", "fixed scale")
    tiny = {"image_shape": (67, 67, 3), "filters": [8, 8, 8, 8, 8], "fc_units": [8, 8]}
    x = np.random.default_rng(0).normal(scale=300.0, size=(2, 67, 67, 3)).astype("float32")
    for net, linear in (("fixed scale", True), ("with LRN", False)):
        keras.utils.set_random_seed(0)
        model = alexnet_cifar.backbone(net, **tiny)
        relu = keras.Model(model.input, model.get_layer("conv1").output)(x)
        norm = keras.Model(model.input, model.get_layer("norm1").output)(x)
        relu, norm = keras.ops.convert_to_numpy(relu), keras.ops.convert_to_numpy(norm)
        assert np.abs(relu).max() > 100  # where alpha * sum is not small beside k = 2
        assert np.allclose(norm, relu / 2**0.75, rtol=1e-5, atol=1e-5) == linear, net
    without = alexnet_cifar.backbone("without LRN", **tiny)
    assert not [layer for layer in without.layers if "norm" in layer.name]
    nets = {"with LRN": {"test_error_percent": 60.0}, "fixed scale": {"test_error_percent": 66.0}}
    claim = alexnet_cifar.claims(nets, {"test_images": 10000})["LRN below its fixed scale (alpha = 0)"]
    assert claim["holds"] and claim["difference_points"] == pytest.approx(6.0)


def test_alexnet_refuses_an_unknown_initializer_before_loading_data():
    with pytest.raises(common.UsageError, match="--kernel-initializer 'he': not 'paper', a standard deviation"):
        alexnet_cifar.main(["--dataset", "no-such-dataset.npz", "--kernel-initializer", "he"])
