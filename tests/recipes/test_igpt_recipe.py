"""`paperzoo train igpt`: the recipe runs on digits out of the box and writes its outputs."""

import json

import numpy as np
import pytest
from PIL import Image

import keras

from keras_paperzoo.recipes import igpt as recipe
from keras_paperzoo.recipes.common import RecipeError
from tests.recipes.recipe_checks import digits_run_args, keep_fewer_images, read_metrics


def _args(tmp_path, **overrides):
    return digits_run_args(tmp_path, dict(recipe="igpt", epochs=2, steps_per_epoch=3, batch_size=16, objective=None),
                           overrides)


@pytest.fixture
def fewer_digits(monkeypatch):
    keep_fewer_images(monkeypatch, train=200, test=60)  # the probes pass over every image


@pytest.mark.one_leg("torch")  # the recipe's code is backend-free; IGPT's own tests run on every leg
def test_igpt_recipe_trains_probes_every_layer_and_writes_completions(tmp_path, fewer_digits):
    metrics = recipe.run(_args(tmp_path))
    saved = read_metrics(tmp_path)
    assert saved["objective"] == "autoregressive" and saved["preset"] == "igpt_mnist_tiny"
    assert saved["palette_size"] == 16 and saved["sequence_length"] == 64  # 8 x 8 digits, 16 grey levels
    assert saved["epochs"] == 2 and saved["steps_per_epoch"] == 3
    # The zero-initialised output layer predicts every colour equally at first: ln 16 nats per pixel.
    assert saved["test_loss_at_init"] == pytest.approx(np.log(16), abs=1e-4)
    assert saved["test_loss"] < saved["test_loss_at_init"]
    probes = saved["probe_accuracy_per_layer"]
    assert len(probes) == 5 and all(0.0 <= p <= 1.0 for p in probes)  # layers 0 .. 4
    assert saved["best_probe_layer"] == int(np.argmax(probes))
    assert metrics["parameters"] == keras.saving.load_model(tmp_path / "model.keras").count_params()
    palette = json.loads((tmp_path / "palette.json").read_text())
    assert np.asarray(palette["colors"]).shape == (16, 1)
    backbone = keras.saving.load_model(tmp_path / "backbone.keras")
    assert backbone.vocabulary_size == 17 and backbone.max_sequence_length == 64
    picture = np.asarray(Image.open(tmp_path / "completions.png"))
    assert picture.shape == (4 * (8 * 8 + 7), 4 * (4 * 8 + 3))  # 8 images x (original + 3 completions), gap 1, x4
    assert not (tmp_path / "checkpoint").exists()


@pytest.mark.one_leg("jax")
def test_igpt_recipe_bert_objective_has_no_completions(tmp_path, fewer_digits):
    saved = recipe.run(_args(tmp_path, objective="bert", epochs=1))
    assert saved["objective"] == "bert" and np.isfinite(saved["test_loss"])
    assert not (tmp_path / "completions.png").exists()
    assert keras.saving.load_model(tmp_path / "model.keras").objective == "bert"


def test_bad_arguments_are_one_clear_error(tmp_path):
    with pytest.raises(RecipeError, match="--preset 'mae_tiny' is not an iGPT preset; known: igpt_l"):
        recipe.run(_args(tmp_path / "a", preset="mae_tiny"))
    with pytest.raises(RecipeError, match="--objective 'mlm' is not an iGPT objective"):
        recipe.run(_args(tmp_path / "b", objective="mlm"))
