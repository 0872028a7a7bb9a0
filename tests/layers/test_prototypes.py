"""`Prototypes`: unit-norm columns after every update, no movement (and no optimizer state) while frozen."""

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.layers import Prototypes


def _model(freeze_steps, k=6, d=4):
    keras.utils.set_random_seed(0)
    inputs = keras.Input((d,))
    features = keras.layers.Dense(d, name="features")(inputs)
    outputs = Prototypes(k, freeze_steps=freeze_steps, seed=0, name="prototypes")(features)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.SGD(0.5, momentum=0.9), loss="categorical_crossentropy")
    return model


def _data(k=6, d=4, n=16):
    rng = np.random.default_rng(0)
    return rng.standard_normal((n, d)).astype("float32"), np.eye(k)[rng.integers(0, k, n)].astype("float32")


def _momentum_of(model, variable):
    optimizer = model.optimizer
    return ops.convert_to_numpy(optimizer.momentums[optimizer._get_variable_index(variable)])


def test_columns_are_unit_norm_at_start_and_after_updates():
    model = _model(freeze_steps=0)
    kernel = model.get_layer("prototypes").kernel
    np.testing.assert_allclose(np.linalg.norm(ops.convert_to_numpy(kernel), axis=0), 1.0, rtol=1e-6)
    before = ops.convert_to_numpy(kernel).copy()
    x, y = _data()
    model.fit(x, y, batch_size=8, epochs=2, verbose=0)
    after = ops.convert_to_numpy(kernel)
    assert np.abs(after - before).max() > 1e-3  # trained
    np.testing.assert_allclose(np.linalg.norm(after, axis=0), 1.0, rtol=1e-5)


def test_frozen_prototypes_do_not_move_and_their_optimizer_state_stays_untouched():
    model = _model(freeze_steps=4)
    layer = model.get_layer("prototypes")
    before = ops.convert_to_numpy(layer.kernel).copy()
    dense_before = ops.convert_to_numpy(model.get_layer("features").kernel).copy()
    x, y = _data()
    model.fit(x, y, batch_size=8, epochs=2, verbose=0)  # 4 steps, all frozen
    assert int(ops.convert_to_numpy(layer.step)) == 4
    np.testing.assert_array_equal(ops.convert_to_numpy(layer.kernel), before)
    np.testing.assert_array_equal(_momentum_of(model, layer.kernel), 0.0)
    assert np.abs(ops.convert_to_numpy(model.get_layer("features").kernel) - dense_before).max() > 0
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)  # steps 5-6: thawed
    assert np.abs(ops.convert_to_numpy(layer.kernel) - before).max() > 0
    assert np.abs(_momentum_of(model, layer.kernel)).max() > 0


def test_scores_are_cosines_and_scores_do_not_count_steps():
    layer = Prototypes(5, seed=1)
    z = ops.convert_to_tensor(np.eye(3, dtype="float32"))
    out = ops.convert_to_numpy(layer(z))
    np.testing.assert_allclose(out, ops.convert_to_numpy(layer.kernel), rtol=1e-6)  # e_i . C = row i of C
    assert np.abs(out).max() <= 1.0 + 1e-6
    layer.scores(z)
    layer(z, training=False)
    assert int(ops.convert_to_numpy(layer.step)) == 0
    layer(z, training=True)
    assert int(ops.convert_to_numpy(layer.step)) == 1


def test_config_round_trip_and_keras_file(tmp_path):
    model = _model(freeze_steps=3)
    layer = model.get_layer("prototypes")
    layer.set_freeze_steps(7)
    clone = Prototypes.from_config(layer.get_config())
    assert (clone.num_prototypes, clone.freeze_steps, clone.seed) == (6, 7, 0)
    x, _ = _data()
    path = str(tmp_path / "prototypes.keras")
    model.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    np.testing.assert_allclose(ops.convert_to_numpy(loaded.predict(x, verbose=0)),
                               ops.convert_to_numpy(model.predict(x, verbose=0)), rtol=1e-6, atol=1e-6)
    assert int(ops.convert_to_numpy(loaded.get_layer("prototypes").frozen_steps)) == 7


@pytest.mark.parametrize("arguments, message", [
    ({"num_prototypes": 0}, "num_prototypes must be an int >= 1; got num_prototypes=0"),
    ({"num_prototypes": 4, "freeze_steps": -1}, "freeze_steps must be an int >= 0; got freeze_steps=-1"),
])
def test_bad_arguments(arguments, message):
    with pytest.raises(ValueError, match=message):
        Prototypes(**arguments)
