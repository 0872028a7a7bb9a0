"""The multi-optimizer step: order, isolation and state on every backend."""

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.training import MultiOptimizerTrainer, OptimizerGroup


class TwoScalars(MultiOptimizerTrainer):
    """Two updates per step: a on (a - x)^2, then b on (b - a)^2 with the *new* a."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.a = self.add_weight(shape=(), initializer="zeros", name="a")
        self.b = self.add_weight(shape=(), initializer="zeros", name="b")
        self.noise_seed = keras.random.SeedGenerator(7)
        self.draws = self.add_weight(shape=(), initializer="zeros", trainable=False, name="draws")
        self.built = True

    def call(self, x):
        return x * self.a

    def optimizer_groups(self):
        return {"first": [self.a], "second": [self.b]}

    def multi_optimizer_step(self, data):
        x = ops.mean(data)
        loss_a, _ = self.apply_update("first", lambda: (ops.square(self.a - x), None))
        noise = keras.random.uniform((), seed=self.noise_seed)  # carried RNG state

        def second():
            self.draws.assign(self.draws + noise)  # a state write inside the loss
            return ops.square(self.b - self.a), None

        loss_b, _ = self.apply_update("second", second)
        return {"loss_a": loss_a, "loss_b": loss_b}


def _fit(model, steps):
    data = np.full((steps, 1), 1.0, "float32")
    return model.fit(data, batch_size=1, epochs=1, verbose=0, shuffle=False)


def test_updates_run_in_order_each_with_its_own_optimizer():
    model = TwoScalars()
    model.compile(optimizers={"first": keras.optimizers.SGD(0.1), "second": keras.optimizers.SGD(0.5)})
    _fit(model, steps=2)
    a, b = 0.0, 0.0
    for _ in range(2):
        a = a - 0.1 * 2 * (a - 1.0)  # first update
        b = b - 0.5 * 2 * (b - a)  # second update sees the new a
    assert float(model.a.numpy()) == pytest.approx(a, abs=1e-6)
    assert float(model.b.numpy()) == pytest.approx(b, abs=1e-6)
    assert int(model.optimizer.iterations.numpy()) == 2
    assert int(model.optimizer["first"].iterations.numpy()) == 2
    assert int(model.optimizer["second"].iterations.numpy()) == 2


def test_state_written_inside_a_loss_and_rng_are_carried():
    model = TwoScalars()
    model.compile(optimizers={"first": "sgd", "second": "sgd"})
    _fit(model, steps=3)
    draws = float(model.draws.numpy())
    # Three uniform draws were added up: carried (not lost, not repeated) across steps.
    assert 0.0 < draws < 3.0
    seed_state = ops.convert_to_numpy(model.noise_seed.state.value)
    assert not np.array_equal(seed_state, ops.convert_to_numpy(keras.random.SeedGenerator(7).state.value))


def test_optimizer_group_errors_and_serialization():
    with pytest.raises(ValueError, match="groups"):
        TwoScalars().compile(optimizers={"first": "sgd"})
    with pytest.raises(ValueError, match="dict"):
        TwoScalars().compile(optimizers="sgd")
    group = OptimizerGroup({"g": keras.optimizers.Adam(1e-3), "d": keras.optimizers.SGD(0.1, momentum=0.5)})
    clone = keras.optimizers.deserialize(keras.optimizers.serialize(group))
    assert isinstance(clone, OptimizerGroup)
    assert float(clone["d"].momentum) == 0.5
    assert float(clone["g"].learning_rate.numpy()) == pytest.approx(1e-3)


def test_variable_in_no_group_is_a_clear_error():
    model = TwoScalars()
    model.extra = model.add_weight(shape=(), initializer="zeros", name="extra")
    with pytest.raises(ValueError, match="belongs to no optimizer group"):
        model.compile(optimizers={"first": "sgd", "second": "sgd"})
