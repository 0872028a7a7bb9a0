"""`paperzoo train invaspread` on the embedded digits, smoke-sized: files, metrics, the saved networks.

(Its SavedModel and LiteRT exports are tests/export/test_export_recipes.py's; its exact resume after
SIGKILL is tests/recipes/test_kill_and_resume.py's.) The CLI run trains, evaluates and saves as on every
backend, so it runs on the TensorFlow leg (about 30 s there, 80 s on JAX under load) unless
$PAPERZOO_TEST_ALL_RECIPES is set.
"""

import numpy as np
import pytest

import keras

from keras_paperzoo.cli import main
from keras_paperzoo.recipes import invaspread as invaspread_recipe
from tests.recipes.recipe_checks import (SSL_METRICS, check_batch_larger_than_data_refused, check_finite,
                                         check_saved_encoder, read_metrics, smoke_arguments)
from tests.recipes.recipe_checks import ssl_run_args


@pytest.mark.one_leg("tensorflow")
def test_cli_trains_evaluates_and_saves_the_model_and_its_encoder(tmp_path):
    assert main(["train", "invaspread", *smoke_arguments("invaspread_tiny"), "--output-dir", str(tmp_path)]) == 0
    saved = read_metrics(tmp_path)
    check_finite(saved, SSL_METRICS)
    assert 0.0 <= saved["knn_acc"] <= 1.0 and 0.0 <= saved["linear_probe_accuracy"] <= 1.0
    assert (saved["temperature"], saved["embedding_dim"], saved["original_view"]) == (0.1, 32, False)
    assert (saved["steps_per_epoch"], saved["batch_size"], saved["image_shape"]) == (2, 16, [8, 8, 3])
    assert saved["backend"] == keras.backend.backend() and "83.6 %" in saved["paper"]
    assert not (tmp_path / "checkpoint").exists()

    model = keras.saving.load_model(tmp_path / "model.keras", safe_mode=True)
    assert type(model).__name__ == "InvaSpread" and model.temperature == 0.1
    # The recipe's per-channel statistics normalise each view, after the authors' transform.
    assert model.augmentation.mean == pytest.approx(saved["input_mean"]) and model.augmentation.crop_scale == (0.5, 1.0)
    _, images = check_saved_encoder(tmp_path, model)  # h of the trained backbone
    f = model.embedding_network.predict(images, verbose=0)  # the paper's evaluated embedding
    assert f.shape == (4, 32)
    np.testing.assert_allclose(np.linalg.norm(f, axis=1), 1.0, rtol=1e-5)


def test_preset_and_batch_errors_are_one_line_before_training(tmp_path, capsys):
    with pytest.raises(ValueError, match="'simclr_tiny' is not one of the InvaSpread presets; known: invaspread_cifar"):
        invaspread_recipe.run(ssl_run_args(tmp_path / "a", preset="simclr_tiny"))
    check_batch_larger_than_data_refused("invaspread", "invaspread_tiny", tmp_path / "b", capsys)
