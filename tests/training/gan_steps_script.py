"""Run a few GAN steps from given weights; used by the backend-parity test.

    KERAS_BACKEND=jax python gan_steps_script.py INPUT.npz OUTPUT.npz

INPUT.npz holds `weights_*` (initial weights), `images` and `noise` (a bank of
noise batches, one per draw: keras.random's streams differ between backends, so
the parity test feeds the same noise to all three). Dropout is off for the same
reason. OUTPUT.npz receives the final weights and the logged metrics.
"""

import sys

import numpy as np

import keras
from keras import ops

from keras_paperzoo.models import GAN
from keras_paperzoo.models.gan import build_discriminator, build_generator


class BankNoiseGAN(GAN):
    """A GAN whose z comes from a fixed bank, draw after draw."""

    def __init__(self, *args, bank=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.bank = np.asarray(bank, "float32")
        self.draw = self.add_weight(shape=(), initializer="zeros", dtype="int32", trainable=False, name="draw")

    def sample_noise(self, num_samples):
        z = ops.take(ops.convert_to_tensor(self.bank), self.draw, axis=0)[:num_samples]
        self.draw.assign(self.draw + 1)
        return z


def main(inp, out):
    data = np.load(inp)
    generator = build_generator(latent_dim=8, hidden_units=(32,), output_shape=(6, 6, 1))
    discriminator = build_discriminator(input_shape=(6, 6, 1), maxout_units=(16,), pieces=3, input_dropout=0.0, hidden_dropout=0.0)
    gan = BankNoiseGAN(generator, discriminator, d_steps=2, bank=data["noise"])
    gan.compile(steps_per_epoch=2)
    gan.set_weights([data[f"weights_{i}"] for i in range(len(gan.weights))])
    history = gan.fit(data["images"], batch_size=int(data["batch_size"]), epochs=1, shuffle=False, verbose=0)
    np.savez(
        out,
        **{f"weights_{i}": keras.ops.convert_to_numpy(w) for i, w in enumerate(gan.weights)},
        d_loss=np.array(history.history["d_loss"]),
    )


def initial_state(path, seed=0, steps=3, batch_size=8):
    """Write the shared initial weights, images and noise bank for `main`."""
    keras.utils.set_random_seed(seed)
    generator = build_generator(latent_dim=8, hidden_units=(32,), output_shape=(6, 6, 1))
    discriminator = build_discriminator(input_shape=(6, 6, 1), maxout_units=(16,), pieces=3, input_dropout=0.0, hidden_dropout=0.0)
    rng = np.random.default_rng(seed)
    gan = BankNoiseGAN(generator, discriminator, d_steps=2, bank=np.zeros((1, 1, 8)))
    weights = {f"weights_{i}": keras.ops.convert_to_numpy(w) for i, w in enumerate(gan.weights)}
    draws = steps * 3  # two discriminator draws and one generator draw per step
    np.savez(
        path,
        **weights,
        images=rng.random((steps * batch_size, 6, 6, 1)).astype("float32"),
        noise=rng.normal(size=(draws, batch_size // 2, 8)).astype("float32"),
        batch_size=np.array(batch_size),
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
