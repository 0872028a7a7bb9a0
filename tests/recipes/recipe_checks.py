"""What the recipes' smoke tests share: their arguments, a shorter dataset, and the checks of what a run wrote.

    digits_run_args(tmp_path, values, overrides)      # the Namespace `paperzoo train` gives run()
    ssl_run_args(tmp_path, **overrides)                # the same for a self-supervised recipe (moco_tiny)
    SeedStates()                                       # a callback: the SeedGenerator states at each epoch
    keep_fewer_images(monkeypatch, train, test)        # load_dataset keeps the first images
    smoke_arguments(preset)                            # a self-supervised recipe's one-epoch CLI run
    read_metrics(folder); check_finite(saved, names)
    check_seeds_from_seed_and_epoch(states)            # EpochSeeds' states at epoch 0
    check_saved_encoder(folder, model)                 # encoder.keras computes the trainer's h
    check_encoder_exported(model_path, format, capsys) # `paperzoo export` deploys the encoder
    check_batch_larger_than_data_refused(name, preset, output_dir, capsys)
"""

import argparse
import json

import numpy as np

import keras

# What the self-supervised recipes log and evaluate: the loss, the pretext accuracy, kNN and linear probes.
SSL_METRICS = ("loss", "contrastive_accuracy", "knn_acc", "knn_acc_at_init", "linear_probe_accuracy",
               "linear_probe_accuracy_at_init")


def digits_run_args(tmp_path, values, overrides):
    """The Namespace an image recipe's run() gets: digits, the recipe's default preset and image size, seed 0,
    output in `tmp_path`, then the test's `values` and `overrides`."""
    return argparse.Namespace(**{
        "dataset": "digits", "image_size": None, "preset": None, "output_dir": str(tmp_path), "backend": None,
        "seed": 0, "resume": False, "verbose": 0, **values, **overrides,
    })


def ssl_run_args(tmp_path, **overrides):
    """The Namespace a self-supervised recipe's run() gets: digits at 8 x 8, `moco_tiny`, one epoch of three
    steps of 16, two probe epochs; `overrides` replace any of them."""
    values = dict(
        dataset="digits", epochs=1, steps_per_epoch=3, batch_size=16, image_size=8, preset="moco_tiny",
        output_dir=str(tmp_path), backend=None, seed=0, resume=False, verbose=0, probe_epochs=2,
    )
    values.update(overrides)
    return argparse.Namespace(**values)


class SeedStates(keras.callbacks.Callback):
    """The model's SeedGenerator states when an epoch starts (after the recipe's callbacks)."""

    def on_epoch_begin(self, epoch, logs=None):
        from keras_paperzoo.callbacks.epoch_seeds import seed_generator_states

        self.states = [np.asarray(keras.ops.convert_to_numpy(v)) for v in seed_generator_states(self.model)]


def keep_fewer_images(monkeypatch, train, test):
    """`keras_paperzoo.data.load_dataset` keeps the first `train` images of the training split and the first
    `test` of the others (an evaluation passes over every image: keep it short); returns the patched loader."""
    import keras_paperzoo.data as data

    load = data.load_dataset

    def fewer(name, split="train", **kwargs):
        x, y = load(name, split=split, **kwargs)
        n = train if split == "train" else test
        return x[:n], y[:n]

    monkeypatch.setattr(data, "load_dataset", fewer)
    return fewer


def smoke_arguments(preset):
    """`paperzoo train` arguments for a one-epoch, two-step run of `preset` on 8 x 8 digits, two probe epochs."""
    return ["--dataset", "digits", "--image-size", "8", "--preset", preset, "--epochs", "1", "--steps-per-epoch", "2",
            "--batch-size", "16", "--probe-epochs", "2", "--verbose", "0"]


def read_metrics(folder):
    """The run's metrics.json."""
    return json.loads((folder / "metrics.json").read_text())


def check_finite(saved, names):
    """Each of `names` in the metrics is a finite number."""
    for name in names:
        assert np.isfinite(saved[name]), name


def check_seeds_from_seed_and_epoch(states, seed=0, epoch=0):
    """Each SeedGenerator state is the one EpochSeeds draws from (seed, epoch, its index), so --resume repeats it."""
    for index, state in enumerate(states):
        np.testing.assert_array_equal(state, np.random.default_rng([seed, epoch, index]).integers(0, 2**31, size=2))


def check_saved_encoder(folder, model):
    """encoder.keras (safe mode) computes `model.encoder` on 4 random 8 x 8 images; returns (encoder, images)."""
    encoder = keras.saving.load_model(folder / "encoder.keras", safe_mode=True)
    images = np.random.default_rng(0).normal(size=(4, 8, 8, 3)).astype("float32")
    np.testing.assert_allclose(encoder.predict(images, verbose=0), model.encoder.predict(images, verbose=0),
                               atol=1e-5)
    return encoder, images


def check_encoder_exported(model_path, format, capsys):
    """`paperzoo export MODEL --format FORMAT` exports the trainer's encoder, its outputs within 1e-4 of Keras's."""
    from keras_paperzoo.cli import main

    capsys.readouterr()
    assert main(["export", str(model_path), "--format", format]) == 0
    out = capsys.readouterr().out
    assert "model.keras:encoder" in out and float(out.rsplit("=", 1)[1]) <= 1e-4


def check_batch_larger_than_data_refused(name, preset, output_dir, capsys):
    """`paperzoo train NAME --batch-size 5000` on the 1500 digits exits with 2 and one line, before training."""
    from keras_paperzoo.cli import main

    assert main(["train", name, "--preset", preset, "--batch-size", "5000", "--output-dir", str(output_dir)]) == 2
    assert "--batch-size 5000 is larger than the 1500 training images" in capsys.readouterr().err
