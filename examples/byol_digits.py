"""
Title: BYOL: self-supervised learning without negative pairs, on handwritten digits
Author: keras-paperzoo
Date created: 2026/11/25
Last modified: 2026/11/25
Description: An online network learns to predict a slowly moving copy of itself; no negatives, and yet no collapse.
Accelerator: None
"""

"""
## Introduction

Contrastive methods (SimCLR, MoCo) keep their features from collapsing to one
point by pushing each image away from many others. BYOL (Grill et al. 2020,
"Bootstrap Your Own Latent", https://arxiv.org/abs/2006.07733) claims that no
negatives are needed: an *online* network is trained to predict, from one view
of an image, a *target* network's projection of another view, and the target is
an exponential moving average of the online network. The loss alone has a
trivial minimum (every image mapped to the same constant); the paper's finding
is that the predictor and the slowly moving target keep training away from it.
With ResNet-50 it reaches 74.3 % ImageNet linear accuracy.

This example trains BYOL for a few minutes on a CPU on the 1,797 handwritten
digits that ship with scikit-learn and checks two things: whether the features
collapse (`output_std`, the spread of the normalised projections across the
batch, stays near 1 / sqrt(d) or falls to 0), and the frozen encoder's
k-nearest-neighbour accuracy against the same encoder at random initialisation;
at this length the second shows how slowly BYOL starts (see the end).
`applications/ssl_cifar.py` runs the paper's ablations (no predictor, tau = 0),
where it collapses.

    KERAS_BACKEND=jax python examples/byol_digits.py

`PAPERZOO_EXAMPLE_SMOKE=1` shrinks it to a few steps (the test suite runs it so).
"""

"""
## Setup
"""

import os

import numpy as np

import keras

from keras_paperzoo.evaluation import extract_features, knn_accuracy, linear_probe
from keras_paperzoo.data import load_dataset
from keras_paperzoo.models import BYOL

SMOKE = os.environ.get("PAPERZOO_EXAMPLE_SMOKE") == "1"
PRESET = "byol_tiny" if SMOKE else "byol_resnet20_cifar"  # CIFAR ResNet-20, heads 256-64
EPOCHS = 1 if SMOKE else 15
PROBE_EPOCHS = 1 if SMOKE else 100
BATCH_SIZE = 128
keras.utils.set_random_seed(0)

"""
## The data

1,500 training and 297 test digits, 8 x 8 pixels, upsampled to 16 x 16, with
three equal colour channels for BYOL's colour augmentations. Labels are used only
to evaluate.
"""

x_train, y_train = load_dataset("digits", split="train", image_size=16, color_mode="rgb")
x_test, y_test = load_dataset("digits", split="test", image_size=16, color_mode="rgb")
x_train = x_train[: 256 if SMOKE else len(x_train) // BATCH_SIZE * BATCH_SIZE]  # whole batches
y_train = y_train[: len(x_train)]
mean, std = x_train.mean(axis=(0, 1, 2)), x_train.std(axis=(0, 1, 2))  # per channel


def normalize(images):
    return ((images - mean) / std).astype("float32")


"""
## The model

`BYOL` builds the online network (encoder f, projector g, predictor q) and the
target network (a copy of f and g, not trained by gradients). Each step:

1. draws two asymmetric views v, v' of every image (Table 6: crop, flip, colour
   jitter, grayscale; solarisation on the second view; the blur is left out
   below 96 pixels, as for CIFAR);
2. moves the target toward the online network, xi <- tau xi + (1 - tau) theta,
   with tau rising from 0.99 to 1 on a cosine over the run;
3. minimises 2 - 2 cos(q(g(f(v))), sg(g'(f'(v')))), symmetrised over the views.

The views are normalised by the training set's statistics, and crops keep at
least half of a digit.
"""

augmentation = {"crop_scale": (0.5, 1.0), "blur": False, "mean": mean.tolist(), "std": std.tolist()}
byol = BYOL.from_preset(PRESET, image_shape=(16, 16, 3), augmentation=augmentation, seed=0)
encoder = byol.encoder  # the online encoder: normalised images -> representation y


def knn():
    """kNN top-1 (k = 200, cosine, InstDisc's weighted vote) of the frozen encoder's features."""
    train = extract_features(encoder, (normalize(x_train), y_train))[0]
    test = extract_features(encoder, (normalize(x_test), y_test))[0]
    return knn_accuracy(train, y_train, test, y_test, k=200)


def probe():
    """Linear-probe top-1 on the frozen features (MoCo's protocol: SGD lr 30, 100 epochs)."""
    return linear_probe(encoder, (normalize(x_train), y_train), (normalize(x_test), y_test),
                        epochs=PROBE_EPOCHS, seed=0)["accuracy"]


"""
Random convolutional features already separate digits well above chance: the
untrained encoder is the baseline.
"""

before = {"knn": knn(), "probe": probe()}

"""
## Training

`compile()` with no optimizer gives the paper's: LARS, learning rate 0.2 x B /
256, linear warmup, cosine decay, weight decay 1.5e-6; it also tells the target's
tau schedule how many steps the run has.
"""

byol.compile(batch_size=BATCH_SIZE, steps_per_epoch=len(x_train) // BATCH_SIZE, epochs=EPOCHS)
history = byol.fit(x_train, batch_size=BATCH_SIZE, epochs=EPOCHS, verbose=2)

"""
## Did it collapse? What did it learn?

A collapsed network maps every image to the same vector: the spread of the
normalised projections across the batch would be 0. Spread evenly over d
dimensions it is about 1 / sqrt(d).

What our run showed (TensorFlow, 2 CPU cores, 165 updates, 3 min of CPU time) is
worth knowing before trusting a short BYOL run: the projections kept their spread
(output_std 0.094 -> 0.075, against 0.125 for an even spread and 0 for collapse),
the loss fell (4.1 -> 1.3), and yet the encoder got *worse* than at random
initialisation (kNN 81 % -> 53 %, linear probe 81 % -> 79 %). Early in training the
online network learns to predict a target that is itself still nearly random;
BYOL's representation overtakes the random one only after many more updates (the
paper trains 1000 epochs; MoCo's similar momentum target needed about 3,000
updates on MNIST in `applications/moco_cifar.py`). SimCLR, whose negatives give
a useful signal from the first step, learns within the same budget
(`examples/simclr_digits.py`). Raise `EPOCHS` to watch BYOL catch up.
"""

after = {"knn": knn(), "probe": probe()}
spread = history.history["output_std"]
d = byol.projection_dims[-1]
print(f"\noutput_std per epoch: {', '.join(f'{v:.3f}' for v in spread)} (collapsed: 0; 1/sqrt({d}) = {d ** -0.5:.3f})")
print(f"{'':22s}{'random init':>12s}{'BYOL':>8s}")
print(f"{'kNN on the encoder':22s}{100 * before['knn']:11.1f}%{100 * after['knn']:7.1f}%")
print(f"{'linear probe':22s}{100 * before['probe']:11.1f}%{100 * after['probe']:7.1f}%")
print(f"\nkNN {100 * (after['knn'] - before['knn']):+.1f} points from {EPOCHS} epochs with no labels and no "
      f"negatives; the projections {'kept their spread' if spread[-1] > 0.5 * d ** -0.5 else 'collapsed'}.")
