"""
Title: InstDisc: every image its own class, on handwritten digits
Author: keras-paperzoo
Date created: 2026/11/25
Last modified: 2026/11/25
Description: Learn image features without labels by telling each image apart from a memory bank of all the others.
Accelerator: None
"""

"""
## Introduction

InstDisc (Wu et al. 2018, "Unsupervised Feature Learning via Non-Parametric Instance
Discrimination", https://arxiv.org/abs/1805.01978) starts from an observation about
supervised classifiers: an image of a leopard scores high for jaguar and cheetah and
low for bookcase, so a classifier learns which images *look* alike although nobody
told it. Push this to the extreme, the paper says: make every image its own class,
and learn a feature that tells each image apart from all the others. Similar images
should then end up close together.

With a million images, a million-way softmax is out of reach. InstDisc keeps a
*memory bank*: one 128-d unit vector per training image, the feature it had the last
time it was seen. Each step compares a batch's fresh features with their own rows
(the positives) and with a few thousand random rows (the noise), trains with
noise-contrastive estimation (NCE), and writes the fresh features back into the bank.
The paper evaluates with a weighted k-nearest-neighbour vote of test images against
the bank (k = 200): 54.0 % linear top-1 on ImageNet with a ResNet-50.

This example trains InstDisc for a few minutes on a CPU on the 1,797 handwritten
digits that ship with scikit-learn and measures what it learned without labels.

    KERAS_BACKEND=jax python examples/instdisc_digits.py

`PAPERZOO_EXAMPLE_SMOKE=1` shrinks it to a few steps (the test suite runs it so).
"""

"""
## Setup
"""

import os

import numpy as np

import keras

from keras_paperzoo.data import load_dataset
from keras_paperzoo.data.indexed import with_index
from keras_paperzoo.evaluation import extract_features, knn_accuracy, linear_probe
from keras_paperzoo.models import InstDisc

SMOKE = os.environ.get("PAPERZOO_EXAMPLE_SMOKE") == "1"
PRESET = "instdisc_tiny" if SMOKE else "instdisc_resnet20_cifar"  # CIFAR ResNet-20, 0.27M parameters
EPOCHS = 1 if SMOKE else 30
PROBE_EPOCHS = 1 if SMOKE else 100
BATCH_SIZE = 128
keras.utils.set_random_seed(0)

"""
## The data, with each image's index

1,500 training and 297 test digits, 8 x 8 pixels, upsampled to 16 x 16 and given
three equal colour channels (the augmentation's colour jitter expects RGB). Labels
are used only to evaluate.

The memory bank has one row per training image, so the model must know which image
is which: `with_index` pairs the images with their positions,
x = {"images": images, "index": 0 .. N-1}. Keras shuffles the two together, so each
image keeps its row.
"""

x_train, y_train = load_dataset("digits", split="train", image_size=16, color_mode="rgb")
x_test, y_test = load_dataset("digits", split="test", image_size=16, color_mode="rgb")
if SMOKE:
    x_train, y_train = x_train[:256], y_train[:256]
mean, std = x_train.mean(axis=(0, 1, 2)), x_train.std(axis=(0, 1, 2))  # per channel
print(f"{len(x_train)} training images of shape {x_train.shape[1:]}, {len(x_test)} test images")

"""
## The model

`InstDisc` wraps the backbone (a ResNet and global average pooling, giving h), a
linear layer to 128 dimensions with L2 normalisation (giving f), and the memory bank
V (one row per training image). One step, as in the paper:

1. one augmented view of each image (random crop, grayscale, colour jitter, flip:
   the same recipe MoCo v1 later reused); there is no second view;
2. f = normalize(W h) for the batch;
3. scores s = v . f / 0.07 against the image's own row v_i (the positive) and 4096
   random rows (the noise; here at most half the training set, 750);
4. a loss that asks each image's score against its own row to stand out from the
   noise scores;
5. the batch's rows move halfway toward the new features: v_i <- normalize(0.5 v_i + 0.5 f_i).

The paper's loss in step 4 is noise-contrastive estimation with a normalising
constant Z estimated once, from the first batch. On a data set this small it
fails: the untrained network maps all digits to nearly the same direction (mean
cosine 0.94), one pass over 1,500 images takes only 12 updates, so the bank fills
with those nearly parallel features before the network has learned to spread them;
every noise row then scores like the positive while Z stays at its first-batch
value, the loss climbs to its maximum and the features collapse onto one direction
(in our run: kNN on f from 79 % to 16 %; the `instdisc` recipe's docstring has the
numbers). On ImageNet the first pass is 5,000 updates. We therefore use the softmax
over the same 1 + m scores (`loss="softmax"`), the objective the authors' later
memory-bank models switched to: it needs no Z.

The augmentation crops at least half of each digit (a 20 % crop of an 8 x 8 digit is
a stroke) and normalises by the training set's per-channel statistics.
"""

