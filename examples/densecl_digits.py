"""
Title: DenseCL: contrasting local features for dense prediction, on digits placed on a canvas
Author: keras-paperzoo
Date created: 2026/11/26
Last modified: 2026/11/26
Description: Pre-train without labels so that every location of the feature map, not only the image, is discriminative.
Accelerator: None
"""

"""
## Introduction

DenseCL (Wang et al. 2021, "Dense Contrastive Learning for Self-Supervised Visual
Pre-training", https://arxiv.org/abs/2011.09157) starts from an observation: MoCo v2
and its kin are *image-level* instance discrimination, tuned for classification, yet
pre-training is mostly used for *dense* prediction (detection, segmentation), where
each location of the feature map has to say what is there. DenseCL keeps MoCo v2
whole and adds, beside its global head, a **dense head** (1 x 1 convolutions on the
backbone's map, one 128-d vector per location) and a **pixel-level InfoNCE**:

- the positive of location i of view 1 is the location of view 2 whose *backbone*
  feature is most similar (cosine): c_i = argmax_j sim(f_i, f'_j). No geometry of the
  augmentation is needed: the correspondence is found from the features;
- the negatives are pooled dense features of other images, from a second queue;
- the loss is (1 - lambda) L_global + lambda L_dense, lambda = 0.5.

On VOC detection DenseCL gains +2.0 AP over MoCo v2 (58.7 vs 57.0 after 200 ImageNet
epochs), +3.0 mIoU on VOC segmentation, at under 1 % extra cost.

This example builds a dense task small enough for a CPU: two handwritten digits placed
at random on a 24 x 24 canvas, and for every location of the backbone's 6 x 6 map the
question "which digit is here, or none?" (11 classes). It pre-trains DenseCL and MoCo
v2 on the canvases, without labels, at the same budget and from the same initial
weights, then probes every location linearly on the frozen backbone, beside the same
backbone at random initialisation.

    KERAS_BACKEND=tensorflow python examples/densecl_digits.py

`PAPERZOO_EXAMPLE_SMOKE=1` shrinks it to a few steps (the test suite runs it so).
`paperzoo reproduce densecl` runs the comparison over several seeds with two standard
errors; `paperzoo train densecl --preset densecl_resnet50 --dataset imagenet2012
--image-size 224 --batch-size 256 --epochs 200` is the paper's run (8 GPUs).
"""

"""
## Setup
"""

import os
import time

import keras

from keras_paperzoo.data import load_dataset
from keras_paperzoo.data.digit_canvas import BACKGROUND, cell_labels, digit_canvases
from keras_paperzoo.evaluation.dense_probe import dense_linear_probe
from keras_paperzoo.models import DenseCL, MoCo

SMOKE = os.environ.get("PAPERZOO_EXAMPLE_SMOKE") == "1"
CANVAS = 24
BATCH_SIZE = 64
EPOCHS = 1 if SMOKE else 12
PROBE_EPOCHS = 2 if SMOKE else 30
BACKBONE = {"stage_blocks": [1, 1], "stage_filters": [8, 16], "stem_filters": 8} if SMOKE else {}

"""
## The data

The 1,500 training digits of scikit-learn (8 x 8) give 1,024 training canvases, the
297 test digits 256 test canvases: two digits each, anywhere on the canvas without
overlap. Every pixel of a digit's 8 x 8 box has its class, the rest is background;
each location of a stride-4 feature map covers a 4 x 4 cell, labelled by the class
most of its pixels have. Labels are used only by the probe.
"""

digits_train, labels_train = load_dataset("digits", split="train")
digits_test, labels_test = load_dataset("digits", split="test")
x_train, masks_train = digit_canvases(digits_train, labels_train, 128 if SMOKE else 1024, CANVAS, seed=0)
x_test, masks_test = digit_canvases(digits_test, labels_test, 64 if SMOKE else 256, CANVAS, seed=1)
mean, std = x_train.mean(axis=(0, 1, 2)), x_train.std(axis=(0, 1, 2))
print(f"{len(x_train)} training and {len(x_test)} test canvases of shape {x_train.shape[1:]}")

"""
## The two pre-trainings

Both on a CIFAR ResNet-8 (16-32-64 filters, strides 1, 2, 2: a 6 x 6 x 64 map), both
MoCo v2 (MLP head 64-64-128, tau 0.2, queue, momentum encoder, Shuffling BN over 8
groups, aug+), the same initial weights (`set_random_seed(0)` before each), the same
updates. DenseCL adds the dense head (1 x 1 convolutions 64 -> 64 -> 128), the
correspondence, the second queue and lambda = 0.5.

What is shrunk for a CPU, and why: queues of 512 keys (half the canvases; the paper's
65,536 would hold each canvas many times); m = 0.99 (192 updates barely move a key
encoder at 0.999); crops of at least 30 % of the canvas (a 20 % crop is 11 pixels, a
digit and a half) and no blur at 24 x 24; learning rate 0.06 x B / 256, the `moco`
recipe's for short runs.
"""

