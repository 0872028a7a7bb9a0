"""The checks every public layer and model of keras-paperzoo passes.

Each paper's tests call these with a tiny configuration:

    check_config_roundtrip(layer_or_model)
    check_saved_model(model, inputs, tmp_path)
    check_fit(model, x, y, epochs=1)

and the exact-resume tests interrupt a `fit` with `InterruptAfterFirstEpoch`, then resume it
with `keras.callbacks.BackupAndRestore`.
"""

import json

import numpy as np

import keras


def check_config_roundtrip(obj):
    """`from_config(get_config())` rebuilds an object with the same config (JSON-safe)."""
    config = json.loads(json.dumps(keras.saving.serialize_keras_object(obj)))
    clone = keras.saving.deserialize_keras_object(json.loads(json.dumps(config)))
    assert type(clone) is type(obj)
    assert json.loads(json.dumps(keras.saving.serialize_keras_object(clone))) == config
    return clone


def check_saved_model(model, inputs, tmp_path, outputs_of=None, atol=1e-6):
    """`.keras` save and load (safe mode on) give the same outputs, weights and optimizer state.

    Args:
        model: a built model.
        inputs: what to feed `outputs_of`.
        outputs_of: callable (model, inputs) -> array; default `model(inputs)`.
    """
    outputs_of = outputs_of or (lambda m, x: m(x, training=False))
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    assert type(loaded) is type(model)
    before = keras.ops.convert_to_numpy(outputs_of(model, inputs))
    after = keras.ops.convert_to_numpy(outputs_of(loaded, inputs))
    np.testing.assert_allclose(after, before, atol=atol, rtol=0)
    assert len(loaded.weights) == len(model.weights)
    for a, b in zip(model.weights, loaded.weights):
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b))
    if getattr(model, "optimizer", None) is not None and model.optimizer.built:
        assert loaded.optimizer is not None and loaded.optimizer.built
        assert len(loaded.optimizer.variables) == len(model.optimizer.variables)
        for a, b in zip(model.optimizer.variables, loaded.optimizer.variables):
            np.testing.assert_array_equal(keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b))
    return loaded


def check_fit(model, x, y=None, epochs=1, **fit_kwargs):
    """A short `fit` runs and every logged value is finite; returns the history."""
    fit_kwargs.setdefault("verbose", 0)
    history = model.fit(x, y, epochs=epochs, **fit_kwargs)
    assert history.history, "fit logged nothing"
    for name, values in history.history.items():
        assert np.all(np.isfinite(values)), f"{name} is not finite: {values}"
    return history


class InterruptAfterFirstEpoch(keras.callbacks.Callback):
    """Raises RuntimeError("interrupted") at the end of epoch 0: a run killed there, for exact-resume tests."""

    def on_epoch_end(self, epoch, logs=None):
        if epoch == 0:
            raise RuntimeError("interrupted")


def check_exact_resume(build, x, y, tmp_path, epochs=2, batch_size=2, atol=1e-6):
    """`fit` killed after epoch 0 and resumed with BackupAndRestore ends on the uninterrupted run's weights.

    `build()` returns a compiled model; it is called after `keras.utils.set_random_seed(0)`
    for each run, so all runs start from the same weights. The random draws in the step
    (dropout, masks, augmentations) come from seed generators whose states the backup does
    not hold (`save_weights` skips them): `EpochSeeds` sets them from (seed, epoch) at each
    epoch's start, as the recipes do, so a resumed epoch draws what the straight run drew.
    """
    from keras_paperzoo.callbacks import EpochSeeds

    def run(name, interrupt=False):
        keras.utils.set_random_seed(0)
        model = build()
        callbacks = [keras.callbacks.BackupAndRestore(str(tmp_path / name)), EpochSeeds(0)]
        callbacks += [InterruptAfterFirstEpoch()] if interrupt else []
        model.fit(x, y, batch_size=batch_size, epochs=epochs, shuffle=False, verbose=0, callbacks=callbacks)
        return [np.asarray(keras.ops.convert_to_numpy(w)) for w in model.weights]

    straight = run("straight")
    try:
        run("killed", interrupt=True)
    except RuntimeError as error:
        assert "interrupted" in str(error), error
    else:
        raise AssertionError("the interrupted run was not interrupted")
    resumed = run("killed")
    assert len(straight) == len(resumed)
    for a, b in zip(straight, resumed):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=atol)
