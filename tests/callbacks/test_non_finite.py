"""Non-finite weights behind a finite loss (issue 35, item 1): stopped at the epoch end, never checkpointed, never
saved as the final model.

On JAX, resnet-cifar at lr 1e3 ended with loss 1552 and 130 of 156 weight arrays NaN or infinite. Here a batch-norm
layer's moving mean is set to infinity during training: in training mode the layer normalises by the batch's own
statistics, so the loss stays finite while a weight is not, as in that run.
"""

import argparse
import json

import numpy as np
import pytest

import keras

from keras_paperzoo.callbacks.non_finite import (
    NonFiniteWeightsError,
    StopOnNonFinite,
    check_finite_weights,
    non_finite_weights,
)
from keras_paperzoo.callbacks.run_checkpoint import RunCheckpoint
from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
from keras_paperzoo.recipes import common
from keras_paperzoo.recipes.common import RecipeError


def _model():
    inputs = keras.Input((6,), name="x")
    hidden = keras.layers.BatchNormalization(name="norm")(keras.layers.Dense(4, name="dense")(inputs))
    model = keras.Model(inputs, keras.layers.Dense(1, name="out")(hidden))
    model.compile(optimizer="sgd", loss="mse")
    return model


class _PoisonAfter(keras.callbacks.Callback):
    """From epoch `epoch` (0-based) on, the batch norm's moving mean is infinite after every batch; the loss is not."""

    def __init__(self, epoch):
        super().__init__()
        self.at, self.epoch = epoch, 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self.epoch >= self.at:
            self.model.get_layer("norm").moving_mean.assign(np.full((4,), np.inf, "float32"))


def _batches():
    rng = np.random.default_rng(0)
    return EpochShuffledBatches(rng.normal(size=(16, 6)).astype("float32"), rng.normal(size=(16, 1)).astype("float32"),
                                batch_size=4, seed=0)


def test_non_finite_weights_names_the_arrays_and_the_first():
    model = _model()
    assert non_finite_weights(model) == []
    check_finite_weights(model)  # all finite: nothing raised
    model.get_layer("norm").moving_mean.assign(np.full((4,), np.inf, "float32"))
    model.get_layer("out").kernel.assign(np.full((4, 1), np.nan, "float32"))
    assert non_finite_weights(model) == ["norm/moving_mean", "out/kernel"]
    with pytest.raises(NonFiniteWeightsError, match=r"^the model was not saved: 2 of 8 weight arrays are NaN or "
                                                    r"infinite \(the first: norm/moving_mean\)$"):
        check_finite_weights(model)


def test_a_finite_loss_over_non_finite_weights_stops_fit_and_keeps_the_last_good_checkpoint(tmp_path):
    model, guard, checkpoint = _model(), StopOnNonFinite(), RunCheckpoint(tmp_path / "checkpoint")
    batches = _batches()
    history = model.fit(batches, epochs=4, callbacks=[batches.epoch_callback(), _PoisonAfter(1), guard, checkpoint],
                        shuffle=False, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))  # the loss never showed it
    assert len(history.history["loss"]) == 2  # stopped at the end of epoch 2
    assert guard.message() == ("after epoch 2, 1 of 8 weight arrays are NaN or infinite (the first: "
                               "norm/moving_mean)")
    state = json.loads((tmp_path / "checkpoint" / "state.json").read_text())
    assert [entry["epoch"] for entry in state["states"]] == [1]  # epoch 2's weights were not written over it
    assert sorted(p.name for p in (tmp_path / "checkpoint").glob("*.h5")) == ["epoch-000001.weights.h5"]


def test_a_run_with_non_finite_weights_exits_with_one_line_and_writes_no_model(tmp_path):
    args = argparse.Namespace(dataset="toy", epochs=3, batch_size=4, seed=0, resume=False, verbose=0,
                              output_dir=str(tmp_path / "run"))
    run = common.start_run(args, "toy")
    model = _model()
    with pytest.raises(RecipeError, match=r"^training diverged: after epoch 1, 1 of 8 weight arrays are NaN or "
                                          r"infinite \(the first: norm/moving_mean\); nothing was saved"):
        run.fit(model, _batches(), epochs=3, callbacks=[_PoisonAfter(0)], verbose=0)
    assert not run.checkpoint_dir.exists()
    with pytest.raises(RecipeError, match=r"^training diverged: model.keras was not saved: 1 of 8 weight arrays"):
        run.save_model(model, "model.keras")  # a recipe that saved anyway
    assert sorted(p.name for p in run.output_dir.iterdir() if p.suffix == ".keras") == []
