"""`paperzoo train resnet-cifar | vit | alexnet | vgg` and `paperzoo export` of a classifier."""

import argparse
import json

import numpy as np
import pytest

import keras

from keras_paperzoo.cli import main
from keras_paperzoo.recipes import classifier

RUN = ["--epochs", "1", "--steps-per-epoch", "2", "--batch-size", "32", "--verbose", "0"]


def _args(tmp_path, **overrides):
    values = dict(recipe="resnet-cifar", dataset="digits", epochs=3, steps_per_epoch=1, batch_size=32,
                  image_size=None, preset="resnet20_cifar", output_dir=str(tmp_path), backend=None,
                  seed=3, resume=False, verbose=0)
    values.update(overrides)
    return argparse.Namespace(**values)


class _Interrupt(Exception):
    pass


class _InterruptAfterEpoch(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        if epoch == 1:
            raise _Interrupt()


@pytest.fixture(scope="module")
def resnet20_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("resnet20")
    assert main(["train", "resnet-cifar", "--output-dir", str(out), *RUN]) == 0
    return out


@pytest.mark.one_leg("torch")
def test_resnet_cifar_trains_on_digits_and_writes_metrics(resnet20_run):
    metrics = json.loads((resnet20_run / "metrics.json").read_text())
    assert metrics["preset"] == "resnet20_cifar"
    assert metrics["image_shape"] == [32, 32, 3]  # digits resized to CIFAR's size, grey -> RGB
    # He et al. 2016, Sec. 4.2: "0.27M" = 269,722 trainable + 1,376 BN moving statistics
    # (derived in tests/models/resnet/test_resnet_backbone.py).
    assert metrics["parameters"] == 271_098
    assert 0.0 <= metrics["test_accuracy"] <= 1.0 and np.isfinite(metrics["loss"])
    assert metrics["test_error_percent"] == pytest.approx(100 * (1 - metrics["test_accuracy"]))
    assert "8.75" in metrics["paper"]
    loaded = keras.saving.load_model(resnet20_run / "model.keras", safe_mode=True)
    assert loaded.output_shape == (None, 10)


@pytest.mark.needs_tensorflow
@pytest.mark.one_leg("torch")
@pytest.mark.parametrize("fmt, suffix", [("saved_model", "_saved_model"), ("litert", ".tflite")])
def test_classifier_exports_with_the_numeric_check(resnet20_run, fmt, suffix, capsys):
    model = resnet20_run / "model.keras"
    assert main(["export", str(model), "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert "largest |exported - keras|" in out
    assert float(out.rsplit("=", 1)[1]) <= 1e-4
    assert model.with_name("model" + suffix).exists()


@pytest.mark.one_leg("torch")
def test_resumed_classifier_run_ends_with_the_uninterrupted_weights(tmp_path):
    straight, broken = tmp_path / "straight", tmp_path / "broken"
    classifier.run(_args(straight))
    with pytest.raises(_Interrupt):
        classifier.run(_args(broken), extra_callbacks=[_InterruptAfterEpoch()])
    classifier.run(_args(broken, resume=True))
    a = keras.saving.load_model(straight / "model.keras")
    b = keras.saving.load_model(broken / "model.keras")
    for wa, wb in zip(a.weights, b.weights):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(wa), keras.ops.convert_to_numpy(wb),
                                   rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "recipe, image_shape, expected",
    [
        ("vit", (32, 32, 3), {"patch_size": 4}),     # an 8x8 grid of patches on CIFAR-size images
        ("vit", (224, 224, 3), {"patch_size": 16}),  # the preset's own patches at ImageNet size
        ("vgg", (224, 224, 3), {}),
        ("alexnet", (227, 227, 3), {}),
    ],
)
def test_each_recipe_builds_its_papers_backbone_for_the_image_size(recipe, image_shape, expected):
    backbone = classifier._backbone(recipe, None, image_shape)
    assert type(backbone).__name__ == classifier.RECIPE_DEFAULTS[recipe][0]
    assert tuple(backbone.input_shape[1:]) == image_shape
    for name, value in expected.items():
        assert backbone.get_config()[name] == value


def test_unknown_preset_is_one_clear_error(tmp_path, capsys):
    assert main(["train", "resnet-cifar", "--preset", "resnet20", "--output-dir", str(tmp_path), *RUN]) == 2
    err = capsys.readouterr().err
    assert "resnet-cifar: --preset 'resnet20' is not a preset of any model; nearest: resnet20_cifar," in err


def test_recipes_are_listed(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ("resnet-cifar", "vit", "alexnet", "vgg"):
        assert f"\n{name} " in "\n" + out


@pytest.mark.needs_tensorflow
def test_vit_classifier_exports_to_litert_with_the_numeric_check(tmp_path):
    from keras_paperzoo.export import export_model
    from keras_paperzoo.models import ImageClassifier, ViTBackbone

    backbone = ViTBackbone.from_preset("vit_ti16", image_shape=(32, 32, 3), patch_size=8, num_layers=2,
                                       hidden_dim=32, num_heads=2, mlp_dim=64)
    model = ImageClassifier(backbone, 10)
    model(np.zeros((1, 32, 32, 3), "float32"))
    result = export_model(model, tmp_path / "vit.tflite", format="litert")
    assert result.ok and result.max_abs_diff <= 1e-4
    assert (tmp_path / "vit.tflite").stat().st_size > 4 * model.count_params()  # float32 weights inside


def test_warmup_is_the_papers_for_resnet110_only_and_checked():
    from keras_paperzoo.recipes.common import RecipeError

    # He et al. Sec. 4.2: lr 0.01 for ~400 iterations for ResNet-110; the others start at 0.1.
    assert classifier.warmup_steps("resnet-cifar", "resnet110_cifar", None) == 400
    assert classifier.warmup_steps("resnet-cifar", "resnet56_cifar", None) == 0
    assert classifier.warmup_steps("resnet-cifar", None, None) == 0  # the default preset, resnet20_cifar
    assert classifier.warmup_steps("resnet-cifar", "resnet110_cifar", 0) == 0
    assert classifier.warmup_steps("vit", "vit_ti16", None) == 0
    # A run shorter than the paper's: the default is cut to a quarter of it (the first drop is at half).
    assert classifier.warmup_steps("resnet-cifar", "resnet110_cifar", None, total_steps=64_000) == 400
    assert classifier.warmup_steps("resnet-cifar", "resnet110_cifar", None, total_steps=120) == 30
    assert classifier.warmup_steps("resnet-cifar", "resnet110_cifar", 50, total_steps=120) == 50  # given: kept
    with pytest.raises(RecipeError, match="--warmup-steps -1: must be 0 or more"):
        classifier.warmup_steps("resnet-cifar", None, -1)
    with pytest.raises(RecipeError, match="--warmup-steps is for resnet-cifar"):
        classifier.warmup_steps("vit", None, 10)


def test_a_warmup_past_the_first_lr_drop_is_one_clear_error(tmp_path, capsys):
    # 2 updates in all: the first drop is at update 1, so 5 warm-up updates cannot fit.
    assert main(["train", "resnet-cifar", "--warmup-steps", "5", "--output-dir", str(tmp_path), *RUN]) == 2
    err = capsys.readouterr().err
    assert "--warmup-steps 5: warmup_steps should be an int between 0 and the first lr drop" in err