augmentation = {"crop_scale": (0.3, 1.0), "blur_probability": 0.0, "mean": mean.tolist(), "std": std.tolist()}
common = dict(image_shape=(CANVAS, CANVAS, 3), queue_size=2 * BATCH_SIZE if SMOKE else 512, momentum=0.99,
              projection_hidden_dim=64, augmentation=augmentation, seed=0, **BACKBONE)


def normalize(images):
    return ((images - mean) / std).astype("float32")


def probe(backbone):
    """The dense linear probe of the frozen backbone: every location classified (digit 0-9 or background)."""
    grid = backbone.output_shape[1]
    train = (normalize(x_train), cell_labels(masks_train, grid))
    test = (normalize(x_test), cell_labels(masks_test, grid))
    return dense_linear_probe(backbone, train, test, num_classes=BACKGROUND + 1, epochs=PROBE_EPOCHS,
                              background=BACKGROUND, seed=0)


def pretrain(model):
    model.compile(batch_size=BATCH_SIZE, steps_per_epoch=len(x_train) // BATCH_SIZE, epochs=EPOCHS,
                  learning_rate=0.06 * BATCH_SIZE / 256)
    start = time.perf_counter()
    history = model.fit(x_train, batch_size=BATCH_SIZE, epochs=EPOCHS, verbose=2)
    return history.history, time.perf_counter() - start


keras.utils.set_random_seed(0)
densecl = DenseCL.from_preset("densecl_resnet8_cifar", **common)
results = {"random init": probe(densecl.backbone)}  # the same initial backbone for both
print(f"DenseCL: K = {densecl.queue_size} (two queues), m = {densecl.momentum}, tau = {densecl.temperature}, "
      f"lambda = {densecl.dense_weight}; backbone map {densecl.backbone.output_shape[1:]}")
densecl_history, densecl_seconds = pretrain(densecl)
results["DenseCL"] = probe(densecl.backbone)

keras.utils.set_random_seed(0)
moco = MoCo.from_preset("moco_v2_resnet8_mnist", **common)
moco_history, moco_seconds = pretrain(moco)
results["MoCo v2"] = probe(moco.backbone)

"""
## What they learned

`dense_loss` is the pixel-level InfoNCE (chance: log(1 + K) = 6.24) and
`dense_accuracy` how often a location's matched positive wins against the 512 queued
negatives. The table is the dense probe on the test canvases: accuracy over every
cell, over the cells holding a digit, and the mean IoU over the 11 classes.

Our run (TensorFlow, 2 shared CPU cores at load 6-8, 4.7 minutes in all, 2026-11-27):

| dense probe (test canvases) | random init | DenseCL | MoCo v2 |
|---|---|---|---|
| cell accuracy | 78.0 % | 79.0 % | 78.0 % |
| digit-cell accuracy | 12.2 % | 15.7 % | 13.5 % |
| mIoU | 14.6 % | 16.8 % | 15.8 % |

DenseCL's loss fell from 5.19 to 4.69. Its dense loss ended at 3.22, against a chance
level of 6.24, with 91 % of matched locations winning. MoCo v2's loss rose from 5.58 to
5.94: at 192 updates its instance task has barely started. The paper's ordering shows
(DenseCL above MoCo v2 above random init), but one seed cannot separate the two methods'
1-point gap. `paperzoo reproduce densecl` repeats the comparison with two standard errors
from a paired bootstrap. At its budget (the same one, on 1,024 canvases) DenseCL leads
MoCo v2 by 2.9 mIoU points, with 2 s.e. of 1.2 (applications/results/densecl_digits_results.md).
"""

print(f"\nDenseCL: loss {densecl_history['loss'][0]:.2f} -> {densecl_history['loss'][-1]:.2f} (global "
      f"{densecl_history['global_loss'][-1]:.2f}, dense {densecl_history['dense_loss'][-1]:.2f}; dense accuracy "
      f"{100 * densecl_history['dense_accuracy'][-1]:.1f} %), {densecl_seconds / 60:.1f} min; MoCo v2: loss "
      f"{moco_history['loss'][0]:.2f} -> {moco_history['loss'][-1]:.2f}, {moco_seconds / 60:.1f} min")
print(f"\n{'dense probe (test canvases)':30s}" + "".join(f"{name:>14s}" for name in results))
for key, label in (("accuracy", "cell accuracy"), ("foreground_accuracy", "digit-cell accuracy"), ("miou", "mIoU")):
    print(f"{label:30s}" + "".join(f"{100 * result[key]:13.1f}%" for result in results.values()))
