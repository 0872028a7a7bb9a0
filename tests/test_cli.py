"""The `paperzoo` command: listing, training, resuming, errors."""

import argparse
import json
import subprocess
import sys

import numpy as np
import pytest

import keras

from keras_paperzoo.cli import main
from keras_paperzoo.recipes import RECIPES
from keras_paperzoo.recipes import gan as gan_recipe


def _args(tmp_path, **overrides):
    values = dict(
        dataset="digits", epochs=3, steps_per_epoch=2, batch_size=50, image_size=None,
        output_dir=str(tmp_path), backend=None, seed=5, resume=False, parzen_samples=200, verbose=0,
    )
    values.update(overrides)
    return argparse.Namespace(**values)


class _Interrupt(Exception):
    pass


class _InterruptAfterEpoch(keras.callbacks.Callback):
    def __init__(self, epoch):
        super().__init__()
        self.epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        if epoch == self.epoch:
            raise _Interrupt()


def _weights(path):
    model = keras.saving.load_model(path)
    return [keras.ops.convert_to_numpy(w) for w in model.weights]


def test_train_gan_writes_metrics_model_and_pictures(tmp_path):
    code = main(["train", "gan", "--epochs", "2", "--steps-per-epoch", "2", "--batch-size", "50",
                 "--output-dir", str(tmp_path), "--parzen-samples", "200", "--verbose", "0"])
    assert code == 0
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    for name in ("d_loss", "g_loss", "d_real", "d_fake", "parzen_log_likelihood", "parzen_standard_error"):
        assert isinstance(metrics[name], float) and np.isfinite(metrics[name]), name
    assert metrics["dataset"] == "digits" and metrics["image_shape"] == [28, 28, 1]
    assert metrics["backend"] == keras.backend.backend()
    assert (tmp_path / "model.keras").is_file()
    assert (tmp_path / "samples_epoch_002.png").is_file() and (tmp_path / "interpolation.png").is_file()
    assert not (tmp_path / "checkpoint").exists()  # removed after a finished run
    loaded = keras.saving.load_model(tmp_path / "model.keras", safe_mode=True)
    assert loaded.generator.output_shape == (None, 28, 28, 1)


