"""Section 4 of the paper on the 1-D toy of Figure 1, with the real trainer.

For a fixed G, the discriminator that Algorithm 1's D-updates converge to is
D*(x) = p_data(x) / (p_data(x) + p_g(x)) (Proposition 1); when p_g = p_data it is
1/2 everywhere and the value of the game is -log 4 (Theorem 1).
"""

import math

import numpy as np
import pytest

import keras

from keras_paperzoo.evaluation import optimal_discriminator
from keras_paperzoo.models import GAN
from keras_paperzoo.models.gan.gan_networks import build_mlp_discriminator


def _normal_pdf(x, mean, std):
    return np.exp(-0.5 * ((x - mean) / std) ** 2) / (std * math.sqrt(2 * math.pi))


def _fixed_linear_generator(scale, shift):
    z = keras.Input((1,))
    g = keras.Model(z, keras.layers.Dense(1)(z), name="generator")
    g.set_weights([np.array([[scale]], "float32"), np.array([shift], "float32")])
    return g


def _train_discriminator_against(generator, steps=700, batch=256, seed=0):
    keras.utils.set_random_seed(seed)
    gan = GAN(generator, build_mlp_discriminator(1, (32, 32)), seed=seed)
    gan.compile(d_optimizer=keras.optimizers.Adam(3e-3), g_optimizer=keras.optimizers.SGD(0.0))
    data = np.random.default_rng(seed).normal(size=(steps * batch, 1)).astype("float32")  # p_data = N(0, 1)
    history = gan.fit(data, batch_size=batch, epochs=1, verbose=0)
    return gan, history


def test_discriminator_approaches_the_optimal_discriminator():
    gan, _ = _train_discriminator_against(_fixed_linear_generator(0.5, 1.0))  # p_g = N(1, 0.5^2)
    x = np.linspace(-1.0, 1.8, 15).astype("float32")[:, None]
    d = keras.ops.convert_to_numpy(keras.ops.sigmoid(gan.discriminator(x)))[:, 0]
    d_star = optimal_discriminator(_normal_pdf(x[:, 0], 0, 1), _normal_pdf(x[:, 0], 1, 0.5))
    assert d_star.min() < 0.25 and d_star.max() > 0.95  # the grid spans both regimes
    np.testing.assert_allclose(d, d_star, atol=0.08)


def test_when_p_g_equals_p_data_d_is_one_half_and_the_value_is_minus_log_4():
    gan, history = _train_discriminator_against(_fixed_linear_generator(1.0, 0.0), steps=300)
    x = np.linspace(-2, 2, 9).astype("float32")[:, None]
    d = keras.ops.convert_to_numpy(keras.ops.sigmoid(gan.discriminator(x)))[:, 0]
    np.testing.assert_allclose(d, 0.5, atol=0.06)
    value = -history.history["d_loss"][0]  # V(D, G) averaged over the run
    assert value == pytest.approx(-math.log(4), abs=0.02)
