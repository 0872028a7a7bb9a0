"""`paperzoo train cmc` on the embedded digits, smoke-sized: files, metrics, the encoder of both views.

(Its SavedModel and LiteRT exports are tests/export/test_export_recipes.py's; its exact resume after SIGKILL,
banks and Zs included, is tests/recipes/test_kill_and_resume.py's.) The CLI run trains, evaluates and saves
as on every backend, so it runs on the PyTorch leg unless $PAPERZOO_TEST_ALL_RECIPES is set.
"""

import numpy as np
import pytest

import keras

from keras_paperzoo.cli import main
from keras_paperzoo.recipes import cmc as cmc_recipe
from tests.recipes.recipe_checks import (check_batch_larger_than_data_refused, check_finite, check_saved_encoder,
                                         read_metrics, smoke_arguments)
from tests.recipes.recipe_checks import ssl_run_args


@pytest.mark.one_leg("torch")
def test_cli_trains_evaluates_and_saves_the_encoder_of_both_views(tmp_path):
    assert main(["train", "cmc", *smoke_arguments("cmc_tiny"), "--output-dir", str(tmp_path)]) == 0
    saved = read_metrics(tmp_path)
    check_finite(saved, ("loss", "l_loss", "ab_loss", "contrastive_accuracy", "knn_acc", "knn_acc_at_init",
                         "linear_probe_accuracy", "linear_probe_accuracy_at_init"))
    assert saved["loss"] == pytest.approx(saved["l_loss"] + saved["ab_loss"], rel=1e-4)
    # One bank row per training image; cmc_tiny's 32 negatives (fewer than half the 1500 digits).
    assert (saved["num_data"], saved["num_negatives"], saved["loss_type"]) == (1500, 32, "nce")
    assert (saved["temperature"], saved["feature_dim"], saved["image_shape"]) == (0.1, 32, [8, 8, 3])
    assert not (tmp_path / "checkpoint").exists()
    assert len(saved["notes"]) == 1 and "the training images are grey (R = G = B)" in saved["notes"][0]

    model = keras.saving.load_model(tmp_path / "model.keras", safe_mode=True)
    assert type(model).__name__ == "CMC" and model.l_bank.bank.shape == (1500, 32)
    assert float(keras.ops.convert_to_numpy(model.l_normalizer.z)) > 0  # Z estimated and saved
    encoder, _ = check_saved_encoder(tmp_path, model)  # on normalised RGB
    assert encoder.output_shape == (None, 16)  # [8 L features | 8 ab features]


def test_grey_images_get_a_note_and_colour_images_none():
    grey = np.repeat(np.random.default_rng(0).random((10, 8, 8, 1)), 3, axis=-1)  # R = G = B
    assert len(cmc_recipe.grey_images_note(grey)) == 1
    colour = grey.copy()
    colour[3, 2, 2, 0] += 0.01  # one pixel of one image with a tint is colour enough
    assert cmc_recipe.grey_images_note(colour) == []


def test_negatives_are_cut_to_half_the_images_and_errors_are_one_line(tmp_path, capsys):
    assert cmc_recipe.negatives_for(4096, 1500) == 750 and cmc_recipe.negatives_for(32, 1500) == 32
    assert cmc_recipe.negatives_for(4096, 64) == 32 and cmc_recipe.negatives_for(4096, 1) == 1
    with pytest.raises(ValueError, match="'moco_tiny' is not one of the CMC presets; known: cmc_cifar_resnet18"):
        cmc_recipe.run(ssl_run_args(tmp_path / "a", preset="moco_tiny"))
    check_batch_larger_than_data_refused("cmc", "cmc_tiny", tmp_path / "b", capsys)
