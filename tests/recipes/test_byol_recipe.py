"""`paperzoo train byol` on the embedded digits, smoke-sized: files, metrics, the online encoder."""

import pytest

import keras

from keras_paperzoo.cli import main
from keras_paperzoo.recipes import byol as byol_recipe
from tests.recipes.recipe_checks import (check_finite, check_saved_encoder, check_seeds_from_seed_and_epoch,
                                         read_metrics)
from tests.recipes.recipe_checks import SeedStates, ssl_run_args


@pytest.mark.one_leg("torch")
def test_recipe_trains_evaluates_and_saves_the_online_encoder(tmp_path):
    seeds = SeedStates()
    metrics = byol_recipe.run(ssl_run_args(tmp_path, preset="byol_tiny", steps_per_epoch=2), extra_callbacks=[seeds])
    # The two views drawn from (seed, epoch) so that --resume repeats them (EpochSeeds): each of BYOL's two
    # view pipelines has crop, flip, jitter, grayscale and solarisation generators (no blur below 96 pixels).
    assert len(seeds.states) >= 2
    check_seeds_from_seed_and_epoch(seeds.states)
    saved = read_metrics(tmp_path)
    check_finite(saved, ("loss", "output_std", "knn_acc", "knn_acc_at_init", "linear_probe_accuracy",
                         "linear_probe_accuracy_at_init"))
    assert 0.0 < saved["output_std"] <= 1.0
    assert (saved["tau_base"], saved["momentum_schedule"], saved["prediction_dims"]) == (0.99, "cosine", [32, 16])
    assert saved["steps_per_epoch"] == 2 and metrics["backend"] == keras.backend.backend()
    assert not (tmp_path / "checkpoint").exists()

    model = keras.saving.load_model(tmp_path / "model.keras", safe_mode=True)
    assert type(model).__name__ == "BYOL" and model.tau_base == 0.99
    check_saved_encoder(tmp_path, model)  # the online encoder


def test_preset_errors_name_the_known_presets(tmp_path, capsys):
    with pytest.raises(ValueError, match="'simclr_tiny' is not one of the BYOL presets; known: byol_cifar_resnet18"):
        byol_recipe.run(ssl_run_args(tmp_path / "a", preset="simclr_tiny"))
    assert main(["train", "byol", "--preset", "resnet20_cifar", "--output-dir", str(tmp_path / "b")]) == 2
    assert "'resnet20_cifar' is not one of the BYOL presets" in capsys.readouterr().err
