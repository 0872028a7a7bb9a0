"""`paperzoo export` of every recipe's model (registry-driven): SavedModel and LiteRT, outputs checked against Keras.

Each recipe of `keras_paperzoo.recipes.RECIPES` trains one update on tiny data
(tests/recipes/tiny_runs.py) and its `model.keras` is exported with the real command,
which prints the largest |exported - Keras| difference and exits 1 above the
tolerance. A recipe added later is exported the day it is registered (an export a
recipe's own test already runs is listed in `EXPORTED_ELSEWHERE`). The translator
exports to a SavedModel that decodes (keras_paperzoo/export/translator.py); LiteRT is
refused for it in one line.

TensorFlow leg only: both artifacts are TensorFlow graphs, which the other backends
export through a TensorFlow child process (tests/export/test_export.py covers that
route); here it would cost a TensorFlow start-up per export.
"""

import pathlib

import pytest

import keras

from keras_paperzoo.cli import main
from keras_paperzoo.recipes import RECIPES
from tests.recipes.tiny_runs import TOO_SLOW_TO_EXPORT, recipe_arguments, skip_if_too_slow, tiny_data  # noqa: F401

pytestmark = pytest.mark.skipif(
    keras.backend.backend() != "tensorflow",
    reason="exports are TensorFlow graphs: the TensorFlow leg exports in-process",
)
SAVED_MODEL_ONLY = {"transformer"}  # a decoding loop (export/translator.py)
# Exports a recipe's own test already runs with the real command (not repeated here, to keep the suite short).
EXPORTED_ELSEWHERE = {
    ("gan", "saved_model"): "tests/test_cli.py", ("gan", "litert"): "tests/test_cli.py",
    ("resnet-cifar", "saved_model"): "tests/recipes/test_classifier_recipes.py",
    ("resnet-cifar", "litert"): "tests/recipes/test_classifier_recipes.py",
    ("vit", "litert"): "tests/recipes/test_classifier_recipes.py",
    ("mae", "litert"): "tests/recipes/test_mae_recipe.py",
    ("moco", "saved_model"): "tests/recipes/test_moco_recipe.py",
    ("simclr", "saved_model"): "tests/recipes/test_simclr_recipe.py",
    ("instdisc", "saved_model"): "tests/recipes/test_instdisc_recipe.py",
}
FORMATS = (("saved_model", "_saved_model"), ("litert", ".tflite"))
# Two blocks for a recipe whose default preset stacks more copies of one Transformer block: the export traces
# the same layer classes, and the same block-to-block wiring, with 2 as with 12. On TensorFlow each variable
# costs its own optimizer ops to trace (Keras's AdamW: ~0.3 s of CPU a variable under load, 150 of the 265 s
# of ViT-Ti's one update), so ViT-Ti's 12 blocks made the vit export 398 s. (class, keys to the preset's
# arguments, overrides)
SHALLOWER = {
    "vit": ("ViTBackbone", ("vit_ti16", "config"), {"num_layers": 2}),
    "gpt": ("GPTBackbone", ("gpt_char_tiny", "config"), {"num_layers": 2}),
    "mae": ("MAE", ("mae_tiny", "backbone", "overrides"), {"num_layers": 2}),  # the encoder; the decoder has 2
    "igpt": ("IGPT", ("igpt_mnist_tiny", "backbone", "overrides"), {"num_layers": 2}),
    "beit": ("BEiTBackbone", ("beit_tiny_digits", "config"), {"num_layers": 2}),
}


def _export(model, fmt, capsys):
    code = main(["export", str(model), "--format", fmt])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_every_recipe_model_exports_and_matches_keras(name, tiny_data, tmp_path, capsys, monkeypatch):
    skip_if_too_slow(name, TOO_SLOW_TO_EXPORT)
    if name in SHALLOWER:  # the preset table, for this test only (monkeypatch restores it)
        import keras_paperzoo.models as models

        class_name, keys, overrides = SHALLOWER[name]
        config = getattr(models, class_name).presets
        for key in keys:
            config = config[key]
        for key, value in overrides.items():
            monkeypatch.setitem(config, key, value)
    formats = [(fmt, suffix) for fmt, suffix in FORMATS if (name, fmt) not in EXPORTED_ELSEWHERE]
    if not formats:
        pytest.skip(f"exported to both formats by {EXPORTED_ELSEWHERE[name, 'litert']}")
    out = tmp_path / "run"
    argv = ["train", name, *recipe_arguments(name, tiny_data, epochs_and_steps=(1, 1)), "--output-dir", str(out),
            "--verbose", "0"]
    assert main(argv) == 0, capsys.readouterr().err
    model = out / "model.keras"
    for fmt, suffix in formats:
        code, stdout, stderr = _export(model, fmt, capsys)
        if fmt == "litert" and name in SAVED_MODEL_ONLY:
            assert code == 2 and stderr.count("\n") == 1 and "format='saved_model' only" in stderr, stderr
            continue
        assert code == 0, stderr
        difference = float(stdout.rsplit("=", 1)[1])
        assert difference <= 1e-4, stdout
        assert pathlib.Path(model.with_name("model" + suffix)).exists()
