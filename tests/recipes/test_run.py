"""`recipes.common.Run` and its parts, in-process: argument checks on --resume, the output folder, exact resume
under `fit(shuffle=True)` and dropout, stopping on a non-finite loss, resumable streams, checkpoint errors.

The end-to-end SIGKILL tests of every recipe are in test_kill_and_resume.py.
"""

import argparse
import json

import numpy as np
import pytest

import keras

from keras_paperzoo.callbacks.non_finite import StopOnNonFinite
from keras_paperzoo.callbacks.run_checkpoint import CheckpointError, RunCheckpoint, atomic_write_text
from keras_paperzoo.data.epoch_batches import EpochShuffledBatches, StreamBatches
from keras_paperzoo.recipes import common
from keras_paperzoo.recipes.common import RecipeError


def _args(tmp_path, **overrides):
    values = dict(recipe="gan", dataset="digits", epochs=3, steps_per_epoch=2, batch_size=50, image_size=None,
                  preset=None, output_dir=str(tmp_path / "run"), backend=None, seed=5, resume=False, verbose=0)
    values.update(overrides)
    return argparse.Namespace(**values)


def _interrupted_run(tmp_path, **overrides):
    """A run folder as a killed `paperzoo train gan` leaves it: the arguments recorded, no epoch saved."""
    run = common.start_run(_args(tmp_path, **overrides), "gan")
    run._record_arguments()
    return run


def test_resume_keeps_the_runs_arguments_and_refuses_changed_ones_by_name(tmp_path):
    _interrupted_run(tmp_path)
    args = _args(tmp_path, resume=True, epochs=None, steps_per_epoch=None, batch_size=None, seed=None)
    common.start_run(args, "gan")
    assert (args.epochs, args.steps_per_epoch, args.batch_size, args.seed) == (3, 2, 50, 5)
    with pytest.raises(RecipeError, match=r"^--resume: --batch-size 20 differs from the run's: it was started with "
                                          r"--batch-size 50; leave --batch-size out"):
        common.start_run(_args(tmp_path, resume=True, batch_size=20), "gan")
    with pytest.raises(RecipeError, match=r"--seed 6 differs .* with --seed 5"):
        common.start_run(_args(tmp_path, resume=True, seed=6), "gan")
    with pytest.raises(RecipeError, match=r"--image-size 32 differs .* started without it"):
        common.start_run(_args(tmp_path, resume=True, image_size=32), "gan")
    with pytest.raises(RecipeError, match=r"holds a 'gan' run, not 'mae'"):
        common.start_run(_args(tmp_path, resume=True), "mae")


def test_resume_on_another_backend_is_refused(tmp_path):
    run = _interrupted_run(tmp_path)
    stored = json.loads((run.checkpoint_dir / "run.json").read_text())
    stored["arguments"]["backend"] = "elsewhere"
    (run.checkpoint_dir / "run.json").write_text(json.dumps(stored))
    with pytest.raises(RecipeError, match=r"trained on the elsewhere backend; resume it with --backend elsewhere"):
        common.start_run(_args(tmp_path, resume=True), "gan")


def test_output_folder_and_resume_states_are_one_line(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(RecipeError, match=r"--output-dir '.*afile' is a file, not a folder"):
        common.start_run(_args(tmp_path, output_dir=str(afile)), "gan")
    with pytest.raises(RecipeError, match=r"--output-dir '.*afile/run' cannot be created"):
        common.start_run(_args(tmp_path, output_dir=str(afile / "run")), "gan")
    with pytest.raises(RecipeError, match="no interrupted run to resume"):
        common.start_run(_args(tmp_path, resume=True), "gan")
    _interrupted_run(tmp_path)
    with pytest.raises(RecipeError, match="holds an interrupted run; pass --resume"):
        common.start_run(_args(tmp_path), "gan")
    (tmp_path / "run" / "checkpoint" / "run.json").write_text("{trunc")
    with pytest.raises(RecipeError, match=r"run.json' is unreadable \(JSONDecodeError\); delete"):
        common.start_run(_args(tmp_path, resume=True), "gan")


def _model():
    inputs = keras.Input((6,))
    hidden = keras.layers.Dropout(0.3, seed=None)(keras.layers.Dense(8, activation="relu")(inputs))
    model = keras.Model(inputs, keras.layers.Dense(1)(hidden))
    model.compile(keras.optimizers.Adam(0.01), "mse")
    return model


class _Interrupt(Exception):
    pass


class _InterruptAt(keras.callbacks.Callback):
    def __init__(self, epoch, batch):
        super().__init__()
        self.at, self.epoch = (epoch, batch), 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if (self.epoch, batch) == self.at:
            raise _Interrupt()


def _train(directory, interrupt=None):
    keras.utils.set_random_seed(3)  # what a fresh process does
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(40, 6)).astype("float32"), rng.normal(size=(40, 1)).astype("float32")
    batches = EpochShuffledBatches(x, y, batch_size=8, seed=1)
    model = _model()
    checkpoint = RunCheckpoint(directory)
    callbacks = [batches.epoch_callback(), *([interrupt] if interrupt else []), checkpoint]
    model.fit(batches, epochs=4, callbacks=callbacks, verbose=0)  # shuffle=True: Python's random reorders
    model._initial_epoch = None
    return model, checkpoint


