"""`paperzoo train swav` on the embedded digits, smoke-sized (its kill-and-resume test is in
test_kill_and_resume.py, LEG "swav")."""

import json

import numpy as np
import pytest

import keras

from keras_paperzoo.cli import main
from keras_paperzoo.recipes import swav as swav_recipe
from keras_paperzoo.recipes.common import RecipeError
from tests.recipes.recipe_checks import ssl_run_args


@pytest.mark.one_leg("torch")
def test_recipe_trains_evaluates_and_saves_the_encoder(tmp_path):
    metrics = swav_recipe.run(ssl_run_args(tmp_path, preset="swav_tiny", steps_per_epoch=2, image_size=16))
    saved = json.loads((tmp_path / "metrics.json").read_text())
    for name in ("loss", "loss_over_ln_k", "prediction_entropy", "knn_acc", "knn_acc_at_init",
                 "linear_probe_accuracy", "linear_probe_accuracy_at_init"):
        assert np.isfinite(saved[name]), name
    assert 0.0 < saved["prediction_entropy"] <= 1.0
    assert (saved["num_prototypes"], saved["crop_counts"], saved["epsilon"]) == (8, [2, 2], 0.05)
    assert saved["steps_per_epoch"] == 2 and metrics["backend"] == keras.backend.backend()

    model = keras.saving.load_model(tmp_path / "model.keras", safe_mode=True)
    assert type(model).__name__ == "SwAV" and model.num_prototypes == 8
    sizes = [tuple(model.augmentation.view_augmentations[i].image_size) for i in model.augmentation.view_pipeline]
    assert sizes == [(16, 16), (16, 16), (7, 7), (7, 7)]  # the digits' 16 pixels and SwAV's 224 : 96
    assert int(keras.ops.convert_to_numpy(model.prototypes.frozen_steps)) == 2  # frozen for the first epoch
    encoder = keras.saving.load_model(tmp_path / "encoder.keras", safe_mode=True)
    assert tuple(encoder.input_shape) == (None, 16, 16, 3)  # the full-size crops' size: exportable
    images = np.random.default_rng(0).normal(size=(4, 16, 16, 3)).astype("float32")
    np.testing.assert_allclose(encoder.predict(images, verbose=0), model.encoder.predict(images, verbose=0),
                               atol=1e-5)


def test_preset_and_batch_errors(tmp_path, capsys):
    with pytest.raises(ValueError, match="'byol_tiny' is not one of the SwAV presets; known: swav_cifar_resnet18"):
        swav_recipe.run(ssl_run_args(tmp_path / "a", preset="byol_tiny"))
    with pytest.raises(RecipeError, match="64 prototypes are more than a batch of 16 and its queue of 0 can assign: "
                                          "use --batch-size 64 or more"):
        swav_recipe.run(ssl_run_args(tmp_path / "b", preset="swav_resnet20_cifar"))
    assert main(["train", "swav", "--preset", "resnet20_cifar", "--output-dir", str(tmp_path / "c")]) == 2
    assert "'resnet20_cifar' is not one of the SwAV presets" in capsys.readouterr().err
