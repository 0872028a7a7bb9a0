"""`paperzoo train cpc` on the embedded digits, smoke-sized: files, metrics, the images at the preset's size."""

import json
import math

import numpy as np
import pytest

import keras

from keras_paperzoo.cli import main
from keras_paperzoo.recipes import cpc as cpc_recipe
from tests.recipes.recipe_checks import ssl_run_args

SMOKE = ["--dataset", "digits", "--preset", "cpc_tiny", "--epochs", "1", "--steps-per-epoch", "2",
         "--batch-size", "16", "--probe-epochs", "2", "--verbose", "0"]


@pytest.mark.one_leg("jax")
def test_cli_trains_evaluates_and_saves_the_pooled_patch_encoder(tmp_path):
    assert main(["train", "cpc", *SMOKE, "--output-dir", str(tmp_path)]) == 0
    saved = json.loads((tmp_path / "metrics.json").read_text())
    for name in ("loss", "mi_bound", "contrastive_accuracy", "knn_acc", "knn_acc_at_init", "linear_probe_accuracy",
                 "linear_probe_accuracy_at_init"):
        assert np.isfinite(saved[name]), name
    # mi_bound = log N - loss, N = 16 images x 49 patches (no online probe in the recipe).
    assert saved["mi_bound"] == pytest.approx(math.log(16 * 49) - saved["loss"], abs=1e-4)
    assert saved["image_shape"] == [16, 16, 3]  # cpc_tiny's size: digits resized to it
    assert (saved["grid_size"], saved["patch_size"], saved["patch_stride"]) == ([7, 7], [4, 4], [2, 2])
    assert saved["directions"] == ["down"] and saved["prediction_steps"] == [1, 2]
    assert saved["backend"] == keras.backend.backend() and not (tmp_path / "checkpoint").exists()
    model = keras.saving.load_model(tmp_path / "model.keras", safe_mode=True)
    encoder = keras.saving.load_model(tmp_path / "encoder.keras", safe_mode=True)
    images = np.random.default_rng(0).normal(size=(4, 16, 16, 3)).astype("float32")
    np.testing.assert_allclose(encoder.predict(images, verbose=0), model.encoder.predict(images, verbose=0),
                               atol=1e-5)  # the pooled patch encodings of the trained backbone
    assert encoder.output_shape == (None, 16)


def test_preset_size_and_batch_errors_are_one_line_before_training(tmp_path, capsys):
    with pytest.raises(ValueError, match="'cpc_audio' is not one of the CPC presets; known: cpc_tiny, cpc_v1_cifar"):
        cpc_recipe.run(ssl_run_args(tmp_path / "a", preset="cpc_audio"))  # a sequence preset takes no images
    assert main(["train", "cpc", "--preset", "cpc_tiny", "--image-size", "15", "--output-dir",
                 str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "image height 15 does not fit 4-pixel patches at stride 2" in err
    assert main(["train", "cpc", "--preset", "cpc_tiny", "--image-size", "6", "--output-dir",
                 str(tmp_path / "c")]) == 2
    assert "prediction_steps 2 needs at least 3 rows" in capsys.readouterr().err  # a 6-pixel image: 2 x 2
