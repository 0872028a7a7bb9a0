"""The GAN trainer (Goodfellow et al. 2014, Algorithm 1)."""

import math

import numpy as np
import pytest

import keras

from keras_paperzoo.models import GAN
from keras_paperzoo.models.gan import build_discriminator, build_generator, set_output_bias_from_data
from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model


def _images(n=60, seed=0):
    return np.random.default_rng(seed).random((n, 28, 28, 1)).astype("float32")


def _small_gan(**kwargs):
    return GAN.from_preset("gan_mnist_small", seed=1, **kwargs)


def _numpy(weights):
    return [keras.ops.convert_to_numpy(w).copy() for w in weights]


def test_paper_networks_parameter_counts():
    # G: 100*1200+1200 + 1200*1200+1200 + 1200*784+784; D: maxout 784->240x5, 240->240x5, 240->1.
    assert build_generator().count_params() == 2_503_984
    assert build_discriminator().count_params() == 1_231_441
    gan = GAN.from_preset("gan_mnist")
    assert gan.latent_dim == 100 and gan.d_steps == 1
    assert gan.generator_loss == "non_saturating" and gan.noise == "gaussian"
    dropouts = [l.rate for l in gan.discriminator.layers if isinstance(l, keras.layers.Dropout)]
    assert dropouts == pytest.approx([0.2, 0.5, 0.5])  # keep 0.8 on the input, 0.5 hidden


def test_default_compile_is_the_papers_sgd():
    gan = _small_gan()
    gan.compile(steps_per_epoch=500)
    for opt, lr in ((gan.d_optimizer, 0.05), (gan.g_optimizer, 0.1)):
        assert opt.momentum_schedule.start == 0.5 and opt.momentum_schedule.end == 0.7
        assert opt.momentum_schedule.ramp_steps == 250 * 500
        # D: the authors' 0.1 on a cost half the size of -V (see GAN's docstring).
        assert float(keras.ops.convert_to_numpy(opt.learning_rate)) == pytest.approx(lr)
        assert opt._learning_rate.decay_factor == 1.000004
    assert gan.d_optimizer is not gan.g_optimizer


def test_losses_at_initialisation_are_log4_and_log2():
    # The paper's D initialisation (U(-0.005, 0.005)) makes D(x) ~ 1/2 for all x.
    gan = GAN.from_preset("gan_mnist", seed=0)
    gan.compile(d_optimizer=keras.optimizers.SGD(0.0), g_optimizer=keras.optimizers.SGD(0.0))
    history = gan.fit(_images(100), batch_size=100, epochs=1, verbose=0)
    assert history.history["d_loss"][0] == pytest.approx(math.log(4), abs=0.01)
    assert history.history["g_loss"][0] == pytest.approx(math.log(2), abs=0.01)
    assert history.history["d_real"][0] == pytest.approx(0.5, abs=0.01)
    assert history.history["d_fake"][0] == pytest.approx(0.5, abs=0.01)


def test_k_discriminator_updates_per_generator_update():
    gan = _small_gan(d_steps=3)
    gan.compile(d_optimizer="sgd", g_optimizer="sgd")
    gan.fit(_images(120), batch_size=60, epochs=1, verbose=0, shuffle=False)  # 2 steps
    assert int(gan.d_optimizer.iterations.numpy()) == 6
    assert int(gan.g_optimizer.iterations.numpy()) == 2
    assert int(gan.optimizer.iterations.numpy()) == 2


@pytest.mark.parametrize("frozen", ["discriminator", "generator"])
def test_each_update_moves_only_its_own_network(frozen):
    gan = _small_gan()
    zero, live = keras.optimizers.SGD(0.0), keras.optimizers.SGD(0.05)
    if frozen == "discriminator":
        gan.compile(d_optimizer=zero, g_optimizer=live)
    else:
        gan.compile(d_optimizer=live, g_optimizer=zero)
    g0, d0 = _numpy(gan.generator.weights), _numpy(gan.discriminator.weights)
    gan.fit(_images(60), batch_size=30, epochs=1, verbose=0)
    g_moved = any(not np.array_equal(a, b) for a, b in zip(g0, _numpy(gan.generator.weights)))
    d_moved = any(not np.array_equal(a, b) for a, b in zip(d0, _numpy(gan.discriminator.weights)))
    assert (g_moved, d_moved) == ((True, False) if frozen == "discriminator" else (False, True))


def test_minimax_and_non_saturating_generators_get_opposite_signed_objectives():
    x = _images(40)
    logs = {}
    for kind in ("minimax", "non_saturating"):
        gan = _small_gan(generator_loss=kind)
        gan.compile(d_optimizer=keras.optimizers.SGD(0.0), g_optimizer=keras.optimizers.SGD(0.0))
        logs[kind] = gan.fit(x, batch_size=40, epochs=1, verbose=0).history["g_loss"][0]
    # At D = 1/2: minimax log(1 - D) = -log 2, non-saturating -log D = +log 2.
    assert logs["minimax"] == pytest.approx(-math.log(2), abs=0.02)
    assert logs["non_saturating"] == pytest.approx(math.log(2), abs=0.02)


