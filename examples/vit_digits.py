"""
Title: ViT: a Vision Transformer trails a ResNet of the same size on little data
Author: keras-paperzoo
Date created: 2026/11/26
Last modified: 2026/11/26
Description: A ViT and a ResNet of the same size on 1,500 digits; the ViT learns where its patches are.
Accelerator: None
"""

"""
## Introduction

Dosovitskiy et al. 2021 ("An Image is Worth 16x16 Words: Transformers for Image
Recognition at Scale", https://arxiv.org/abs/2010.11929) cut an image into P x P patches,
project each to a vector, add a learned position embedding, and feed the sequence to a
plain Transformer encoder; the state of an extra [class] token classifies the image. No
convolution anywhere. Pre-trained on 14M to 300M images, ViT-H/14 reaches 88.55 % on
ImageNet, above the best ResNets, for less compute (Table 2).

The paper is just as clear on the other side (Sec. 1, 3.1 and 4.3): a ViT has much less
image-specific *inductive bias* than a CNN. Only its MLPs are local and translation
equivariant; self-attention is global, and "the position embeddings at initialization
time carry no information about the 2D positions of the patches and all spatial
relations between the patches have to be learned from scratch". So, trained on
mid-sized data (ImageNet alone), ViTs "yield modest accuracies of a few percentage
points below ResNets of comparable size" (Fig. 3 and 4): "large scale training trumps
inductive bias", but only at scale.

This example shows both halves of that sentence on the 1,797 digits that ship with
scikit-learn, in about 11 minutes on 2 CPU cores:

1. a ViT and a ResNet of the same size (0.26M and 0.27M parameters), each trained with
   its paper's recipe for the same number of epochs, beside their random
   initialisation: both fit the 1,500 training digits, and the ViT generalises worse;
2. the ViT's position embeddings, random at the start, learn the 2-D layout of the
   patches from the labels alone: neighbouring patches end with similar embeddings
   (the paper's Fig. 7, centre).

    KERAS_BACKEND=tensorflow python examples/vit_digits.py

`PAPERZOO_EXAMPLE_SMOKE=1` shrinks it to a few steps (the test suite runs it so). The
paper's ImageNet-from-scratch run (Table 3: AdamW, lr 3e-3, weight decay 0.3, 300
epochs at batch 4096), where Fig. 3 finds ViT below the ResNets, is `paperzoo train vit
--preset vit_b16 --dataset imagenet2012 --image-size 224 --batch-size 4096 --epochs 300`;
`applications/vit_cifar.py` compares a small ViT with the ResNets on CIFAR-10.
"""

"""
## Setup
"""

import os

import numpy as np

import keras

from keras_paperzoo.callbacks import image_grid, save_png
from keras_paperzoo.data import load_dataset
from keras_paperzoo.data.views import per_channel_statistics
from keras_paperzoo.models import ImageClassifier, ResNetBackbone, ViTBackbone

SMOKE = os.environ.get("PAPERZOO_EXAMPLE_SMOKE") == "1"
EPOCHS = 1 if SMOKE else 20
BATCH_SIZE = 128

"""
## The data

1,500 training and 297 test digits, upsampled from 8 x 8 to 16 x 16 with three equal
channels and standardised per channel, exactly as in `examples/resnet_digits.py`; no
augmentation, for either net.
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
## Two nets of the same size

**The ViT.** The paper's patches are 16 x 16 pixels of a 224 x 224 image, a 14 x 14 grid.
A 16 x 16 digit gets patches of 2 x 2 (one pixel of the original 8 x 8 digit), an 8 x 8
grid of 64 tokens plus the class token. Width D = 64, 4 heads, MLP 256 (4D, as Table 1)
and 5 pre-norm blocks make 0.26M parameters: a ViT-Ti/16 (`vit_ti16`, 5.7M) shrunk to
the size of the ResNet below. The position embeddings are the paper's default: a learned
1-D table, one vector per token, initialised at random. Dropout is 0 (the paper uses 0.1
on ImageNet), as the ResNet has none: neither net gets regularisation beyond its
optimiser's weight decay.

**The ResNet.** `resnet20_cifar`, the ResNet paper's 20-layer CIFAR net (0.27M
parameters): 3 x 3 convolutions, local and shared over positions, which is the
inductive bias the ViT lacks.

`ImageClassifier.compile()` gives each its paper's recipe, sized to this run: for the
ViT, Table 3's training from scratch (AdamW, beta_2 0.999, lr 3e-3, weight decay 0.3,
linear warm-up over the first 10 % of the updates then cosine decay, gradient clipping
at global norm 1, a zero-initialised head); for the ResNet, He et al.'s SGD (momentum
0.9, lr 0.1 divided by 10 at 50 % and 75 % of the run, weight decay 1e-4). The smoke run
uses one block of each.
"""

VIT = {"patch_size": 2, "num_layers": 1 if SMOKE else 5, "hidden_dim": 64, "num_heads": 4, "mlp_dim": 256,
       "dropout_rate": 0.0}


def build(name):
    keras.utils.set_random_seed(0)  # each net starts from the same seed
    if name == "ViT":
        backbone = ViTBackbone(image_shape=(16, 16, 3), **VIT)
    else:
        blocks = {"stage_blocks": (1, 1, 1)} if SMOKE else {}
        backbone = ResNetBackbone.from_preset("resnet20_cifar", image_shape=(16, 16, 3), **blocks)
    model = ImageClassifier(backbone, num_classes=10)
    model.compile(steps_per_epoch=steps_per_epoch, epochs=EPOCHS)
    return model


