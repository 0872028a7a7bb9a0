"""
Title: CPC: predicting the rows below on handwritten digits
Author: keras-paperzoo
Date created: 2026/11/25
Last modified: 2026/11/25
Description: Learn patch features without labels by telling the encoding of a patch a few rows below from all others.
Accelerator: None
"""

"""
## Introduction

Contrastive Predictive Coding (van den Oord et al. 2018, "Representation Learning
with Contrastive Predictive Coding", https://arxiv.org/abs/1807.03748) learns a
representation by predicting the future in latent space. On images the "future"
is the rows below: each image is cut into a 7 x 7 grid of overlapping patches, an
encoder turns each patch into a vector z, a masked (PixelCNN-style) network
summarises the rows seen so far into a context c, and a linear map W_k of c must
pick out the true z k rows below among the encodings of every patch of every
image in the batch (InfoNCE). The paper shows that log N - loss, with N the
number of candidates, is a lower bound on the mutual information between the
context and the patch it predicts, and reports 48.7 % ImageNet top-1 for a linear
classifier on the mean-pooled patch encodings (CPC v2, Henaff et al. 2019, raised
it to 71.5 %).

This example trains CPC for a few minutes on a CPU on the 1,797 handwritten digits
that ship with scikit-learn and watches that bound rise from about 0, then
measures what the frozen encoder learned: kNN and linear-probe accuracy against
the same encoder at its random initialisation.

    KERAS_BACKEND=tensorflow python examples/cpc_digits.py

`PAPERZOO_EXAMPLE_SMOKE=1` shrinks it to a few steps (the test suite runs it so).
"""

"""
## Setup
"""

import math
import os

import keras

from keras_paperzoo.callbacks import image_grid, save_png
from keras_paperzoo.data import load_dataset
from keras_paperzoo.evaluation import extract_features, knn_accuracy, linear_probe
from keras_paperzoo.models import CPC
from keras_paperzoo.models.cpc import PatchGrid

SMOKE = os.environ.get("PAPERZOO_EXAMPLE_SMOKE") == "1"
PRESET = "cpc_tiny" if SMOKE else "cpc_v1_small"  # a two-block pre-activation ResNet, no normalisation (v1)
EPOCHS = 1 if SMOKE else 8
PROBE_EPOCHS = 1 if SMOKE else 100
BATCH_SIZE = 32
keras.utils.set_random_seed(0)

"""
## The data

1,500 training and 297 test digits, 8 x 8 pixels, upsampled to 16 x 16 with three
equal colour channels. Labels are used only to evaluate.
"""

