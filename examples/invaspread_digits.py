"""
Title: InvaSpread: invariant and spreading instance features on handwritten digits
Author: keras-paperzoo
Date created: 2026/11/25
Last modified: 2026/11/25
Description: Learn an embedding without labels in which two views of an image agree and different images spread apart.
Accelerator: None
"""

"""
## Introduction

InvaSpread (Ye et al. 2019, "Unsupervised Embedding Learning via Invariant and
Spreading Instance Feature", https://arxiv.org/abs/1904.03436) treats every image
as its own class and uses the features of the images in the batch as the
classifier's weights. Two properties follow from one softmax loss: the features of
two augmentations of an image should agree (*invariant*), and the features of
different images should be far apart (*spreading*). Unlike its predecessor InstDisc,
it keeps no memory bank: the negatives are the other images of the current batch,
embedded by the same network in the same step, which made it much faster to train.
On CIFAR-10 a ResNet-18 trained this way reaches 83.6 % kNN accuracy on its 128-d
embedding (Table 1).

This example trains InvaSpread for a few minutes on a CPU on the 1,797 handwritten
digits that ship with scikit-learn, then measures what it learned without labels:
the kNN accuracy of the embedding f and of the encoder's features h, and a linear
probe on h, each against the same network at its random initialisation.

    KERAS_BACKEND=jax python examples/invaspread_digits.py

`PAPERZOO_EXAMPLE_SMOKE=1` shrinks it to a few steps (the test suite runs it so).
"""

"""
## Setup
"""

import os

import numpy as np

import keras

from keras_paperzoo.callbacks import image_grid, save_png
from keras_paperzoo.data import load_dataset
from keras_paperzoo.evaluation import extract_features, knn_accuracy, linear_probe
from keras_paperzoo.models import InvaSpread

SMOKE = os.environ.get("PAPERZOO_EXAMPLE_SMOKE") == "1"
PRESET = "invaspread_tiny" if SMOKE else "invaspread_resnet20_cifar"  # CIFAR ResNet-20, 0.27M parameters
EPOCHS = 1 if SMOKE else 15
PROBE_EPOCHS = 1 if SMOKE else 100
BATCH_SIZE = 128  # the authors' CIFAR batch
keras.utils.set_random_seed(0)

"""
## The data

1,500 training and 297 test digits, 8 x 8 pixels, upsampled to 16 x 16 and given
three equal colour channels (the colour jitter expects RGB). Labels are used only to
evaluate.
"""

x_train, y_train = load_dataset("digits", split="train", image_size=16, color_mode="rgb")
x_test, y_test = load_dataset("digits", split="test", image_size=16, color_mode="rgb")
x_train = x_train[: 256 if SMOKE else len(x_train) // BATCH_SIZE * BATCH_SIZE]  # whole batches
y_train = y_train[: len(x_train)]
mean, std = x_train.mean(axis=(0, 1, 2)), x_train.std(axis=(0, 1, 2))  # per channel
print(f"{len(x_train)} training images of shape {x_train.shape[1:]}, {len(x_test)} test images")

"""
## Two views of every image

The authors' CIFAR transform, drawn twice per image: a random resized crop, colour
jitter of strength 0.4 on brightness, contrast, saturation and hue, grayscale with
probability 0.2 and a horizontal flip. (The paper derives its loss for an image and
its augmentation; its Siamese training and the released code augment both branches.)
Crops keep at least half of a digit here, since the authors' 20 % crop of an 8 x 8
digit is a stroke. Each view is then normalised by the training set's per-channel
mean and std.
"""

augmentation = {"crop_scale": (0.5, 1.0), "mean": mean.tolist(), "std": std.tolist()}
model = InvaSpread.from_preset(PRESET, image_shape=(16, 16, 3), augmentation=augmentation, seed=0)
view_a = model.augmentation(x_train[:8], training=True)
view_b = model.augmentation(x_train[:8], training=True)  # a second, independent draw
pictures = [keras.ops.convert_to_numpy(v) * std + mean for v in (view_a, view_b)]  # back to [0, 1]
save_png(image_grid(np.concatenate([x_train[:8], *pictures])), "invaspread_digits_views.png", scale=4)
print("wrote invaspread_digits_views.png: 8 digits (top row) and two random views of each")

"""
## The model

`InvaSpread` holds one embedding network: the ResNet, global average pooling (h),
a linear layer to 128 dimensions and L2 normalisation (f). Each step embeds both
views of the N images, 2N features, and for each of them takes a softmax over its
similarities to the 2N - 1 others at temperature 0.1: the loss asks for a high
probability on the other view of the same image and a low one on each of the
2N - 2 views of other images (Sec. 3.1, -log P and -log(1 - P)).
"""

encoder = model.encoder  # images (normalised) -> h


def normalize(images):
    return ((images - mean) / std).astype("float32")


def knn(features_of):
    """kNN top-1 (k = 200, cosine, InstDisc's weighted vote) of the features `features_of(images)` gives."""
    train, test = features_of(x_train), features_of(x_test)
    return knn_accuracy(train, y_train, test, y_test, k=200)


def h(images):
    return extract_features(encoder, (normalize(images), None))[0]


def f(images):
    return model.predict(images, batch_size=256, verbose=0)  # the trainer on raw images: the unit embedding


"""
Random convolutional features are far from useless (a kNN on them beats chance by a
wide margin), so the untrained network is the baseline to beat, not 10 %.
"""

before = {"knn_f": knn(f), "knn_h": knn(h)}
before["probe_h"] = linear_probe(encoder, (normalize(x_train), y_train), (normalize(x_test), y_test),
                                 epochs=PROBE_EPOCHS, seed=0)["accuracy"]

"""
## Training

`compile()` with no optimizer gives the authors': SGD with learning rate 0.03,
momentum 0.9 and weight decay 5e-4, the rate cut at the same fractions of the run as
their epochs 120, 160 and 200 of 301. `contrastive_accuracy` is how often a view's
most probable class is the other view of its image.
"""

model.compile(steps_per_epoch=len(x_train) // BATCH_SIZE, epochs=EPOCHS)
model.fit(x_train, batch_size=BATCH_SIZE, epochs=EPOCHS, verbose=2)

"""
## What it learned

The same three numbers after training. In our run (TensorFlow, 2 shared CPU cores,
3 min of CPU time) the loss fell from 6.50 (the value when all 2N - 1 classes are
equally likely is log 255 + 254 log(255 / 254) = 6.54) to 3.88, and the kNN
accuracy on the embedding f, the paper's measure, rose from 79 % at random
initialisation to 90 %; the linear probe on h from 81 % to 95 %, the kNN on h
from 81 % to 86 %. Here f classifies better than h by kNN: the loss is computed on
f's cosine similarities, which the kNN uses directly.
"""

after = {"knn_f": knn(f), "knn_h": knn(h)}
after["probe_h"] = linear_probe(encoder, (normalize(x_train), y_train), (normalize(x_test), y_test),
                                epochs=PROBE_EPOCHS, seed=0)["accuracy"]
print(f"\n{'':28s}{'random init':>12s}{'InvaSpread':>12s}")
for key, label in (("knn_f", "kNN on f (embedding)"), ("knn_h", "kNN on h (encoder)"),
                   ("probe_h", "linear probe on h")):
    print(f"{label:28s}{100 * before[key]:11.1f}%{100 * after[key]:11.1f}%")
print(f"\nFrom {EPOCHS} epochs without labels: kNN on f {100 * (after['knn_f'] - before['knn_f']):+.1f} points, "
      f"linear probe on h {100 * (after['probe_h'] - before['probe_h']):+.1f}.")
