import math

import numpy as np
import pytest

import keras

from keras_paperzoo.losses import (
    discriminator_loss,
    minimax_generator_loss,
    non_saturating_generator_loss,
)


def _f(x):
    return float(keras.ops.convert_to_numpy(x))


def test_losses_at_d_equal_one_half():
    zeros = np.zeros((8, 1), "float32")
    assert _f(discriminator_loss(zeros, zeros)) == pytest.approx(math.log(4), abs=1e-6)  # -V = log 4
    assert _f(non_saturating_generator_loss(zeros)) == pytest.approx(math.log(2), abs=1e-6)
    assert _f(minimax_generator_loss(zeros)) == pytest.approx(-math.log(2), abs=1e-6)


def test_losses_match_probability_formulas():
    rng = np.random.default_rng(0)
    real, fake = rng.normal(size=(16, 1)).astype("float32"), rng.normal(size=(16, 1)).astype("float32")
    d = lambda z: 1 / (1 + np.exp(-z.astype("float64")))
    expected_d = -(np.mean(np.log(d(real))) + np.mean(np.log(1 - d(fake))))
    assert _f(discriminator_loss(real, fake)) == pytest.approx(expected_d, rel=1e-5)
    assert _f(discriminator_loss(d(real), d(fake), from_logits=False)) == pytest.approx(expected_d, rel=1e-4)
    assert _f(minimax_generator_loss(fake)) == pytest.approx(np.mean(np.log(1 - d(fake))), rel=1e-5)
    assert _f(non_saturating_generator_loss(fake)) == pytest.approx(-np.mean(np.log(d(fake))), rel=1e-5)


def test_logit_losses_stay_finite_where_d_saturates():
    fake = np.full((4, 1), -200.0, "float32")  # D(G(z)) = 0 in float32
    assert _f(non_saturating_generator_loss(fake)) == pytest.approx(200.0, rel=1e-5)
    assert np.isfinite(_f(discriminator_loss(-fake, fake)))
