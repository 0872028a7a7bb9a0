"""`paperzoo train beit`: both stages from one command on digits, and their outputs."""

import numpy as np
import pytest
from PIL import Image

import keras

from keras_paperzoo.recipes import beit as recipe
from keras_paperzoo.recipes.common import RecipeError
from tests.recipes.recipe_checks import check_finite, digits_run_args, keep_fewer_images, read_metrics


def _args(tmp_path, **overrides):
    return digits_run_args(tmp_path, dict(recipe="beit", epochs=2, steps_per_epoch=2, batch_size=16), overrides)


@pytest.mark.one_leg("torch")  # the recipe's code is backend-free; BEiT's and the tokenizer's tests run on every leg
def test_beit_recipe_trains_the_tokenizer_then_mim_and_writes_both(tmp_path, monkeypatch):
    load = keep_fewer_images(monkeypatch, train=128, test=48)  # the kNN passes over every image
    metrics = recipe.run(_args(tmp_path))
    saved = read_metrics(tmp_path)
    assert saved["preset"] == "beit_tiny_digits" and saved["tokenizer_preset"] == "beit_tokenizer_digits"
    assert saved["image_shape"] == [32, 32, 1] and saved["grid_size"] == [8, 8]
    assert saved["num_masking_patches"] == 24  # round(75 / 196 x 64)
    assert saved["epochs"] == 2 and saved["steps_per_epoch"] == 2 and saved["vocabulary_size"] == 64
    check_finite(saved, ("loss", "mim_accuracy", "tokenizer_loss", "tokenizer_perplexity", "test_loss",
                         "test_mim_accuracy", "tokenizer_test_reconstruction_loss"))
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
