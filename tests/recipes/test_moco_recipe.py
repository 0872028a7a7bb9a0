"""`paperzoo train moco` on the embedded digits, smoke-sized."""

import numpy as np
import pytest

import keras

from keras_paperzoo.recipes import moco as moco_recipe
from keras_paperzoo.recipes.common import RecipeError
from tests.recipes.recipe_checks import (SSL_METRICS, SeedStates, check_encoder_exported, check_finite,
                                         check_seeds_from_seed_and_epoch, read_metrics, ssl_run_args)


@pytest.mark.one_leg("tensorflow")
def test_recipe_trains_evaluates_saves_and_exports_the_encoder(tmp_path, capsys):
    seeds = SeedStates()
    metrics = moco_recipe.run(ssl_run_args(tmp_path), extra_callbacks=[seeds])
    # Views and key permutations drawn from (seed, epoch), so that --resume repeats them (EpochSeeds):
    # the key permutation's generator and the five of the v2 augmentation.
    assert len(seeds.states) == 6
    check_seeds_from_seed_and_epoch(seeds.states)
    saved = read_metrics(tmp_path)
    check_finite(saved, SSL_METRICS)
    assert 0.0 <= saved["knn_acc"] <= 1.0 and 0.0 <= saved["linear_probe_accuracy"] <= 1.0
    assert saved["queue_size"] == 256 and saved["shuffle_bn_splits"] == 2 and saved["version"] == 2
    assert metrics["backend"] == keras.backend.backend()
    loaded = keras.saving.load_model(tmp_path / "model.keras", safe_mode=True)
    assert int(keras.ops.convert_to_numpy(loaded.queue_pointer)) == 3 * 16
    assert not (tmp_path / "checkpoint").exists()
    check_encoder_exported(tmp_path / "model.keras", "saved_model", capsys)


def test_queue_size_and_preset_errors(tmp_path):
    assert moco_recipe.queue_size_for(4096, 128, 1500) == 640  # a multiple of the batch, <= half the data
    assert moco_recipe.queue_size_for(4096, 128, 100) == 128  # at least one batch
    assert moco_recipe.queue_size_for(256, 16, 1500) == 256
    # Batch-norm groups: 8 (the paper's GPUs) when each keeps at least 8 images.
    assert [moco_recipe.shuffle_bn_splits_for(b) for b in (256, 128, 64, 48, 16, 12, 7)] == [8, 8, 8, 4, 2, 1, 1]
    with pytest.raises(RecipeError, match="not one of the MoCo presets"):
        moco_recipe.run(ssl_run_args(tmp_path, preset="resnet20_cifar"))