x_train, y_train = load_dataset("digits", split="train", image_size=16, color_mode="rgb")
x_test, y_test = load_dataset("digits", split="test", image_size=16, color_mode="rgb")
x_train = x_train[: 128 if SMOKE else len(x_train) // BATCH_SIZE * BATCH_SIZE]  # whole batches
y_train = y_train[: len(x_train)]
x_eval = x_test[: len(x_test) // BATCH_SIZE * BATCH_SIZE]  # held-out images for the bound
mean, std = x_train.mean(axis=(0, 1, 2)), x_train.std(axis=(0, 1, 2))  # per channel
print(f"{len(x_train)} training images of shape {x_train.shape[1:]}, {len(x_test)} test images")

"""
## The grid of patches

CPC v1 cuts a 256 x 256 image into a 7 x 7 grid of 64 x 64 patches at stride 32
(each patch overlaps half of its neighbours). At 16 x 16 the same proportions
give 4 x 4 patches at stride 2: each holds 2 x 2 pixels of the original digit.
"""

patches = keras.ops.convert_to_numpy(PatchGrid(4, 2)(x_train[:1]))[0]  # (7, 7, 4, 4, 3)
save_png(image_grid(patches.reshape(-1, 4, 4, 3), columns=7, gap=1), "cpc_digits_patches.png", scale=8)
print("wrote cpc_digits_patches.png: the 7 x 7 patches of one digit")

"""
## The model

`CPC` holds the patch encoder g_enc (mean-pooled per patch: z), the context network
g_ar (five masked blocks in the paper, three here: c at row r sees rows <= r
only) and one linear map W_k per step k = 1..5 rows ahead. Its augmentation draws
a random crop of at least half the digit and normalises by the training set's
mean and std. `compile()` gives the paper's optimizer: Adam at 2e-4.
"""

augmentation = {"crop_scale": (0.5, 1.0), "grayscale": 0.0, "mean": mean.tolist(), "std": std.tolist()}
cpc = CPC.from_preset(PRESET, image_shape=(16, 16, 3), augmentation=augmentation, seed=0)
cpc.compile()
encoder = cpc.encoder  # normalised images -> z mean-pooled over the grid
log_n = math.log(BATCH_SIZE * cpc.grid_size[0] * cpc.grid_size[1])
print(f"{cpc.grid_size[0]} x {cpc.grid_size[1]} grid, N = {BATCH_SIZE} x 49 candidates per prediction: "
      f"log N = {log_n:.2f}")


def normalize(images):
    return ((images - mean) / std).astype("float32")


def evaluate():
    """kNN and linear-probe top-1 of the frozen encoder, and the bound on held-out digits."""
    train = extract_features(encoder, (normalize(x_train), y_train))[0]
    test = extract_features(encoder, (normalize(x_test), y_test))[0]
    bound = cpc.evaluate(x_eval, batch_size=BATCH_SIZE, verbose=0, return_dict=True)["mi_bound"]
    return {"knn": knn_accuracy(train, y_train, test, y_test, k=min(200, len(train))),
            "probe": linear_probe(encoder, (normalize(x_train), y_train), (normalize(x_test), y_test),
                                  epochs=PROBE_EPOCHS, seed=0)["accuracy"],
            "bound": bound}


"""
The W_k start at zero, so at initialisation every candidate gets the same score:
the loss is log N and the bound 0. Random convolutional features are far from
useless for classification, so the untrained encoder is the baseline to beat.
"""

before = evaluate()

"""
## Training

`fit` takes the raw images. `mi_bound` is log N - loss for each batch; it can
only rise if the context predicts which patch lies below.
"""

history = cpc.fit(x_train, batch_size=BATCH_SIZE, epochs=EPOCHS, verbose=2).history
print("mi_bound per epoch:", " ".join(f"{v:.2f}" for v in history["mi_bound"]))

"""
## What it learned

The bound on held-out digits, and the two accuracies of the frozen encoder. In our
run (TensorFlow, 2 busy CPU cores, 3 min of training) the bound rose from 0 to 2.4
nats (of at most log N = 7.4), the linear probe from 54 % to 59 % and the kNN
accuracy from 44 % to 47 %. The gains are modest: an 8 x 8 digit leaves 2 x 2 of
its pixels to a patch, and the paper's 48.7 % on ImageNet came from 256-pixel
images, a ResNet-101 encoder and 32 GPUs.
"""

after = evaluate()
print(f"\n{'':34s}{'random init':>12s}{'CPC':>10s}")
for key, label, scale, unit in (("bound", "log N - loss (nats, held out)", 1, ""),
                                ("knn", "kNN on pooled z", 100, "%"),
                                ("probe", "linear probe on pooled z", 100, "%")):
    first, last = (round(scale * value[key], 2) + 0.0 for value in (before, after))  # (no "-0.00")
    print(f"{label:34s}{first:11.2f}{unit or ' '}{last:9.2f}{unit}")
print(f"\nThe bound rose by {after['bound'] - before['bound']:+.2f} nats in {EPOCHS} epochs (its ceiling, "
      f"log N, is {log_n:.2f}); linear probe {100 * (after['probe'] - before['probe']):+.1f} points, kNN "
      f"{100 * (after['knn'] - before['knn']):+.1f}.")