augmentation = {"crop_scale": (0.5, 1.0), "mean": mean.tolist(), "std": std.tolist()}
model = InstDisc.from_preset(PRESET, image_shape=(16, 16, 3), num_data=len(x_train), loss="softmax",
                             num_negatives=min(4096, len(x_train) // 2), augmentation=augmentation, seed=0)
encoder = model.encoder  # images (normalised) -> h


def normalize(images):
    return ((images - mean) / std).astype("float32")


def knn_on_f():
    """kNN top-1 of fresh embeddings f (k = 200, the paper's exp(s / 0.07) votes), training set as the bank."""
    train = model.predict(x_train, batch_size=256, verbose=0)  # the trainer on raw images: f
    test = model.predict(x_test, batch_size=256, verbose=0)
    return knn_accuracy(train, y_train, test, y_test, k=min(200, len(x_train)), temperature=0.07)


def knn_on_h():
    """The same kNN on the pooled backbone features h, the representation a downstream task would use."""
    train = extract_features(encoder, (normalize(x_train), None))[0]
    test = extract_features(encoder, (normalize(x_test), None))[0]
    return knn_accuracy(train, y_train, test, y_test, k=min(200, len(x_train)), temperature=0.07)


def probe_on_h():
    return linear_probe(encoder, (normalize(x_train), y_train), (normalize(x_test), y_test),
                        epochs=PROBE_EPOCHS, seed=0)["accuracy"]


"""
Random convolutional features are far from useless (a kNN on them beats chance by a
wide margin), so the untrained network is the baseline to beat, not 10 %. The bank
itself starts as random unit vectors: a kNN against it is chance.
"""

before = {"knn_f": knn_on_f(), "knn_h": knn_on_h(), "bank": model.memory_bank_knn(y_train, x_test, y_test),
          "probe_h": probe_on_h()}

"""
## Training

`compile()` with no optimizer gives the paper's: SGD with momentum 0.9, weight decay
1e-4, learning rate 0.03 x B / 256, divided by 10 at 60 % and 80 % of the run (epochs
120 and 160 of the paper's 200). `softmax_loss` starts high (about 14: during the
first pass the rows already written hold the untrained network's nearly parallel
features, which outscore an image's own row, still random) and falls as the images
become distinguishable; `contrastive_accuracy` is how often an image's own row scores
highest of the 751.
"""

model.compile(batch_size=BATCH_SIZE, steps_per_epoch=-(-len(x_train) // BATCH_SIZE), epochs=EPOCHS)
model.fit(with_index(x_train), batch_size=BATCH_SIZE, epochs=EPOCHS, verbose=2)

"""
## What it learned

The paper's own evaluation is the kNN of test images against the memory bank: each
row is an image's feature from its last visit, so no extra pass over the training set
is needed. Beside it, the kNN on fresh embeddings f and on h, and a linear probe on h
(MoCo's protocol: 100 epochs of SGD on the frozen features).

In our run (TensorFlow, 2 CPU cores shared with other jobs, 5 min) the linear probe
on h rose from 81.5 % on the random encoder to 90.9 %, and the kNN against the bank
went from chance (8 %) to 43 %. The nearest-neighbour numbers on fresh features fell,
though (kNN on h 82 % -> 58 %, on f 79 % -> 51 %): 30 short epochs made the features
linearly more useful but had not yet gathered each digit class into a neighbourhood,
while the untrained network's features, nearly parallel and dominated by the
digit's ink, are a strong kNN baseline. The loss was still falling (14.1 in the first
epoch, 5.3 in the last); the paper trains for 200 epochs.
"""

after = {"knn_f": knn_on_f(), "knn_h": knn_on_h(), "bank": model.memory_bank_knn(y_train, x_test, y_test),
         "probe_h": probe_on_h()}
print(f"\n{'':36s}{'random init':>12s}{'InstDisc':>10s}")
for key, label in (("bank", "kNN against the memory bank"), ("knn_f", "kNN on fresh embeddings f"),
                   ("knn_h", "kNN on h (encoder)"), ("probe_h", "linear probe on h")):
    print(f"{label:36s}{100 * before[key]:11.1f}%{100 * after[key]:9.1f}%")
print(f"\nFrom {EPOCHS} epochs without labels: kNN against the bank {100 * after['bank']:.1f} %, kNN on f "
      f"{100 * (after['knn_f'] - before['knn_f']):+.1f} points, linear probe on h "
      f"{100 * (after['probe_h'] - before['probe_h']):+.1f}.")
