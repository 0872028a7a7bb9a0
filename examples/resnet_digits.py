"""
Title: ResNet: deeper plain nets train worse, residual nets do not
Author: keras-paperzoo
Date created: 2026/11/26
Last modified: 2026/11/26
Description: Train 20- and 56-layer nets with and without shortcut connections and watch the training error.
Accelerator: None
"""

"""
## Introduction

He et al. 2016 ("Deep Residual Learning for Image Recognition",
https://arxiv.org/abs/1512.03385) start from an observation they call *degradation*:
stacking more layers on a plain convolutional network makes its **training** error
higher, not lower (Fig. 1 and Fig. 6 left: on CIFAR-10 a 56-layer plain net ends above
a 20-layer one). Overfitting cannot explain that; optimisation can. Their fix is to let
each pair of layers learn a residual F(x) and add the input back, y = F(x) + x
(eq. 1), so that a deeper net can always fall back to the shallower one. With these
shortcuts the deeper net trains better (Fig. 6 middle) and tests better: ResNet-20 /
56 / 110 reach 8.75 / 6.97 / 6.43 % test error on CIFAR-10 (Table 6).

This example trains the paper's CIFAR-10 nets (3x3 convolutions, three stages of
16 / 32 / 64 filters, batch norm after every convolution, global average pooling),
plain and residual, at depths 20 and 56, on the 1,797 handwritten digits that ship
with scikit-learn, with the paper's optimiser, and prints the training and test error
of each beside its random initialisation, in about 15 minutes on 2 CPU cores.

    KERAS_BACKEND=tensorflow python examples/resnet_digits.py

`PAPERZOO_EXAMPLE_SMOKE=1` shrinks it to a few steps (the test suite runs it so). The
paper's own run is `paperzoo train resnet-cifar --preset resnet56_cifar --epochs 164
--dataset cifar10` (64,000 updates; `applications/resnet_cifar.py` compares the four
nets at a CPU budget).
"""

"""
## Setup
"""

import os

import keras

from keras_paperzoo.data import load_dataset
from keras_paperzoo.data.views import per_channel_statistics
from keras_paperzoo.models import ImageClassifier, ResNetBackbone

SMOKE = os.environ.get("PAPERZOO_EXAMPLE_SMOKE") == "1"
DEPTHS = (20,) if SMOKE else (20, 56)
EPOCHS = 1 if SMOKE else 24
BATCH_SIZE = 128

"""
## The data

1,500 training and 297 test digits, upsampled from 8 x 8 to 16 x 16 with three equal
channels, standardised per channel with the training images' mean and variance, as the
paper does for CIFAR-10. The paper also pads, crops and mirrors its images; a mirrored
digit is often another digit, so this example trains on the images as they are.
"""

x_train, y_train = load_dataset("digits", split="train", image_size=16, color_mode="rgb")
x_test, y_test = load_dataset("digits", split="test", image_size=16, color_mode="rgb")
if SMOKE:
    x_train, y_train = x_train[:256], y_train[:256]
mean, variance = per_channel_statistics(x_train)
x_train = ((x_train - mean) / variance**0.5).astype("float32")
x_test = ((x_test - mean) / variance**0.5).astype("float32")
steps_per_epoch = -(-len(x_train) // BATCH_SIZE)
print(f"{len(x_train)} training and {len(x_test)} test images of shape {x_train.shape[1:]}")

"""
## The nets

`resnet56_cifar` is the paper's 6n + 2 = 56-layer net (n = 9 blocks of two 3x3
convolutions per stage); `plain56_cifar` has the same layers without the shortcuts.
Both have 0.85M parameters: the paper's option A shortcuts (identity, zero-padded
where the width doubles) add none. The smoke run uses one block per stage.

`compile` with no optimizer gives the paper's: SGD with momentum 0.9, weight decay
1e-4, learning rate 0.1, divided by 10 at 50 % and 75 % of the run. The first epoch
runs at 0.01 (`warmup_steps`), the paper's remedy for its deepest net (Sec. 4.2): on a
run this short the 56-layer nets otherwise spend their first epochs recovering from
the jump to 0.1. Every net gets the same schedule.
"""


def build(name):
    keras.utils.set_random_seed(0)  # every net starts from the same seed
    blocks = {"stage_blocks": (1, 1, 1)} if SMOKE else {}
    backbone = ResNetBackbone.from_preset(name, image_shape=(16, 16, 3), **blocks)
    model = ImageClassifier(backbone, num_classes=10)
    model.compile(steps_per_epoch=steps_per_epoch, epochs=EPOCHS,
                  warmup_steps=0 if SMOKE else steps_per_epoch)
    return model


"""
## Training

Training error is what Fig. 6 plots: the error on the training batches during each
epoch (1 - the running accuracy `fit` logs). Test error is on the 297 held-out digits.
"""

results = {}
for depth in DEPTHS:
    for kind in ("plain", "resnet"):
        name = f"{kind}{depth}_cifar"
        model = build(name)
        _, accuracy_at_init = model.evaluate(x_test, y_test, verbose=0)
        history = model.fit(x_train, y_train, batch_size=BATCH_SIZE, epochs=EPOCHS, verbose=0)
        _, accuracy = model.evaluate(x_test, y_test, verbose=0)
        train_error = [100 * (1 - a) for a in history.history["accuracy"]]
        results[name] = {"parameters": model.count_params(), "test_error_at_init": 100 * (1 - accuracy_at_init),
                         "train_error": train_error, "test_error": 100 * (1 - accuracy)}
        print(f"{name}: training error per epoch " + " ".join(f"{e:.0f}" for e in train_error))

"""
## What it shows

The table gives, per net, its test error at random initialisation (about 90 %, chance
for ten classes), its training error in the last epoch and its test error after
training. In our run (TensorFlow, 2 CPU cores shared with another run, 16 minutes,
2026-11-26) both 20-layer nets fit the training set (0.1 % plain, 0.0 % residual),
while plain-56 ended at 35.9 % training error: the degradation of Fig. 6 (left),
deeper and worse on the training set itself. ResNet-56, the same layers with
shortcuts, ended at 4.7 % (test error 8.4 % against plain-56's 37.0 %): the shortcuts
remove most of the optimisation difficulty that depth brings. It has not yet caught up
with ResNet-20 at 24 epochs; the paper's Fig. 6 (middle) shows the deeper residual net
ahead after thousands of updates, where ours ran 288. Test errors are over 297 images
(one image is 0.34 points).
"""

print(f"\n{'net':16s}{'parameters':>12s}{'random init':>13s}{'train error':>13s}{'test error':>12s}")
for name, r in results.items():
    print(f"{name:16s}{r['parameters']:12,d}{r['test_error_at_init']:12.1f}%{r['train_error'][-1]:12.1f}%"
          f"{r['test_error']:11.1f}%")
if len(DEPTHS) == 2:
    plain = [results[f"plain{d}_cifar"]["train_error"][-1] for d in DEPTHS]
    residual = [results[f"resnet{d}_cifar"]["train_error"][-1] for d in DEPTHS]
    print(f"\nDegradation (plain-56 trains worse than plain-20): {'shown' if plain[1] > plain[0] else 'not shown'} "
          f"({plain[1]:.1f} vs {plain[0]:.1f} %); with shortcuts: ResNet-56 {residual[1]:.1f} vs ResNet-20 "
          f"{residual[0]:.1f} %.")
