"""`paperzoo train beit`: both stages from one command on digits, and their outputs."""

import argparse
import json

import numpy as np
import pytest
from PIL import Image

import keras

from keras_paperzoo.recipes import beit as recipe
from keras_paperzoo.recipes.common import RecipeError


def _args(tmp_path, **overrides):
    values = dict(recipe="beit", dataset="digits", epochs=2, steps_per_epoch=2, batch_size=16, image_size=None,
                  preset=None, output_dir=str(tmp_path), backend=None, seed=0, resume=False, verbose=0)
    values.update(overrides)
    return argparse.Namespace(**values)


@pytest.mark.one_leg("torch")  # the recipe's code is backend-free; BEiT's and the tokenizer's tests run on every leg
def test_beit_recipe_trains_the_tokenizer_then_mim_and_writes_both(tmp_path, monkeypatch):
    import keras_paperzoo.data as data

    load = data.load_dataset

    def fewer_digits(name, split="train", **kwargs):  # the kNN passes over every image: keep it short
        x, y = load(name, split=split, **kwargs)
        n = 128 if split == "train" else 48
        return x[:n], y[:n]

    monkeypatch.setattr(data, "load_dataset", fewer_digits)
    metrics = recipe.run(_args(tmp_path))
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert saved["preset"] == "beit_tiny_digits" and saved["tokenizer_preset"] == "beit_tokenizer_digits"
    assert saved["image_shape"] == [32, 32, 1] and saved["grid_size"] == [8, 8]
    assert saved["num_masking_patches"] == 24  # round(75 / 196 x 64)
    assert saved["epochs"] == 2 and saved["steps_per_epoch"] == 2 and saved["vocabulary_size"] == 64
    for key in ("loss", "mim_accuracy", "tokenizer_loss", "tokenizer_perplexity", "test_loss", "test_mim_accuracy",
                "tokenizer_test_reconstruction_loss"):
        assert np.isfinite(saved[key]), key
    assert 1.0 <= saved["tokenizer_test_perplexity"] <= 64.0
    assert saved["knn_accuracy"] is None or 0.0 <= saved["knn_accuracy"] <= 1.0
    tokenizer = keras.saving.load_model(tmp_path / "tokenizer.keras")
    assert tokenizer.count_params() == metrics["tokenizer_parameters"]
    backbone = keras.saving.load_model(tmp_path / "backbone.keras")
    assert backbone.count_params() == metrics["backbone_parameters"]
    assert backbone(np.zeros((2, 32, 32, 1), "float32")).shape == (2, 64)
    beit = keras.saving.load_model(tmp_path / "model.keras")
    # The tokenizer inside the saved BEiT is the one trained in stage 1, frozen.
    images = load("digits", split="test", image_size=32)[0][:4]
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(beit.tokenizer.tokenize(images)),
                                  keras.ops.convert_to_numpy(tokenizer.tokenize(images)))
    picture = np.asarray(Image.open(tmp_path / "tokenizer_reconstructions.png"))
    assert picture.ndim >= 2 and picture.shape[0] > 32
    assert not (tmp_path / "checkpoint").exists()


def test_unknown_preset_is_one_clear_error(tmp_path):
    with pytest.raises(RecipeError, match="--preset 'mae_tiny' is not a BEiT preset; known: beit_base_patch16_224"):
        recipe.run(_args(tmp_path, preset="mae_tiny"))
