"""
Title: GAN: a generator and a discriminator trained against each other
Author: keras-paperzoo
Date created: 2026/11/19
Last modified: 2026/11/26
Description: Train the paper's MNIST generator and discriminator on handwritten digits; score the samples with a Parzen window.
Accelerator: None
"""

"""
## Introduction

Goodfellow et al. 2014 ("Generative Adversarial Nets", https://arxiv.org/abs/1406.2661)
train two networks against each other: a discriminator D learns to tell real images
from a generator's samples, and the generator G learns to fool D (Algorithm 1). The
value of the game is

    min_G max_D  E_x[log D(x)] + E_z[log(1 - D(G(z)))]          (eq. 1)

and its equilibrium is G's distribution equal to the data's, with D = 1/2 everywhere
(Prop. 1, Theorem 1). Having no likelihood to report, the paper fits a Gaussian Parzen
window to 10,000 samples of G and reports the test images' mean log-likelihood under
it (Table 1: 225 +- 2 nats on MNIST).

This example trains the paper's MNIST networks on the 1,797 handwritten digits that
ship with scikit-learn (upsampled to 28 x 28), saves a grid of samples before and after
training, and prints the Parzen log-likelihood of the test digits under the trained G
beside the same G at its random initialisation, in 5 min 20 s of CPU time on JAX (about
five minutes on 2 idle CPU cores).

    KERAS_BACKEND=jax python examples/gan_digits.py

`PAPERZOO_EXAMPLE_SMOKE=1` shrinks it to a few steps (the test suite runs it so). The
paper's MNIST run is `paperzoo train gan --dataset mnist`.
"""

"""
## Setup
"""

import os

import keras

from keras_paperzoo.callbacks import image_grid, save_png
from keras_paperzoo.data import load_dataset
from keras_paperzoo.evaluation import parzen_evaluation
from keras_paperzoo.models import GAN
from keras_paperzoo.models.gan import set_output_bias_from_data

SMOKE = os.environ.get("PAPERZOO_EXAMPLE_SMOKE") == "1"
EPOCHS = 1 if SMOKE else 200
SAMPLES = 200 if SMOKE else 10_000  # the paper's 10,000 samples for the Parzen window
keras.utils.set_random_seed(0)

"""
## The data

Images are (N, 28, 28, 1) floats in [0, 1]: 1,500 to train on and 297 test digits, of
which the first 100 choose the Parzen window's width (the paper's validation set) and
the other 197 are scored.
"""

x, _ = load_dataset("digits", split="train", image_size=28)
x_test, _ = load_dataset("digits", split="test", image_size=28)
x_valid, x_test = x_test[:100], x_test[100:]
if SMOKE:
    x = x[:200]
print(f"{len(x)} training images of shape {x.shape[1:]}")

"""
## The two players

G maps 100-d Gaussian noise through two ReLU layers of 1,200 units to 784 sigmoid
pixels; D is two maxout layers (240 units x 5 pieces) and one logit, with dropout
(keep 0.8 on the input, 0.5 after). As the authors did, G's output bias starts at the
logit of the mean pixel, so that its first samples are grey digits, not noise.
"""

gan = GAN.from_preset("gan_mnist", seed=0)
set_output_bias_from_data(gan.generator, x)
untrained = parzen_evaluation(gan.generator, x_valid, x_test, num_samples=SAMPLES, seed=0)
save_png(image_grid(gan.generate(64), gap=2), "gan_digits_before.png", scale=2)

"""
## Training

The paper's optimiser for both players: SGD with learning rate 0.1 decaying by a
factor 1.000004 per update and momentum rising from 0.5 to 0.7 (placed for this epoch
length). One step is k = 1 discriminator update on a real and a generated batch, then
one generator update with the non-saturating loss -log D(G(z)) that Sec. 3 recommends.
`d_real` and `d_fake` are the mean D(x) and D(G(z)); at the equilibrium both are 1/2.
"""

gan.compile(steps_per_epoch=len(x) // 100)
gan.fit(x, batch_size=100, epochs=EPOCHS, verbose=2)

"""
## Result

A grid of 64 samples, and the Parzen estimate. The bandwidth sigma is chosen on the
100 validation digits over the paper's grid, then the 197 test digits are scored: a
higher log-likelihood means G puts its mass nearer real digits. Upsampled 8 x 8 digits
are smoother than MNIST's, so the numbers are not comparable with the paper's 225.
Measured on JAX (seed 0, 200 epochs): 81.2 +- 7 nats at random initialisation, 405.1 +- 10
after training; the samples are recognisable digits, `d_real` / `d_fake` end near
0.63 / 0.37 (D still tells them apart, the game is not at its equilibrium).
"""

save_png(image_grid(gan.generate(64), gap=2), "gan_digits_samples.png", scale=2)
trained = parzen_evaluation(gan.generator, x_valid, x_test, num_samples=SAMPLES, seed=0)
print(f"\n{'Parzen log-likelihood (nats)':30s}{'random init':>14s}{'trained':>14s}")
print(f"{'test digits':30s}{untrained['log_likelihood']:>8.1f} +- {untrained['standard_error']:<3.0f}"
      f"{trained['log_likelihood']:>8.1f} +- {trained['standard_error']:<3.0f}")
print("wrote gan_digits_before.png and gan_digits_samples.png")
