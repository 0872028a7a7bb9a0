"""BYOL's loss (eq. 2): 2 - 2 cos(q, sg(z')), its symmetrisation, and the stop-gradient on the target."""

import warnings

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.losses import byol_loss, symmetric_byol_loss


def _reference(q, z):
    """mean_b || q_b / ||q_b|| - z_b / ||z_b|| ||^2, the form of eq. 2 before it is expanded."""
    q, z = q.astype("float64"), z.astype("float64")
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    z = z / np.linalg.norm(z, axis=-1, keepdims=True)
    return float(np.mean(np.sum((q - z) ** 2, axis=-1)))


def _value(x):
    return float(ops.convert_to_numpy(x))


def test_matches_the_squared_distance_of_the_normalised_vectors():
    rng = np.random.default_rng(0)
    q, z = rng.normal(size=(6, 10)).astype("float32"), rng.normal(size=(6, 10)).astype("float32")
    assert _value(byol_loss(q, z)) == pytest.approx(_reference(q, z), rel=1e-5)
    # float16 inputs are computed in float32.
    got = byol_loss(q.astype("float16"), z.astype("float16"))
    assert ops.convert_to_numpy(got).dtype == np.float32
    assert _value(got) == pytest.approx(_reference(q.astype("float16"), z.astype("float16")), rel=1e-4)


def test_same_direction_gives_0_and_opposite_direction_gives_4():
    rng = np.random.default_rng(1)
    z = rng.normal(size=(5, 8)).astype("float32")
    scale = rng.uniform(0.1, 10.0, size=(5, 1)).astype("float32")
    assert _value(byol_loss(z * scale, z)) == pytest.approx(0.0, abs=1e-6)
    assert _value(byol_loss(-z * scale, z)) == pytest.approx(4.0, abs=1e-6)
    # Orthogonal: cos 0, loss 2.
    assert _value(byol_loss(np.eye(4, dtype="float32")[:2], np.eye(4, dtype="float32")[2:])) == pytest.approx(2.0)


def test_symmetric_loss_is_l_plus_l_tilde():
    rng = np.random.default_rng(2)
    q1, z2, q2, z1 = (rng.normal(size=(4, 6)).astype("float32") for _ in range(4))
    got = _value(symmetric_byol_loss(q1, z2, q2, z1))
    assert got == pytest.approx(_reference(q1, z2) + _reference(q2, z1), rel=1e-5)
    # The pairing matters: q1 goes with z2, not z1.
    assert abs(got - (_reference(q1, z1) + _reference(q2, z2))) > 1e-2


def test_mismatched_shapes_are_refused_by_value():
    q = np.ones((4, 6), "float32")
    with pytest.raises(ValueError, match=r"online_prediction and target_projection of one shape; got \(4, 6\) and \(4, 5\)"):
        byol_loss(q, q[:, :5])
    with pytest.raises(ValueError, match=r"got \(4, 6\) and \(3, 6\)"):
        symmetric_byol_loss(q, q, q, q[:3])
    with pytest.raises(ValueError, match=r"got online_prediction of rank 1"):
        byol_loss(q[0], q[0])


class OnlineAndTarget(keras.Model):
    """One Dense layer per branch; the loss sees the online output as q and the target output as z'."""

    def __init__(self):
        super().__init__()
        self.online = keras.layers.Dense(3)
        self.target = keras.layers.Dense(3)

    def call(self, x):
        return self.online(x), self.target(x)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        prediction, projection = y_pred
        return byol_loss(prediction, projection)


def test_fit_moves_the_online_branch_and_never_the_target():
    keras.utils.set_random_seed(0)
    model = OnlineAndTarget()
    x = np.random.default_rng(3).normal(size=(8, 5)).astype("float32")
    model(x)
    online_before = [ops.convert_to_numpy(w) for w in model.online.weights]
    target_before = [ops.convert_to_numpy(w) for w in model.target.weights]
    model.compile(optimizer=keras.optimizers.SGD(0.5))
    with warnings.catch_warnings():  # TensorFlow and PyTorch: "Gradients do not exist for variables [target ...]"
        warnings.simplefilter("ignore")
        model.fit(x, epochs=2, batch_size=8, verbose=0)
    for before, after in zip(target_before, model.target.weights):
        np.testing.assert_array_equal(ops.convert_to_numpy(after), before)
    moved = [np.abs(ops.convert_to_numpy(after) - before).max() for before, after in zip(online_before, model.online.weights)]
    assert min(moved) > 1e-4

