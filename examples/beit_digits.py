"""
Title: BEiT: masked image modelling on visual tokens of handwritten digits
Author: keras-paperzoo
Date created: 2026/11/26
Last modified: 2026/11/26
Description: Learn a visual vocabulary with a discrete VAE, then pre-train a ViT by predicting the tokens of masked patches.
Accelerator: None
"""

"""
## Introduction

BERT learns from text by predicting masked words. Images have no words, so BEiT
(Bao et al. 2022, "BERT Pre-Training of Image Transformers") makes some in two stages:

1. A **visual tokenizer**, a discrete VAE (Sec. 2.1.2, 2.4), learns to encode an image
   as a grid of discrete tokens, one per patch, from which its decoder reconstructs the
   image. The paper takes DALL-E's released tokenizer (8,192 tokens); we train our own.
2. **Masked image modelling** (Sec. 2.2): about 40 % of the patches are hidden in
   blocks, their embeddings replaced by a learned [M]; a Vision Transformer with
   relative position bias and LayerScale predicts the visual token of every hidden
   patch (cross-entropy on the masked positions only).

The pre-trained Transformer is then fine-tuned on labels, with the average of its
patch features feeding a linear classifier (Sec. 2.6).

This example runs both stages on the 1,797 8 x 8 digits that ship with scikit-learn,
enlarged to 32 x 32 (a grid of 8 x 8 patches of 4 x 4 pixels), in a few minutes on a
CPU, and compares fine-tuning the pre-trained model with training the same model from
scratch.

    KERAS_BACKEND=jax python examples/beit_digits.py

`PAPERZOO_EXAMPLE_SMOKE=1` shrinks it to a few steps (the test suite runs it so).
"""

"""
## Setup
"""

import os

import numpy as np

import keras

from keras_paperzoo.data import load_dataset
from keras_paperzoo.models.beit import BEiT, BEiTBackbone, BEiTClassifier, VisualTokenizer

SMOKE = os.environ.get("PAPERZOO_EXAMPLE_SMOKE") == "1"
TOKENIZER_EPOCHS = 1 if SMOKE else 20
MIM_EPOCHS = 1 if SMOKE else 40
FINE_TUNING_EPOCHS = 1 if SMOKE else 15
BATCH_SIZE = 64
keras.utils.set_random_seed(0)

x_train, y_train = load_dataset("digits", split="train", image_size=32)  # (1500, 32, 32, 1) in [0, 1]
x_test, y_test = load_dataset("digits", split="test", image_size=32)  # (297, 32, 32, 1)
if SMOKE:
    x_train, y_train = x_train[:128], y_train[:128]
steps_per_epoch = len(x_train) // BATCH_SIZE

"""
## Stage 1: a visual vocabulary

`VisualTokenizer` is a discrete VAE: a convolutional encoder gives, at every patch
position, logits over a codebook of 64 visual tokens (8,192 in the paper); in training a
Gumbel-softmax sample of them (its temperature annealed from 1 to 1/16) goes through the
codebook's embeddings to a convolutional decoder that reconstructs the image. A KL term
pulls the code distribution towards the uniform prior. At inference the tokens are the
argmax: `tokenize(images)` gives an 8 x 8 grid of ids per image. The perplexity of the
ids used in a batch says how much of the codebook is alive: a collapsed codebook
(perplexity near 1) would make the next stage trivial.
"""

tokenizer = VisualTokenizer.from_preset("beit_tokenizer_digits", seed=0)
tokenizer.compile(learning_rate=1e-3, total_steps=TOKENIZER_EPOCHS * steps_per_epoch)  # DALL-E: 1e-4, 1.2M updates
tokenizer.fit(x_train, batch_size=BATCH_SIZE, epochs=TOKENIZER_EPOCHS, verbose=2)
tokenizer_test = tokenizer.evaluate(x_test, batch_size=256, verbose=0, return_dict=True)
tokenizer.save_reconstructions(x_test[:8], "beit_digits_tokenizer.png", scale=4)
tokens = keras.ops.convert_to_numpy(tokenizer.tokenize(x_test[:1]))[0]  # (8, 8) ids
print("visual tokens of the first test digit:\n", tokens)