def test_bad_arguments_name_the_value_and_rule():
    g, d = build_generator(latent_dim=4, hidden_units=(8,)), build_discriminator(maxout_units=(4,))
    with pytest.raises(ValueError, match=r"^GAN d_steps \(the paper's k\) must be an int >= 1; got 0\.$"):
        GAN(g, d, d_steps=0)
    with pytest.raises(ValueError, match=r"^GAN d_steps \(the paper's k\) must be an int >= 1; got True\.$"):
        GAN(g, d, d_steps=True)
    with pytest.raises(ValueError, match=r"^GAN latent_dim must be an int >= 1; got latent_dim=0\.$"):
        GAN(g, d, latent_dim=0)
    with pytest.raises(ValueError, match=r"^GAN generator_loss must be 'minimax' or 'non_saturating'; "
                                         r"got generator_loss='wasserstein'\.$"):
        GAN(g, d, generator_loss="wasserstein")
    with pytest.raises(ValueError, match=r"^GAN noise must be 'gaussian' or 'uniform'; got noise='laplace'\.$"):
        GAN(g, d, noise="laplace")
    with pytest.raises(ValueError, match=r"^GAN update must be 'alternating' or 'simultaneous'; got update='lookahead'\.$"):
        GAN(g, d, update="lookahead")
    with pytest.raises(ValueError, match="simultaneous.*d_steps=1.*got d_steps=2"):
        GAN(g, d, update="simultaneous", d_steps=2)
    with pytest.raises(ValueError, match="discriminator takes"):
        GAN(g, build_discriminator(input_shape=(8, 8, 1), maxout_units=(4,)))
    with pytest.raises(ValueError, match="keras.Model"):
        GAN("generator", d)
    with pytest.raises(ValueError, match="Unknown GAN preset 'gan_cifar'"):
        GAN.from_preset("gan_cifar")
    with pytest.raises(ValueError, match="Unknown override"):
        GAN.from_preset("gan_mnist", hidden_units=3)
    with pytest.raises(ValueError, match="d_optimizer= and g_optimizer="):
        _small_gan().compile(optimizer="adam")


def test_config_roundtrip_save_load_and_fit(tmp_path):
    gan = _small_gan(d_steps=2)
    gan.compile()
    check_fit(gan, _images(80), batch_size=40, epochs=1)
    clone = check_config_roundtrip(gan)
    assert clone.d_steps == 2 and clone.latent_dim == gan.latent_dim and clone.update == "alternating"
    z = np.random.default_rng(3).normal(size=(5, gan.latent_dim)).astype("float32")
    loaded = check_saved_model(gan, z, tmp_path)
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(loaded.discriminator(_images(4), training=False)),
        keras.ops.convert_to_numpy(gan.discriminator(_images(4), training=False)),
    )
    # The noise sampler's RNG state is saved too: both draw the same next noise.
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(loaded.sample_noise(3)), keras.ops.convert_to_numpy(gan.sample_noise(3))
    )
    assert loaded.d_optimizer.momentum_schedule.end == 0.7


def test_output_bias_from_data_marginals():
    gan = GAN.from_preset("gan_mnist")
    images = np.full((10, 28, 28, 1), 0.25, "float32")
    set_output_bias_from_data(gan.generator, images)
    bias = keras.ops.convert_to_numpy(gan.generator.get_layer("y").bias)
    np.testing.assert_allclose(bias, math.log(0.25 / 0.75), rtol=1e-5)
    # With zero weights, samples would be exactly the data mean.
    gan.generator.get_layer("y").kernel.assign(np.zeros((1200, 784), "float32"))
    np.testing.assert_allclose(gan.generate(2), 0.25, rtol=1e-5)


class _FixedNoiseGAN(GAN):
    """The same z at every draw, so one step can be recomputed in NumPy."""

    def sample_noise(self, num_samples):
        return keras.ops.convert_to_tensor(_Z[:num_samples])


_Z = np.random.default_rng(5).normal(size=(8, 3)).astype("float32")


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _numpy_step(real, w_g, b_g, w_d, b_d, lr, update):
    """One SGD step of a linear G(z) = z W_g + b_g and D logit x w_d + b_d (no momentum, k = 1)."""
    m = len(real)
    fake = _Z[:m] @ w_g + b_g
    l_real, l_fake = real @ w_d + b_d, fake @ w_d + b_d  # (m, 1)
    # d_loss = mean softplus(-l_real) + mean softplus(l_fake)
    dl_real, dl_fake = -_sigmoid(-l_real) / m, _sigmoid(l_fake) / m
    w_d1 = w_d - lr * (real.T @ dl_real + fake.T @ dl_fake)
    b_d1 = b_d - lr * (dl_real.sum(0) + dl_fake.sum(0))
    # g_loss = mean softplus(-D(G(z))), against D before (simultaneous) or after (alternating) its update
    w_seen, b_seen = (w_d, b_d) if update == "simultaneous" else (w_d1, b_d1)
    dx = (-_sigmoid(-(fake @ w_seen + b_seen)) / m) @ w_seen.T  # (m, 2)
    return w_g - lr * _Z[:m].T @ dx, b_g - lr * dx.sum(0), w_d1, b_d1


@pytest.mark.parametrize("update", ["simultaneous", "alternating"])
def test_one_step_matches_numpy(update):
    """Simultaneous: G's gradient is taken at D's old weights; alternating: at D's new ones."""
    generator = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, kernel_initializer="glorot_normal")])
    discriminator = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, kernel_initializer="glorot_normal")])
    gan = _FixedNoiseGAN(generator, discriminator, update=update)
    lr = 0.5
    gan.compile(d_optimizer=keras.optimizers.SGD(lr), g_optimizer=keras.optimizers.SGD(lr))
    real = np.random.default_rng(6).normal(1.0, 1.0, size=(8, 2)).astype("float32")
    start = _numpy(generator.weights) + _numpy(discriminator.weights)
    gan.fit(real, batch_size=8, epochs=1, shuffle=False, verbose=0)
    after = _numpy(generator.weights) + _numpy(discriminator.weights)
    expected = _numpy_step(real, *start, lr=lr, update=update)
    for got, want in zip(after, expected):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    other = _numpy_step(real, *start, lr=lr, update="alternating" if update == "simultaneous" else "simultaneous")
    assert not np.allclose(after[0], other[0], rtol=1e-4, atol=1e-6)  # the two orders differ in G's step
