"""
Title: CMC: contrastive multiview coding of the L and ab channels of coloured digits
Author: keras-paperzoo
Date created: 2026/11/25
Last modified: 2026/11/25
Description: Learn features without labels by matching each image's luminance to its own chroma channels.
Accelerator: None
"""

"""
## Introduction

Contrastive Multiview Coding (Tian, Krishnan and Isola 2019, "Contrastive Multiview
Coding", https://arxiv.org/abs/1906.05849) learns a representation from several
*views* of the same scene, one encoder per view, by making the views of one scene
agree and the views of different scenes disagree: a contrastive loss that bounds
the mutual information between the views from below. What the views share is kept,
what only one of them sees is, ideally, dropped. On ImageNet the two views are the
channels of one colour image in the Lab colour space: its luminance L and its
chroma ab, each through half of a ResNet-50; a linear classifier on both halves'
features reaches 66.2 % top-1 with a ResNet-50 per view (ECCV version).

This example trains CMC for a few minutes on a CPU on the 1,797 handwritten digits
that ship with scikit-learn, coloured for the occasion, and measures what it learned
without labels: the k-nearest-neighbour accuracy of each view's encoder and of both
together (CMC's representation), against the same encoders at random initialisation.

    KERAS_BACKEND=jax python examples/cmc_digits.py

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
from keras_paperzoo.data.indexed import with_index
from keras_paperzoo.evaluation import extract_features, knn_accuracy, linear_probe
from keras_paperzoo.models import CMC

SMOKE = os.environ.get("PAPERZOO_EXAMPLE_SMOKE") == "1"
PRESET = "cmc_tiny" if SMOKE else "cmc_resnet20_cifar"  # two half-width CIFAR ResNet-20s, one per view
EPOCHS = 1 if SMOKE else 20
PROBE_EPOCHS = 1 if SMOKE else 100
BATCH_SIZE = 128
keras.utils.set_random_seed(0)

"""
## The data: digits in colour

The digits are grayscale, and a gray image has no chroma: its ab channels are zero
everywhere, so the ab view would be a blank image that shares nothing with L, and
CMC would have nothing to learn. So each digit is drawn in a colour of its own (a
random hue, fixed per image) on a black background. Now both views see the stroke:
L as brightness, ab as colour. The hue itself is in the ab view only, a nuisance
that the loss should teach the ab encoder to ignore, since L cannot predict it.

