"""`paperzoo train simclr` on the embedded digits, smoke-sized: files, metrics, the encoder's export."""

import json

import numpy as np
import pytest

import keras

from keras_paperzoo.cli import main
from keras_paperzoo.recipes import simclr as simclr_recipe
from tests.recipes.test_moco_recipe import _args

SMOKE = ["--dataset", "digits", "--image-size", "8", "--preset", "simclr_tiny", "--epochs", "1",
         "--steps-per-epoch", "2", "--batch-size", "16", "--probe-epochs", "2", "--verbose", "0"]


@pytest.mark.needs_tensorflow
@pytest.mark.one_leg("torch")
def test_cli_trains_evaluates_saves_and_exports_the_encoder(tmp_path, capsys):
    assert main(["train", "simclr", *SMOKE, "--output-dir", str(tmp_path)]) == 0
    saved = json.loads((tmp_path / "metrics.json").read_text())
    for name in ("loss", "contrastive_accuracy", "knn_acc", "knn_acc_at_init", "linear_probe_accuracy",
                 "linear_probe_accuracy_at_init"):
        assert np.isfinite(saved[name]), name
    assert 0.0 <= saved["knn_acc"] <= 1.0 and 0.0 <= saved["linear_probe_accuracy"] <= 1.0
    assert (saved["version"], saved["temperature"], saved["projection_dims"]) == (1, 0.5, [16, 32])
    assert (saved["steps_per_epoch"], saved["batch_size"], saved["image_shape"]) == (2, 16, [8, 8, 3])
    assert saved["backend"] == keras.backend.backend() and len(saved["input_mean"]) == 3
    assert saved["probe_epochs"] == 2
    assert not (tmp_path / "checkpoint").exists()

    model = keras.saving.load_model(tmp_path / "model.keras", safe_mode=True)
    assert type(model).__name__ == "SimCLR" and model.temperature == 0.5
    encoder = keras.saving.load_model(tmp_path / "encoder.keras", safe_mode=True)
    images = np.random.default_rng(0).normal(size=(4, 8, 8, 3)).astype("float32")
    np.testing.assert_allclose(encoder.predict(images, verbose=0), model.encoder.predict(images, verbose=0),
                               atol=1e-5)  # h of the trained backbone

    capsys.readouterr()  # `paperzoo export` deploys the encoder h, as for MoCo
    assert main(["export", str(tmp_path / "model.keras"), "--format", "saved_model"]) == 0
    out = capsys.readouterr().out
    assert "model.keras:encoder" in out and float(out.rsplit("=", 1)[1]) <= 1e-4


def test_preset_and_batch_errors_are_one_line_before_training(tmp_path, capsys):
    with pytest.raises(ValueError, match="'byol_tiny' is not one of the SimCLR presets; known: simclr_cifar_resnet18"):
        simclr_recipe.run(_args(tmp_path / "a", preset="byol_tiny"))
    assert main(["train", "simclr", "--preset", "simclr_tiny", "--batch-size", "5000",
                 "--output-dir", str(tmp_path / "b")]) == 2
    assert "--batch-size 5000 is larger than the 1500 training images" in capsys.readouterr().err