def test_run_checkpoint_resumes_fit_shuffle_and_dropout_exactly(tmp_path):
    straight, checkpoint = _train(tmp_path / "a")
    with pytest.raises(_Interrupt):
        _train(tmp_path / "b", _InterruptAt(2, 1))
    resumed, resumed_checkpoint = _train(tmp_path / "b")
    assert resumed_checkpoint.restored_epoch == 2
    for a, b in zip(straight.variables + straight.optimizer.variables,
                    resumed.variables + resumed.optimizer.variables):
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b), err_msg=a.path)
    assert resumed_checkpoint.history == checkpoint.history and len(checkpoint.history["loss"]) == 4


def test_unreadable_checkpoint_state_is_one_line(tmp_path):
    _train(tmp_path / "a")
    atomic_write_text(tmp_path / "a" / "state.json", '{"format": 1, "states": [')
    with pytest.raises(CheckpointError, match=r"state.json' is unreadable .*; delete '.*' to start the run again"):
        _train(tmp_path / "a")


def test_a_non_finite_loss_stops_the_run_and_saves_nothing(tmp_path):
    guard = StopOnNonFinite()
    guard.set_model(_model())
    guard.on_epoch_begin(2)
    guard.on_train_batch_end(4, {"d_loss": 0.5, "g_loss": float("nan"), "d_real": float("nan")})
    assert guard.model.stop_training and guard.message() == "g_loss became nan at epoch 3, batch 5"

    run = common.start_run(_args(tmp_path, recipe="x"), "x")
    x = np.ones((16, 6), "float32")
    x[5, 2] = 3e38  # finite (inf data is refused by the batches), but its squared error overflows
    batches = EpochShuffledBatches(x, np.zeros((16, 1), "float32"), batch_size=4, seed=0)
    with pytest.raises(RecipeError, match=r"training diverged: loss became (nan|inf) at epoch 1, batch \d; nothing"):
        run.fit(_model(), batches, epochs=2, verbose=0)
    assert not run.checkpoint_dir.exists()


@pytest.mark.needs_tensorflow
def test_stream_batches_resume_at_any_epoch_where_the_stream_was():
    import tensorflow as tf

    def dataset():  # built anew for each run, as a recipe does (tf.data reshuffles per iterator of one object)
        return tf.data.Dataset.range(10).shuffle(10, seed=4, reshuffle_each_iteration=True).batch(2)

    straight = StreamBatches.from_dataset(dataset())
    epochs = []
    for epoch in range(3):
        straight.set_epoch(epoch)
        epochs.append([straight[i].tolist() for i in range(len(straight))])
    assert len(straight) == 5 and epochs[0] != epochs[1]
    resumed = StreamBatches.from_dataset(dataset())
    resumed[0]  # fit peeks at the first batch before the epoch is set
    resumed.set_epoch(2)
    assert [resumed[i].tolist() for i in range(5)] == epochs[2]
    assert resumed[3].tolist() == epochs[2][3]  # asked again (TF's adapter peeks): the recent batches are kept
    resumed.set_epoch(1)
    with pytest.raises(ValueError, match="in order; batch 0 of epoch 1 was asked after a later one"):
        resumed[0]
    with pytest.raises(ValueError, match="An infinite dataset needs steps_per_epoch"):
        StreamBatches.from_dataset(dataset().repeat())

