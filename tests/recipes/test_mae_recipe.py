"""`paperzoo train mae`: the recipe runs on digits out of the box and writes its outputs."""

import argparse
import json

import numpy as np
import pytest
from PIL import Image

import keras

from keras_paperzoo.recipes import mae as recipe
from keras_paperzoo.recipes.common import RecipeError


def _args(tmp_path, **overrides):
    values = dict(recipe="mae", dataset="digits", epochs=1, steps_per_epoch=2, batch_size=32, image_size=None,
                  preset=None, output_dir=str(tmp_path), backend=None, seed=0, resume=False, verbose=0)
    values.update(overrides)
    return argparse.Namespace(**values)


@pytest.mark.needs_tensorflow
@pytest.mark.one_leg("torch")
def test_mae_recipe_trains_on_digits_and_writes_metrics_model_encoder_and_pictures(tmp_path, monkeypatch, capsys):
    import keras_paperzoo.data as data

    load = data.load_dataset

    def fewer_digits(name, split="train", **kwargs):  # the evaluation passes over every image: keep it short
        x, y = load(name, split=split, **kwargs)
        n = 256 if split == "train" else 64
        return x[:n], y[:n]

    monkeypatch.setattr(data, "load_dataset", fewer_digits)
    metrics = recipe.run(_args(tmp_path))
    saved = json.loads((tmp_path / "metrics.json").read_text())
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
    from keras_paperzoo.cli import main

    capsys.readouterr()
    assert main(["export", str(tmp_path / "model.keras"), "--format", "litert"]) == 0
    out = capsys.readouterr().out
    assert "model.keras:encoder" in out and float(out.rsplit("=", 1)[1]) <= 1e-4


def test_unknown_preset_is_one_clear_error(tmp_path):
    with pytest.raises(RecipeError, match="--preset 'vit_b16' is not an MAE preset; known: mae_tiny"):
        recipe.run(_args(tmp_path, preset="vit_b16"))
