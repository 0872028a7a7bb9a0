"""The GAN paper's fully connected networks (Goodfellow et al. 2014, Sec. 5).

MNIST, from the authors' pylearn2 configuration:
- generator: 100-d noise -> 1200 ReLU -> 1200 ReLU -> 784 sigmoid, weights
  U(-0.05, 0.05); the output bias is set from the data's pixel marginals
  (`set_output_bias_from_data`).
- discriminator: maxout 240 units x 5 pieces -> maxout 240 x 5 -> 1 (sigmoid in
  the loss), weights U(-0.005, 0.005), dropout with keep probability 0.8 on the
  input and 0.5 on the hidden layers (inverted dropout, as pylearn2's scaling).
"""

import random

import numpy as np

import keras

from keras_paperzoo.layers.maxout import Maxout
from keras_paperzoo.models.backbone import check_image_shape


def build_generator(
    latent_dim=100,
    hidden_units=(1200, 1200),
    output_shape=(28, 28, 1),
    output_activation="sigmoid",
    init_range=0.05,
    name="generator",
):
    """An MLP generator G(z): `latent_dim` -> ReLU layers -> `prod(output_shape)`.

    Example:

    ```python
    g = build_generator()
    g.count_params()  # 2,503,984
    ```
    """
    output_shape = tuple(int(d) for d in output_shape)
    if any(d < 1 for d in output_shape):
        raise ValueError(f"output_shape must be positive ints; got {output_shape}.")
    init = keras.initializers.RandomUniform(-init_range, init_range)
    z = keras.Input((latent_dim,), name="noise")
    h = z
    for i, units in enumerate(hidden_units):
        h = keras.layers.Dense(units, activation="relu", kernel_initializer=init, name=f"h{i}")(h)
    x = keras.layers.Dense(
        int(np.prod(output_shape)), activation=output_activation, kernel_initializer=init, name="y"
    )(h)
    x = keras.layers.Reshape(output_shape, name="sample")(x)
    return keras.Model(z, x, name=name)


def build_discriminator(
    input_shape=(28, 28, 1),
    maxout_units=(240, 240),
    pieces=5,
    input_dropout=0.2,
    hidden_dropout=0.5,
    init_range=0.005,
    seed=None,
    name="discriminator",
):
    """A maxout MLP discriminator returning one logit per sample.

    Dropout rates are drop probabilities (the paper's keep 0.8 / 0.5). Each dropout
    layer gets an integer seed (from `seed`, else from Python's `random`, which
    `keras.utils.set_random_seed` seeds): with `seed=None` Keras's PyTorch backend
    would draw masks from torch's global RNG, which checkpoints do not hold, and a
    resumed run would differ from an uninterrupted one.

    Example:

    ```python
    d = build_discriminator()
    d.count_params()  # 1,231,441
    ```
    """
    init = keras.initializers.RandomUniform(-init_range, init_range)
    seed = random.randrange(2**30) if seed is None else int(seed)
    x = keras.Input(tuple(input_shape), name="sample")
    h = keras.layers.Flatten(name="flatten")(x)
    h = keras.layers.Dropout(input_dropout, seed=seed, name="input_dropout")(h)
    for i, units in enumerate(maxout_units):
        h = Maxout(units, pieces, kernel_initializer=init, name=f"h{i}")(h)
        h = keras.layers.Dropout(hidden_dropout, seed=seed + i + 1, name=f"h{i}_dropout")(h)
    logit = keras.layers.Dense(1, kernel_initializer=init, name="y")(h)
    return keras.Model(x, logit, name=name)


def build_mlp_generator(latent_dim, hidden_units, output_dim, activation="relu", name="generator"):
    """A small MLP generator with a linear output (the 1-D toy of Figure 1)."""
    z = keras.Input((latent_dim,), name="noise")
    h = z
    for units in hidden_units:
        h = keras.layers.Dense(units, activation=activation)(h)
    x = keras.layers.Dense(output_dim)(h)
    return keras.Model(z, x, name=name)


def build_mlp_discriminator(input_dim, hidden_units, activation="relu", name="discriminator"):
    """A small MLP discriminator returning a logit (the 1-D toy of Figure 1)."""
    x = keras.Input((input_dim,), name="sample")
    h = x
    for units in hidden_units:
        h = keras.layers.Dense(units, activation=activation)(h)
    return keras.Model(x, keras.layers.Dense(1)(h), name=name)


def build_maxout_mlp_networks(image_shape=(28, 28, 1), latent_dim=100, generator_units=(1200, 1200),
                              discriminator_units=(240, 240), pieces=5):
    """The paper's MNIST pair at any size: `build_generator` and `build_discriminator`.

    Returns {"generator": G, "discriminator": D} (the networks of a GAN preset).
    """
    image_shape = check_image_shape("GAN", image_shape)
    if None in image_shape:
        raise ValueError(f"GAN image_shape needs a known height and width (its networks are fully connected); "
                         f"got {image_shape!r}.")
    return {
        "generator": build_generator(latent_dim=latent_dim, hidden_units=generator_units, output_shape=image_shape),
        "discriminator": build_discriminator(input_shape=image_shape, maxout_units=discriminator_units, pieces=pieces),
    }


def build_toy_networks(latent_dim=1, generator_units=(16, 16), discriminator_units=(32, 32)):
    """Figure 1's 1-D toy: small ReLU MLPs on scalars. Returns {"generator", "discriminator"}."""
    return {
        "generator": build_mlp_generator(latent_dim, generator_units, 1),
        "discriminator": build_mlp_discriminator(1, discriminator_units),
    }


# The network pairs a GAN preset names in its "backbone" entry ("preset": one of these;
# "overrides": the builder's arguments).
GAN_NETWORKS = {"maxout_mlp": build_maxout_mlp_networks, "toy_mlp": build_toy_networks}


def set_output_bias_from_data(generator, images, layer_name="y", eps=1e-3):
    """Set a sigmoid output layer's bias to logit(mean pixel), as the authors did.

    pylearn2's `init_sigmoid_bias_from_marginals`: at initialisation G's samples
    then have the data's mean intensity per pixel.
    """
    mean = np.clip(np.asarray(images, "float64").reshape(len(images), -1).mean(0), eps, 1 - eps)
    layer = generator.get_layer(layer_name)
    layer.bias.assign(np.log(mean / (1 - mean)).astype("float32"))
