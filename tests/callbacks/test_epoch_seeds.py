"""EpochSeeds: SeedGenerator states set from (seed, epoch) at each epoch's start."""

import numpy as np
import pytest

import keras

from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds, seed_generator_states


def _states(model):
    return [np.asarray(keras.ops.convert_to_numpy(v)).copy() for v in seed_generator_states(model)]


def test_states_depend_on_seed_and_epoch_only():
    inputs = keras.Input((4,))
    outputs = keras.layers.Dropout(0.5, seed=1)(keras.layers.GaussianNoise(0.1, seed=2)(inputs))
    model = keras.Model(inputs, outputs)
    assert len(seed_generator_states(model)) == 2
    callback = EpochSeeds(3)
    callback.set_model(model)
    callback.on_epoch_begin(1)
    first = _states(model)
    model(np.ones((2, 4), "float32"), training=True)  # draws advance the states ...
    assert any(not np.array_equal(a, b) for a, b in zip(first, _states(model)))
    callback.on_epoch_begin(1)  # ... and the same (seed, epoch) sets them back
    for a, b in zip(first, _states(model)):
        np.testing.assert_array_equal(a, b)
    callback.on_epoch_begin(2)
    assert all(not np.array_equal(a, b) for a, b in zip(first, _states(model)))  # another epoch
    assert not np.array_equal(first[0], first[1])  # each generator its own stream


def test_bad_seed_names_the_value():
    with pytest.raises(ValueError, match="int seed >= 0; got -1"):
        EpochSeeds(-1)
    with pytest.raises(ValueError, match="int seed >= 0; got None"):
        EpochSeeds(None)
