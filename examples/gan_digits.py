"""Generative Adversarial Nets in five minutes on a CPU.

Goodfellow et al. 2014 train a generator G and a discriminator D against each
other: D learns to tell real images from G's samples, G learns to fool D
(Algorithm 1). This walkthrough trains the paper's MNIST networks on the
1,797 handwritten digits that ship with scikit-learn, then saves a grid of samples.

    KERAS_BACKEND=jax python examples/gan_digits.py
"""

import keras

from keras_paperzoo.callbacks import image_grid, save_png
from keras_paperzoo.data import load_dataset
from keras_paperzoo.models import GAN
from keras_paperzoo.models.gan import set_output_bias_from_data

keras.utils.set_random_seed(0)

# Real images: (1500, 28, 28, 1) floats in [0, 1].
x, _ = load_dataset("digits", split="train", image_size=28)

# G: 100-d Gaussian noise -> 1200 ReLU -> 1200 ReLU -> 784 sigmoid.
# D: maxout 240 x 5 -> maxout 240 x 5 -> 1 logit, with dropout (keep 0.8 / 0.5).
gan = GAN.from_preset("gan_mnist", seed=0)
# As the authors did: G's output bias starts at the logit of the mean pixel.
set_output_bias_from_data(gan.generator, x)

# The paper's optimizer for both players: SGD, lr 0.1 decaying by 1.000004 per
# update, momentum 0.5 rising to 0.7 (the ramp is placed for this epoch length).
gan.compile(steps_per_epoch=len(x) // 100)

# One step = k = 1 discriminator update, then one generator update.
# d_real and d_fake are the mean D(x) and D(G(z)); at the game's equilibrium both are 1/2.
gan.fit(x, batch_size=100, epochs=200, verbose=2)

save_png(image_grid(gan.generate(64)), "gan_digits_samples.png", scale=2)
print("wrote gan_digits_samples.png")
