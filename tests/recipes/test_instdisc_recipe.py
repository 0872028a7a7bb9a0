"""`paperzoo train instdisc` on the embedded digits, smoke-sized: files, metrics, the paper's kNN, the encoder's export.

(LiteRT export: tests/export/test_export_recipes.py; exact resume after SIGKILL, bank, Z and data order
included: tests/recipes/test_kill_and_resume.py.) The CLI run trains, evaluates and saves as on every
backend, so it runs on the TensorFlow leg (whose export is in-process) unless $PAPERZOO_TEST_ALL_RECIPES
is set.
"""

import json

import numpy as np
import pytest

import keras

from keras_paperzoo.cli import main
from keras_paperzoo.recipes import instdisc as instdisc_recipe
from tests.recipes.recipe_checks import ssl_run_args

SMOKE = ["--dataset", "digits", "--image-size", "8", "--preset", "instdisc_tiny", "--epochs", "1",
         "--steps-per-epoch", "2", "--batch-size", "16", "--probe-epochs", "2", "--verbose", "0"]


@pytest.mark.one_leg("tensorflow")
def test_cli_trains_evaluates_saves_and_exports_the_encoder(tmp_path, capsys):
    assert main(["train", "instdisc", *SMOKE, "--output-dir", str(tmp_path)]) == 0
    saved = json.loads((tmp_path / "metrics.json").read_text())
    for name in ("loss", "nce_loss", "proximal_loss", "contrastive_accuracy", "memory_bank_knn_acc", "knn_acc",
                 "knn_acc_at_init", "linear_probe_accuracy", "linear_probe_accuracy_at_init"):
        assert np.isfinite(saved[name]), name
    assert 0.0 <= saved["memory_bank_knn_acc"] <= 1.0
    # One bank row per training image; instdisc_tiny's 32 noise samples (fewer than half the 1500 digits).
    assert (saved["num_data"], saved["num_negatives"], saved["temperature"]) == (1500, 32, 0.07)
    assert (saved["feature_dim"], saved["bank_momentum"], saved["proximal"]) == (32, 0.5, 0.0)
    assert saved["objective"] == "nce" and saved["nce_z"] > 0 and saved["image_shape"] == [8, 8, 3]
    assert not (tmp_path / "checkpoint").exists()

    model = keras.saving.load_model(tmp_path / "model.keras", safe_mode=True)
    assert type(model).__name__ == "InstDisc" and model.bank.shape == (1500, 32)
    assert float(keras.ops.convert_to_numpy(model.z)) == pytest.approx(saved["nce_z"])  # Z saved with the bank
    encoder = keras.saving.load_model(tmp_path / "encoder.keras", safe_mode=True)
    images = np.random.default_rng(0).normal(size=(4, 8, 8, 3)).astype("float32")  # normalised RGB
    np.testing.assert_allclose(encoder.predict(images, verbose=0), model.encoder.predict(images, verbose=0),
                               atol=1e-5)  # h of the trained backbone

    capsys.readouterr()  # `paperzoo export` deploys the encoder h
    assert main(["export", str(tmp_path / "model.keras"), "--format", "saved_model"]) == 0
    out = capsys.readouterr().out
    assert "model.keras:encoder" in out and float(out.rsplit("=", 1)[1]) <= 1e-4


def test_negatives_are_cut_to_half_the_images_and_errors_are_one_line(tmp_path, capsys):
    assert instdisc_recipe.negatives_for(4096, 1500) == 750 and instdisc_recipe.negatives_for(32, 1500) == 32
    assert instdisc_recipe.negatives_for(4096, 64) == 32 and instdisc_recipe.negatives_for(4096, 1) == 1
    assert instdisc_recipe.pretraining().indexed  # the batches carry each image's row
    default = instdisc_recipe.pretraining().presets[instdisc_recipe.DEFAULT_PRESET]["arguments"]
    assert default["loss"] == "softmax"  # NCE's fixed Z collapses on small data (the recipe's docstring)
    with pytest.raises(ValueError, match="'moco_tiny' is not one of the InstDisc presets; known: instdisc_cifar"):
        instdisc_recipe.run(ssl_run_args(tmp_path / "a", preset="moco_tiny"))
    assert main(["train", "instdisc", "--preset", "instdisc_tiny", "--batch-size", "5000",
                 "--output-dir", str(tmp_path / "b")]) == 2
    assert "--batch-size 5000 is larger than the 1500 training images" in capsys.readouterr().err