One detail matters: saturated colours differ in brightness (yellow is bright, blue
dark), so with plain RGB hues the L view would carry the hue too, and the views would
share it; CMC keeps what the views share (the subject of the authors' follow-up,
InfoMin, Tian et al. 2020). So every colour here is scaled to the same luminance Y
(in linear RGB, before the sRGB gamma): L then shows the stroke and nothing else.
"""

x_train, y_train = load_dataset("digits", split="train", image_size=16, color_mode="grayscale")
x_test, y_test = load_dataset("digits", split="test", image_size=16, color_mode="grayscale")
if SMOKE:
    x_train, y_train = x_train[:256], y_train[:256]

LUMINANCE = np.array([0.212671, 0.715160, 0.072169])  # Y of linear RGB (sRGB primaries, D65)


def colour(images, seed, luminance=0.07):
    """(N, H, W, 1) intensities in [0, 1] -> (N, H, W, 3) sRGB strokes, one random hue per image, equally bright.

    Y = 0.07 is about the brightest luminance every hue reaches (pure blue's is 0.072).
    """
    hue = np.random.default_rng(seed).random(len(images))[:, None]  # (N, 1)
    rgb = np.clip(np.abs(6 * hue - np.array([[3.0, 2.0, 4.0]])) * np.array([[1, -1, -1]]) + np.array([[-1, 2, 2]]),
                  0, 1)  # (N, 3): the hue's fully saturated colour, sRGB
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    linear *= (luminance / (linear @ LUMINANCE))[:, None]  # every hue at luminance Y
    pixels = images * linear[:, None, None, :]  # (N, H, W, 3) linear RGB; luminance = intensity x Y
    return np.where(pixels <= 0.0031308, 12.92 * pixels,
                    1.055 * np.power(np.maximum(pixels, 0.0031308), 1 / 2.4) - 0.055).astype("float32")


x_train, x_test = colour(x_train, seed=1), colour(x_test, seed=2)
mean, std = x_train.mean(axis=(0, 1, 2)), x_train.std(axis=(0, 1, 2))  # per channel
save_png(image_grid(x_train[:32]), "cmc_digits_coloured.png", scale=4)
print(f"{len(x_train)} training images of shape {x_train.shape[1:]}, {len(x_test)} test images; "
      "wrote cmc_digits_coloured.png")

"""
## The model

`CMC` crops and flips each image (the paper's only augmentation: the views come from
splitting colour channels, not from distortions), converts the crop to Lab, and
sends L to one encoder and ab to the other. Each encoder ends in a linear layer to a
128-d unit vector. Each image has a row in two memory banks, one per view, holding a
running average of its features. A step scores the L features against the *ab* bank
(the image's own row and m rows drawn at random) and the ab features against the L
bank, and trains both directions to pick out their own image with noise-contrastive
estimation (the paper's two-view loss L(V1, V2) + L(V2, V1)). On 1,500 images, m is 750
(the paper draws 4096 of 1.28 million ImageNet rows). The data must say which image
is which, so `fit` gets x = {"images": ..., "index": ...}.
"""

augmentation = {"crop_scale": (0.5, 1.0), "mean": mean.tolist(), "std": std.tolist()}  # crops of >= half a digit
cmc = CMC.from_preset(PRESET, image_shape=(16, 16, 3), num_data=len(x_train), num_negatives=len(x_train) // 2,
                      augmentation=augmentation, seed=0)
encoder = cmc.encoder  # RGB images (normalised) -> [L features | ab features]
width_l = int(cmc.backbone.output_shape[-1])


def normalize(images):
    return ((images - mean) / std).astype("float32")


def evaluate():
    """kNN top-1 (k = 200, cosine, InstDisc's weighted vote) of each view's features and of both; linear probe."""
    train, train_labels = extract_features(encoder, (normalize(x_train), y_train))
    test, test_labels = extract_features(encoder, (normalize(x_test), y_test))
    parts = {"L": slice(0, width_l), "ab": slice(width_l, None), "both": slice(None)}
    scores = {name: knn_accuracy(train[:, part], train_labels, test[:, part], test_labels, k=200)
              for name, part in parts.items()}
    scores["probe"] = linear_probe(encoder, (normalize(x_train), y_train), (normalize(x_test), y_test),
                                   epochs=PROBE_EPOCHS, seed=0)["accuracy"]
    return scores


"""
Random convolutional features already sort digits far better than chance, so the
untrained encoders are the baseline to beat, not 10 %.
"""

before = evaluate()

"""
## Training

`compile()` with no optimizer gives the authors': SGD with momentum 0.9, weight decay
1e-4 and learning rate 0.03, divided by 10 after 120, 160 and 200 of 240 epochs (here
at the same fractions of this run). `l_loss` and `ab_loss` are the two directions;
`contrastive_accuracy` is how often the image's own row scores highest of the 1 + m.
"""

cmc.compile(batch_size=BATCH_SIZE, steps_per_epoch=-(-len(x_train) // BATCH_SIZE), epochs=EPOCHS)
cmc.fit(with_index(x_train), batch_size=BATCH_SIZE, epochs=EPOCHS, verbose=2)

"""
## What it learned

The same numbers after training, per view and for both views together. In our run
(JAX, 2 loaded CPU cores, 20 epochs of 12 updates) CMC did *not* learn to tell the
images apart: the contrastive accuracy stayed at chance (0.1 to 0.6 % against 1 / 751)
and the loss, after a rise, settled at its value at initialisation, 2 (log 751 + 1) =
15.2, the value of embeddings that all point the same way. The linear probe on both
views still gained a few points (74 -> 77 %), while the kNN accuracies fell (L 75 ->
66 %, ab 40 -> 12 %, both 29 -> 25 %; both is below L alone because the ab half, larger
in scale, dominates the cosine).

Why: the pooled features of a random ResNet differ little from digit to digit (across
images they vary by about 7 % of their mean, measured), so every image's embedding
starts near one common direction, and the memory banks, running averages of those
embeddings updated once per epoch, hold nearly the same row for every image. The
objective then sees almost no difference between an image's own row and the others,
and a few hundred updates on 1,500 digits do not get out of that state (an
independent PyTorch CMC, `benchmarks/torch_reference/cmc.py`, did not either in a
shorter check). The paper trains for 240 epochs of 1.28 million ImageNet images;
SimCLR, whose positives are fresh features of the same network, starts learning on
these digits within minutes (its example: linear probe 81 -> 94 %).
"""

after = evaluate()
print(f"\n{'':32s}{'random init':>12s}{'CMC':>8s}")
for key, label in (("L", "kNN on the L encoder"), ("ab", "kNN on the ab encoder"),
                   ("both", "kNN on both (CMC's features)"), ("probe", "linear probe on both")):
    print(f"{label:32s}{100 * before[key]:11.1f}%{100 * after[key]:7.1f}%")
print(f"\nFrom {EPOCHS} epochs without labels: kNN on both views {100 * (after['both'] - before['both']):+.1f} "
      f"points, linear probe {100 * (after['probe'] - before['probe']):+.1f}.")