"""
## What the position embeddings know

The ViT is told nothing about where a patch sits in the image: token 10 and token 11
are neighbours only because the patches were cut in raster order. Fig. 7 (centre) shows
what a trained ViT-L/32 makes of its table: the cosine similarity of each patch's
embedding with every other patch's is high near the patch itself, and higher along its
row and column. `similarity_picture` draws the same thing, one 8 x 8 map per patch, in
raster order (red: similarity 1, black: 0, blue: -1), and `neighbour_similarity` sums
it up in two numbers: the mean similarity of horizontally or vertically adjacent
patches, and of patches at least 4 patches apart.
"""

grid = 16 // VIT["patch_size"]  # 8 patches a side
rows, columns = np.divmod(np.arange(grid * grid), grid)
distance = np.hypot(rows[:, None] - rows[None, :], columns[:, None] - columns[None, :])  # in patches


def position_similarity(backbone):
    table = keras.ops.convert_to_numpy(backbone.position_layer.embeddings)[backbone.num_prefix_tokens:]  # (64, D)
    table = table / np.linalg.norm(table, axis=1, keepdims=True)
    return table @ table.T  # (64, 64) cosine similarities


def neighbour_similarity(backbone):
    similarity = position_similarity(backbone)
    return float(similarity[distance == 1].mean()), float(similarity[distance >= 4].mean())


def similarity_picture(backbone, path):
    similarity = position_similarity(backbone).reshape(grid * grid, grid, grid)  # one map per patch
    red, blue = np.maximum(similarity, 0), np.maximum(-similarity, 0)
    maps = np.stack([red, np.zeros_like(red), blue], axis=-1)  # +1 red, 0 black, -1 blue
    save_png(image_grid(maps, columns=grid, gap=1), path, scale=6)  # white lines between the maps


"""
## Training

Each net is evaluated on the test digits at its random initialisation (about 10 %,
chance for ten classes), trained, and evaluated again. Training accuracy is `fit`'s
running accuracy over each epoch.
"""

results = {}
for name in ("ViT", "ResNet-20"):
    model = build(name)
    _, accuracy_at_init = model.evaluate(x_test, y_test, batch_size=len(x_test), verbose=0)
    if name == "ViT":
        position_at_init = neighbour_similarity(model.backbone)
        similarity_picture(model.backbone, "vit_digits_positions_before.png")
    history = model.fit(x_train, y_train, batch_size=BATCH_SIZE, epochs=EPOCHS, verbose=0)
    _, accuracy = model.evaluate(x_test, y_test, batch_size=len(x_test), verbose=0)
    results[name] = {"parameters": model.count_params(), "at_init": 100 * accuracy_at_init,
                     "train": [100 * a for a in history.history["accuracy"]], "test": 100 * accuracy}
    print(f"{name}: training accuracy per epoch " + " ".join(f"{a:.0f}" for a in results[name]["train"]))
    if name == "ViT":
        position = neighbour_similarity(model.backbone)
        similarity_picture(model.backbone, "vit_digits_positions_after.png")

"""
## What it shows

The table gives each net's test accuracy at random initialisation (chance, about 10 %:
the ViT's zero-initialised head gives every class the same score), its training
accuracy in the last epoch and its test accuracy after training. In our run
(TensorFlow, 2 CPU cores shared with other jobs, 11 minutes wall, 7 minutes of CPU
time, 2026-11-26) both nets fit the training digits (ViT 99.1 %, ResNet-20 100 %), and
the ViT classified 96.0 % of the test digits against the ResNet's 99.0 %: 9 more
mistakes out of 297, about 2.3 standard errors of the difference. That is the paper's
Sec. 4.3 in miniature: with the same parameter budget and data too small to learn
locality from, the net that has it built in generalises better. The ViT also learns
more slowly: 94 % training accuracy took it 11 epochs, the ResNet 3.

The last two lines are Fig. 7 (centre). At initialisation every position embedding is
an independent random vector, so adjacent patches are no more alike than distant ones
(cosine about 0). After training on labels alone, adjacent patches' embeddings had a
mean cosine similarity of 0.27, and patches 4 or more apart still about 0:
`vit_digits_positions_after.png` shows a blob of red around each patch's own place in
its map. The ViT learned the 2-D neighbourhood of its patches, which the ResNet's 3 x 3
kernels are given, and which the paper says a ViT must learn from data. The maps are
noisier than the paper's, whose ViT-L/32 saw 300M images; here the patches at the
border, nearly always blank, probably teach their embeddings little.
"""

print(f"\n{'net':12s}{'parameters':>12s}{'random init':>13s}{'train accuracy':>16s}{'test accuracy':>15s}")
for name, r in results.items():
    print(f"{name:12s}{r['parameters']:12,d}{r['at_init']:12.1f}%{r['train'][-1]:15.1f}%{r['test']:14.1f}%")
gap = results["ResNet-20"]["test"] - results["ViT"]["test"]
print(f"\nTest accuracy, ResNet-20 minus ViT: {gap:+.1f} points (one test image is {100 / len(x_test):.2f} points).")
print(f"\nViT position embeddings, mean cosine similarity     {'random init':>12s}{'trained':>9s}")
print(f"{'  of adjacent patches':50s}{position_at_init[0]:12.2f}{position[0]:9.2f}")
print(f"{'  of patches 4 or more apart':50s}{position_at_init[1]:12.2f}{position[1]:9.2f}")
print("wrote vit_digits_positions_before.png and vit_digits_positions_after.png (one 8 x 8 similarity map per patch)")
