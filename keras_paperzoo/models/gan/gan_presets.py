"""Named GAN configurations in the trainer preset schema (`keras_paperzoo.models.trainer`).

The "backbone" entry names a network pair of `GAN_NETWORKS` (`gan_networks.py`) and
its builder's arguments; "arguments" are the `GAN`'s own. `GAN.from_preset(name,
image_shape=..., latent_dim=..., generator_units=..., d_steps=..., ...)` overrides either.
"""

GAN_PRESETS = {
    "gan_mnist": {
        "description": "Goodfellow et al. 2014 MNIST: 100-d z, G 1200-1200 ReLU -> 784 "
        "sigmoid, D maxout 240x5 -> 240x5 -> 1 with dropout.",
        "backbone": {
            "preset": "maxout_mlp",
            "overrides": {"image_shape": (28, 28, 1), "latent_dim": 100, "generator_units": (1200, 1200),
                          "discriminator_units": (240, 240), "pieces": 5},
        },
        "arguments": {},
    },
    "gan_mnist_small": {
        "description": "A CPU-sized MNIST GAN for tests and quick runs: G 128-128, D maxout 32x5 x2.",
        "backbone": {
            "preset": "maxout_mlp",
            "overrides": {"image_shape": (28, 28, 1), "latent_dim": 16, "generator_units": (128, 128),
                          "discriminator_units": (32, 32), "pieces": 5},
        },
        "arguments": {},
    },
    "gan_toy_1d": {
        "description": "Figure 1's 1-D toy: uniform 1-d z, Gaussian data, small MLPs.",
        "backbone": {
            "preset": "toy_mlp",
            "overrides": {"latent_dim": 1, "generator_units": (16, 16), "discriminator_units": (32, 32)},
        },
        "arguments": {"noise": "uniform"},
    },
}