"""
## Stage 2: masked image modelling

`BEiT` freezes the tokenizer and trains `BEiTBackbone`: blockwise masking hides 24 of
the 64 patches (BEiT's 75 of 196), in blocks of at least 16 patches; the Transformer
sees the rest with [M] in place of the hidden ones, and a linear head predicts the
visual token of each hidden patch. `compile()` gives the paper's AdamW (lr 1.5e-3 x
batch / 2048, warm-up then cosine, weight decay 0.05, gradient clipping at 3); with 40
epochs of 23 updates we raise the peak to 2e-3 (the paper's batch is 2,048).
"""

backbone = BEiTBackbone.from_preset("beit_tiny_digits")
beit = BEiT(backbone, tokenizer, seed=0)
beit.compile(batch_size=BATCH_SIZE, steps_per_epoch=steps_per_epoch, epochs=MIM_EPOCHS,
             base_learning_rate=2e-3 * 2048 / BATCH_SIZE)
mim_loss_at_init = beit.evaluate(x_test, batch_size=256, verbose=0, return_dict=True)
beit.fit(x_train, batch_size=BATCH_SIZE, epochs=MIM_EPOCHS, verbose=2)
mim = beit.evaluate(x_test, batch_size=256, verbose=0, return_dict=True)

"""
## Fine-tuning against training from scratch

`BEiTClassifier` puts a linear layer on the backbone's average-pooled, normalised patch
features and fine-tunes everything with layer-wise learning-rate decay (0.65 for
BEiT-B; deeper layers learn faster). The same classifier on a fresh backbone, trained
with the same optimizer and number of updates, is the baseline.
"""


def fine_tune(backbone):
    classifier = BEiTClassifier(backbone, num_classes=10)
    classifier.compile(batch_size=BATCH_SIZE, steps_per_epoch=steps_per_epoch, epochs=FINE_TUNING_EPOCHS,
                       learning_rate=1e-3 * 1024 / BATCH_SIZE)
    classifier.fit(x_train, y_train, batch_size=BATCH_SIZE, epochs=FINE_TUNING_EPOCHS, verbose=0)
    return classifier.evaluate(x_test, y_test, batch_size=256, verbose=0, return_dict=True)["accuracy"]


fine_tuned = fine_tune(beit.backbone)
keras.utils.set_random_seed(0)
scratch = fine_tune(BEiTBackbone.from_preset("beit_tiny_digits"))

"""
## What it learned

The tokenizer's perplexity is the number of visual tokens in effective use. The MIM
loss starts near ln 64 = 4.16 nats (the head predicts every token about equally) and
falls as the Transformer learns to fill hidden patches in from their context. Two
binomial standard errors on 297 test digits are about 3-5 points of accuracy.

In our run (JAX, 2 CPU cores shared with other jobs at load 6-9, 2026-11-26; 25 min
of wall time, 9 of CPU): the tokenizer reconstructed the test digits from their hard
tokens with a mean squared error of 0.0029 using 23.7 of its 64 tokens (perplexity);
the MIM loss on the masked patches fell from 4.196 to 2.203 nats, predicting 37.5 %
of the hidden tokens (1.1 % at random init); and after 345 updates of fine-tuning the
pre-trained model classified 78.5 % of the test digits, the same model trained from
scratch for as long 28.3 % (+- 5.2). At this budget pre-training on visual tokens
gives the head start the paper reports; the paper's comparison with predicting pixels
instead is in `applications/beit_mnist.py`.
"""

standard_error = 2 * np.sqrt(max(scratch * (1 - scratch), 1e-4) / len(x_test))
print(f"\ntokenizer: test reconstruction MSE {tokenizer_test['reconstruction_loss']:.4f}, "
      f"perplexity {tokenizer_test['perplexity']:.1f} of {tokenizer.vocabulary_size} tokens")
print(f"\n{'':34s}{'random init':>12s}{'trained':>10s}")
print(f"{'MIM loss on masked patches (test)':34s}{mim_loss_at_init['loss']:12.3f}{mim['loss']:10.3f}")
print(f"{'MIM token accuracy (test)':34s}{mim_loss_at_init['mim_accuracy']:12.3f}{mim['mim_accuracy']:10.3f}")
print(f"{'classifier accuracy (test)':34s}{scratch:12.3f}{fine_tuned:10.3f}"
      f"   (+- {standard_error:.3f}: from scratch | fine-tuned after BEiT)")
print("wrote beit_digits_tokenizer.png (test digits above their reconstructions from visual tokens)")
