"""`paperzoo train densecl` on the embedded digits, smoke-sized (its kill-and-resume test is in
test_kill_and_resume.py, LEG "densecl")."""

import pytest

import keras

from keras_paperzoo.recipes import densecl as densecl_recipe
from keras_paperzoo.recipes.common import RecipeError
from tests.recipes.recipe_checks import check_encoder_exported, check_finite, read_metrics
from tests.recipes.recipe_checks import ssl_run_args


@pytest.mark.needs_tensorflow
@pytest.mark.one_leg("torch")
def test_recipe_trains_evaluates_saves_and_exports_the_encoder(tmp_path, capsys):
    densecl_recipe.run(ssl_run_args(tmp_path, preset="densecl_tiny"))
    saved = read_metrics(tmp_path)
    check_finite(saved, ("loss", "global_loss", "dense_loss", "dense_accuracy", "knn_acc", "linear_probe_accuracy"))
    assert saved["loss"] == pytest.approx(0.5 * saved["global_loss"] + 0.5 * saved["dense_loss"], rel=1e-4)
    assert saved["queue_size"] == 256 and saved["dense_weight"] == 0.5 and saved["shuffle_bn_splits"] == 2
    loaded = keras.saving.load_model(tmp_path / "model.keras", safe_mode=True)
    assert int(keras.ops.convert_to_numpy(loaded.dense_queue.pointer)) == 3 * 16
    check_encoder_exported(tmp_path / "model.keras", "saved_model", capsys)


def test_preset_errors(tmp_path):
    with pytest.raises(RecipeError, match="'moco_tiny' is not one of the DenseCL presets; known: densecl_resnet50"):
        densecl_recipe.run(ssl_run_args(tmp_path, preset="moco_tiny"))