def test_resumed_run_ends_with_the_weights_of_an_uninterrupted_run(tmp_path):
    straight, broken = tmp_path / "straight", tmp_path / "broken"
    gan_recipe.run(_args(straight))
    with pytest.raises(_Interrupt):
        gan_recipe.run(_args(broken), extra_callbacks=[_InterruptAfterEpoch(1)])
    assert (broken / "checkpoint").is_dir() and not (broken / "model.keras").exists()
    with pytest.raises(ValueError, match="--resume"):
        gan_recipe.run(_args(broken))  # refuses to silently restart
    gan_recipe.run(_args(broken, resume=True))
    for a, b in zip(_weights(straight / "model.keras"), _weights(broken / "model.keras")):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)  # float reassociation only
    m1 = json.loads((straight / "metrics.json").read_text())
    m2 = json.loads((broken / "metrics.json").read_text())
    assert m1["d_loss"] == pytest.approx(m2["d_loss"], rel=1e-5)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "vae"], "unknown recipe 'vae'; known: " + ", ".join(sorted(RECIPES))),
        (["train", "gan", "--epochs", "-3"], "-3 must be at least 1"),
        (["train", "gan", "--epochs", "many"], "'many' is not a whole number"),
        (["train", "gan", "--dataset", "/no/such/file.npz"], "/no/such/file.npz"),
        (["train", "gan", "--backend", "mxnet"], "invalid choice: 'mxnet'"),
        (["export", "/no/model.keras", "--format", "litert"], "model file '/no/model.keras' does not exist"),
        (["export", "x.keras", "--format", "onnx"], "invalid choice: 'onnx'"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_bad_requests_get_one_line_and_exit_2(argv, message, capsys, tmp_path):
    if argv[:2] == ["train", "gan"]:
        argv = argv + ["--output-dir", str(tmp_path / "run")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    assert err.startswith("paperzoo: error: ") and message in err


def test_resume_without_a_checkpoint_is_an_error(capsys, tmp_path):
    assert main(["train", "gan", "--resume", "--output-dir", str(tmp_path)]) == 2
    assert "no interrupted run to resume" in capsys.readouterr().err


def test_console_script_lists_recipes():
    out = subprocess.run([sys.executable, "-m", "keras_paperzoo", "list"], capture_output=True, text=True, check=True).stdout
    assert out.startswith("gan") and "Goodfellow et al. 2014" in out


@pytest.fixture(scope="module")
def trained_gan(tmp_path_factory):
    out = tmp_path_factory.mktemp("gan_run")
    assert main(["train", "gan", "--epochs", "1", "--steps-per-epoch", "1", "--batch-size", "50",
                 "--output-dir", str(out), "--parzen-samples", "50", "--verbose", "0"]) == 0
    return out / "model.keras"


@pytest.mark.needs_tensorflow
@pytest.mark.parametrize("fmt, suffix", [("saved_model", "_saved_model"), ("litert", ".tflite")])
def test_export_writes_the_generator_and_checks_it(trained_gan, fmt, suffix, capsys):
    assert main(["export", str(trained_gan), "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert "model.keras:generator" in out and "largest |exported - keras|" in out
    diff = float(out.rsplit("=", 1)[1])
    assert diff <= 1e-4
    assert trained_gan.with_name("model" + suffix).exists()


def _train_flags():
    """{argparse name: action} of `paperzoo train`'s flags."""
    from keras_paperzoo.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {a.dest: a for a in sub.choices["train"]._actions if a.option_strings and a.dest != "help"}


@pytest.mark.backend_free("jax")
def test_each_recipe_refuses_every_flag_it_does_not_read(capsys, tmp_path):
    from keras_paperzoo.recipes import COMMON_FLAGS

    flags = _train_flags()
    assert set(COMMON_FLAGS) <= set(flags) and all(set(r.flags) <= set(flags) for r in RECIPES.values())
    refused = 0
    for recipe in RECIPES.values():
        for name, action in flags.items():
            if name in COMMON_FLAGS or name in recipe.flags:
                continue
            value = [] if action.nargs == 0 else [str(action.choices[0]) if action.choices else "1"]
            argv = ["train", recipe.name, action.option_strings[0], *value, "--output-dir", str(tmp_path / "run")]
            assert main(argv) == 2, argv
            err = capsys.readouterr().err.strip()
            takers = ", ".join(r.name for r in RECIPES.values() if name in r.flags)
            assert err == (f"paperzoo: error: {action.option_strings[0]} is not a flag of the {recipe.name} recipe; "
                           f"it is read by {takers}."), err
            refused += 1
    assert refused >= 150 and not (tmp_path / "run").exists()


def _recipe_sources(recipe):
    """The text of a recipe's module and of the recipes/ modules it hands `args` to (not common.py)."""
    import importlib.util
    import pathlib
    import re

    source = pathlib.Path(importlib.util.find_spec(recipe.module).origin).read_text()
    for helper in re.findall(r"from keras_paperzoo\.recipes\.(\w+) import", source):
        if helper != "common":
            source += pathlib.Path(importlib.util.find_spec(f"keras_paperzoo.recipes.{helper}").origin).read_text()
    return source


@pytest.mark.backend_free("jax")
def test_each_flag_a_recipe_declares_is_read_by_it():
    import re

    for recipe in RECIPES.values():
        source = _recipe_sources(recipe)
        assert re.search(r"common\.start_run\(args\b", source), recipe.name  # --output-dir, --resume, --seed, ...
        for name in recipe.flags + ("dataset", "epochs", "steps_per_epoch", "batch_size", "preset", "verbose"):
            read = f"args.{name}" in source or f'getattr(args, "{name}"' in source
            if name in ("task", "task_data"):
                read = "requested_task(args" in source
            assert read, f"{recipe.name} declares --{name} but never reads it"
