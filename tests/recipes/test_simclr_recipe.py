"""`paperzoo train simclr` on the embedded digits, smoke-sized: files, metrics, the encoder's export."""

import pytest

import keras

from keras_paperzoo.cli import main
from keras_paperzoo.recipes import simclr as simclr_recipe
from tests.recipes.recipe_checks import (SSL_METRICS, check_batch_larger_than_data_refused, check_encoder_exported,
                                         check_finite, check_saved_encoder, read_metrics, smoke_arguments)
from tests.recipes.recipe_checks import ssl_run_args


@pytest.mark.needs_tensorflow
@pytest.mark.one_leg("torch")
def test_cli_trains_evaluates_saves_and_exports_the_encoder(tmp_path, capsys):
    assert main(["train", "simclr", *smoke_arguments("simclr_tiny"), "--output-dir", str(tmp_path)]) == 0
    saved = read_metrics(tmp_path)
    check_finite(saved, SSL_METRICS)
    assert 0.0 <= saved["knn_acc"] <= 1.0 and 0.0 <= saved["linear_probe_accuracy"] <= 1.0
    assert (saved["version"], saved["temperature"], saved["projection_dims"]) == (1, 0.5, [16, 32])
    assert (saved["steps_per_epoch"], saved["batch_size"], saved["image_shape"]) == (2, 16, [8, 8, 3])
    assert saved["backend"] == keras.backend.backend() and len(saved["input_mean"]) == 3
    assert saved["probe_epochs"] == 2
    assert not (tmp_path / "checkpoint").exists()

    model = keras.saving.load_model(tmp_path / "model.keras", safe_mode=True)
    assert type(model).__name__ == "SimCLR" and model.temperature == 0.5
    check_saved_encoder(tmp_path, model)  # h of the trained backbone
    check_encoder_exported(tmp_path / "model.keras", "saved_model", capsys)  # the encoder h, as for MoCo


def test_preset_and_batch_errors_are_one_line_before_training(tmp_path, capsys):
    with pytest.raises(ValueError, match="'byol_tiny' is not one of the SimCLR presets; known: simclr_cifar_resnet18"):
        simclr_recipe.run(ssl_run_args(tmp_path / "a", preset="byol_tiny"))
    check_batch_larger_than_data_refused("simclr", "simclr_tiny", tmp_path / "b", capsys)
