"""`paperzoo train mae`: the recipe runs on digits out of the box and writes its outputs."""

import numpy as np
import pytest
from PIL import Image

import keras

from keras_paperzoo.recipes import mae as recipe
from keras_paperzoo.recipes.common import RecipeError
from tests.recipes.recipe_checks import check_encoder_exported, digits_run_args, keep_fewer_images, read_metrics


def _args(tmp_path, **overrides):
    return digits_run_args(tmp_path, dict(recipe="mae", epochs=1, steps_per_epoch=2, batch_size=32), overrides)


@pytest.mark.needs_tensorflow
@pytest.mark.one_leg("torch")
def test_mae_recipe_trains_on_digits_and_writes_metrics_model_encoder_and_pictures(tmp_path, monkeypatch, capsys):
    fewer_digits = keep_fewer_images(monkeypatch, train=256, test=64)  # the evaluation passes over every image
    metrics = recipe.run(_args(tmp_path))
    saved = read_metrics(tmp_path)
    assert saved["preset"] == "mae_tiny" and saved["image_shape"] == [32, 32, 1]
    assert saved["patch_size"] == [4, 4] and saved["mask_ratio"] == 0.75  # an 8 x 8 grid
    assert saved["steps_per_epoch"] == 2 and saved["epochs"] == 1 and saved["train_images"] == 256
    assert np.isfinite(saved["loss"]) and np.isfinite(saved["test_reconstruction_loss"])
    # Standardised inputs (the paper's): the training digits' mean and std are recorded for inference.
    train_digits = fewer_digits("digits", split="train", image_size=32)[0]
    assert saved["input_mean"] == pytest.approx([float(train_digits.mean())], rel=1e-4)
    assert saved["input_std"] == pytest.approx([float(train_digits.std())], rel=1e-4)
    assert saved["knn_accuracy"] is None or 0.0 <= saved["knn_accuracy"] <= 1.0
    assert metrics["encoder_parameters"] < metrics["parameters"]
    encoder = keras.saving.load_model(tmp_path / "encoder.keras")
    assert encoder.count_params() == saved["encoder_parameters"]
    assert encoder(np.zeros((2, 32, 32, 1), "float32")).shape == (2, 128)
    picture = np.asarray(Image.open(tmp_path / "reconstruction.png"))
    assert picture.shape == (8 * 32 * 2, 4 * 32 * 2)  # 8 test digits x 4 columns, scale 2, grey
    assert (tmp_path / "model.keras").is_file() and not (tmp_path / "checkpoint").exists()

    # `paperzoo export` of the trainer exports what is deployed: the encoder, unmasked.
    check_encoder_exported(tmp_path / "model.keras", "litert", capsys)


def test_unknown_preset_is_one_clear_error(tmp_path):
    with pytest.raises(RecipeError, match="--preset 'vit_b16' is not an MAE preset; known: mae_tiny"):
        recipe.run(_args(tmp_path, preset="vit_b16"))
