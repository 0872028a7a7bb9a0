"""Named GAN configurations: plain dicts of builder arguments."""

from keras_paperzoo.models.gan.gan_networks import (
    build_discriminator,
    build_generator,
    build_mlp_discriminator,
    build_mlp_generator,
)

GAN_PRESETS = {
    "gan_mnist": {
        "description": "Goodfellow et al. 2014 MNIST: 100-d z, G 1200-1200 ReLU -> 784 "
        "sigmoid, D maxout 240x5 -> 240x5 -> 1 with dropout.",
        "generator": {"latent_dim": 100, "hidden_units": (1200, 1200)},
        "discriminator": {"maxout_units": (240, 240), "pieces": 5},
        "image_shape": (28, 28, 1),
    },
    "gan_mnist_small": {
        "description": "A CPU-sized MNIST GAN for tests and quick runs: G 128-128, D maxout 32x5 x2.",
        "generator": {"latent_dim": 16, "hidden_units": (128, 128)},
        "discriminator": {"maxout_units": (32, 32), "pieces": 5},
        "image_shape": (28, 28, 1),
    },
    "gan_toy_1d": {
        "description": "Figure 1's 1-D toy: uniform 1-d z, Gaussian data, small MLPs.",
        "toy": True,
    },
}

_GAN_ARGS = ("d_steps", "generator_loss", "noise", "seed", "from_logits")


def build_from_preset(cls, name, image_shape=None, latent_dim=None, **overrides):
    if name not in GAN_PRESETS:
        raise ValueError(f"Unknown GAN preset {name!r}; available: {sorted(GAN_PRESETS)}.")
    preset = GAN_PRESETS[name]
    gan_args = {k: overrides.pop(k) for k in _GAN_ARGS if k in overrides}
    if overrides:
        raise ValueError(
            f"Unknown override(s) {sorted(overrides)} for GAN preset {name!r}; "
            f"accepted: image_shape, latent_dim, {', '.join(_GAN_ARGS)}."
        )
    if preset.get("toy"):
        latent_dim = latent_dim or 1
        generator = build_mlp_generator(latent_dim, (16, 16), 1)
        discriminator = build_mlp_discriminator(1, (32, 32))
        gan_args.setdefault("noise", "uniform")
        return cls(generator, discriminator, latent_dim=latent_dim, **gan_args)
    image_shape = tuple(image_shape or preset["image_shape"])
    if len(image_shape) != 3 or any(int(d) < 1 for d in image_shape):
        raise ValueError(f"image_shape must be (height, width, channels); got {image_shape}.")
    g_args = dict(preset["generator"])
    if latent_dim is not None:
        g_args["latent_dim"] = latent_dim
    generator = build_generator(output_shape=image_shape, **g_args)
    discriminator = build_discriminator(input_shape=image_shape, **preset["discriminator"])
    return cls(generator, discriminator, latent_dim=g_args["latent_dim"], **gan_args)
