"""
Title: MoCo: momentum contrast with a queue of keys, on handwritten digits
Author: keras-paperzoo
Date created: 2026/11/26
Last modified: 2026/11/26
Description: Learn image features without labels by matching each image's query to its key among a queue of older keys.
Accelerator: None
"""

"""
## Introduction

MoCo (He et al. 2020, "Momentum Contrast for Unsupervised Visual Representation
Learning", https://arxiv.org/abs/1911.05722) casts contrastive learning as looking up a
dictionary: the *query* q of one augmented view of an image should match the *key* k+
of another view of the same image, and no other key in the dictionary. The paper's
claim is that the dictionary should be both **large** and **consistent**, and that two
ideas give it both:

- a **queue**: the keys of the last K images (K = 65,536) are kept, so the negatives
  are many more than a batch, at no cost in gradients (keys get none);
- a **momentum key encoder**: the keys come from a slowly moving average of the query
  encoder, theta_k <- m theta_k + (1 - m) theta_q with m = 0.999, so that keys
  encoded many steps apart are still comparable. With m = 0 (a copy of the query
  encoder) training fails.

With a ResNet-50, MoCo reaches 60.6 % ImageNet linear accuracy; MoCo v2 (Chen et al.
2020, https://arxiv.org/abs/2003.04297) adds SimCLR's MLP head, stronger augmentation
and a cosine schedule, for 67.5 %.

This example pre-trains MoCo v2, queue and momentum encoder included, on the 1,797
handwritten digits that ship with scikit-learn, without labels, in about 9 minutes on 2
CPU cores, and measures what the encoder learned: the k-nearest-neighbour accuracy and
the linear-probe accuracy of its frozen features, beside the same encoder at its random
initialisation.

    KERAS_BACKEND=tensorflow python examples/moco_digits.py

`PAPERZOO_EXAMPLE_SMOKE=1` shrinks it to a few steps (the test suite runs it so). The
papers' runs are `paperzoo train moco --preset moco_v2_resnet50 --dataset imagenet2012
--image-size 224 --batch-size 256 --epochs 200` (8 GPUs in the paper) and, for the
authors' CIFAR-10 demo (kNN 82.6 % after 200 epochs), `paperzoo train moco --preset
moco_cifar_resnet18 --dataset cifar10 --epochs 200`; `applications/moco_cifar.py` runs
the momentum ablation on MNIST.
"""

"""
## Setup
"""

import os

import keras

from keras_paperzoo.data import load_dataset
from keras_paperzoo.evaluation import extract_features, knn_accuracy, linear_probe
from keras_paperzoo.models import MoCo

SMOKE = os.environ.get("PAPERZOO_EXAMPLE_SMOKE") == "1"
PRESET = "moco_tiny" if SMOKE else "moco_v2_resnet20_cifar"  # CIFAR ResNet-20, 0.27M parameters
EPOCHS = 1 if SMOKE else 40
PROBE_EPOCHS = 1 if SMOKE else 100
BATCH_SIZE = 128
keras.utils.set_random_seed(0)

"""
## The data

1,500 training and 297 test digits, 8 x 8 pixels, upsampled to 16 x 16 with three
equal colour channels (MoCo v2's colour jitter and grayscale expect RGB). Labels are
used only to evaluate. The training set is cut to whole batches: the queue is replaced
batch by batch, so every batch must have the same size.
"""

x_train, y_train = load_dataset("digits", split="train", image_size=16, color_mode="rgb")
x_test, y_test = load_dataset("digits", split="test", image_size=16, color_mode="rgb")
x_train = x_train[: 256 if SMOKE else len(x_train) // BATCH_SIZE * BATCH_SIZE]  # whole batches
y_train = y_train[: len(x_train)]
mean, std = x_train.mean(axis=(0, 1, 2)), x_train.std(axis=(0, 1, 2))  # per channel
print(f"{len(x_train)} training images of shape {x_train.shape[1:]}, {len(x_test)} test images")

"""
## The model

`MoCo` builds the query encoder f_q (a ResNet, global average pooling, giving h, and
v2's MLP head, giving q = normalize(head(h))), its momentum copy f_k, and the queue.
Each training step is the paper's Algorithm 1:

1. two random views x_q, x_k of every image (MoCo v2's "aug+": random resized crop,
   colour jitter, grayscale, flip), normalised by the training set's statistics;
2. the momentum update of the key encoder, theta_k <- m theta_k + (1 - m) theta_q;
3. q = f_q(x_q), and k = f_k(x_k) with no gradient, the key batch shuffled across 8
   batch-norm groups and un-shuffled after (Shuffling BN, Sec. 3.3: otherwise batch
   statistics leak which key belongs to which query);
4. InfoNCE (eq. 1): a (1 + K)-way softmax over q . k+ and q against the K queued keys,
   at temperature 0.2, whose target is the positive at index 0;
5. the batch's keys enter the queue and the oldest batch leaves.

What is shrunk for 1,500 digits, and why:

- **K = 640** keys (5 batches) instead of 65,536. The paper's queue holds 5 % of
  ImageNet; a queue of 4,096 would hold every digit more than twice, so an image's own
  older keys would be its negatives. The `moco` recipe cuts it the same way (to a
  multiple of the batch, at most half the images).
- **m = 0.99** instead of 0.999 (the preset's, and the authors' CIFAR demo's): this run
  has 440 updates, after which 0.999^440 = 0.64 of the key encoder would still be its
  random initialisation; 0.99^440 = 0.01.
- batch 128 instead of 256, 8 batch-norm groups of 16 instead of 8 GPUs of 32, and 40
  epochs of 1,408 digits (440 updates) instead of 200 epochs of ImageNet.
- crops keep at least half of a digit (a 20 % crop of an 8 x 8 digit is a stroke),
  and no blur at 16 x 16 (the authors' CIFAR demo has none either).
"""

augmentation = {"crop_scale": (0.5, 1.0), "blur_probability": 0.0, "mean": mean.tolist(), "std": std.tolist()}
QUEUE_SIZE = 256 if SMOKE else 5 * BATCH_SIZE
moco = MoCo.from_preset(PRESET, image_shape=(16, 16, 3), queue_size=QUEUE_SIZE, augmentation=augmentation, seed=0)
encoder = moco.encoder  # normalised images -> h (the representation evaluated downstream; the head is dropped)
print(f"MoCo v{moco.version}: K = {moco.queue_size}, m = {moco.momentum}, tau = {moco.temperature}, "
      f"{moco.shuffle_bn_splits} batch-norm groups; encoder {encoder.count_params():,} parameters")


def normalize(images):
    return ((images - mean) / std).astype("float32")


def evaluate():
    """kNN top-1 (k = 200, cosine, InstDisc's weighted vote) and linear-probe top-1 (MoCo's protocol:
    SGD lr 30, momentum 0.9, no weight decay, 100 epochs) of the frozen encoder's features h."""
    train, test = (normalize(x_train), y_train), (normalize(x_test), y_test)
    features_train, features_test = extract_features(encoder, train)[0], extract_features(encoder, test)[0]
    knn = knn_accuracy(features_train, y_train, features_test, y_test, k=200)
    probe = linear_probe(encoder, train, test, epochs=PROBE_EPOCHS, seed=0)["accuracy"]
    return {"knn": knn, "probe": probe}


"""
Random convolutional features already separate digits well above chance (10 %), so the
untrained encoder is the baseline to beat.
"""

before = evaluate()

"""
## Training

`compile()` with no optimizer gives MoCo v2's: SGD with momentum 0.9, weight decay
1e-4 and cosine decay to 0. The learning rate here is 0.06 x B / 256 = 0.03, twice the
papers' 0.03 x B / 256, as the `moco` recipe sets it for runs of a few hundred updates.
`fit` takes the raw images; `contrastive_accuracy` is how often the positive key has
the largest of the 1 + K logits. (In the first epoch the queue still holds its random
initial vectors, which are easy to tell from a real key: the accuracy drops once they
are replaced, then climbs.)
"""

moco.compile(batch_size=BATCH_SIZE, steps_per_epoch=len(x_train) // BATCH_SIZE, epochs=EPOCHS,
             learning_rate=0.06 * BATCH_SIZE / 256)
history = moco.fit(x_train, batch_size=BATCH_SIZE, epochs=EPOCHS, verbose=2)

"""
## What it learned

The loss against its chance level, then the two accuracies of the frozen encoder h, at
random initialisation and after pre-training. In our run (TensorFlow, 2 CPU cores
shared with other jobs, 8.7 minutes wall, 5.7 minutes of CPU time, 440 updates,
2026-11-26) the InfoNCE loss fell from 5.76 to 4.15 (chance: 6.46) and the positive key
won the (1 + 640)-way look-up 16 % of the time at the end. The linear probe rose from
81.1 % on the random encoder to 96.0 %, and the kNN accuracy from 81.1 % to 86.9 %, both
learned without a single label (one test image is 0.34 points). The random encoder is a
strong baseline: a kNN on its features is 8 times better than chance. The kNN rises
more slowly than the probe: in our 20-epoch run it was still 2 points *below* random
init (79.1 %) while the probe had reached 91.6 %: the classes became linearly separable
before the images of one digit gathered as nearest neighbours. The paper trains 200
epochs of ImageNet (about 1 million updates of batch 256); raise `EPOCHS` to go on.
"""

after = evaluate()
losses, accuracies = history.history["loss"], history.history["contrastive_accuracy"]
print(f"\nInfoNCE loss {losses[0]:.2f} -> {losses[-1]:.2f} (chance: log(1 + K) = "
      f"{float(keras.ops.log(1.0 + moco.queue_size)):.2f}); contrastive accuracy "
      f"{100 * accuracies[0]:.1f} -> {100 * accuracies[-1]:.1f} %")
print(f"\n{'':26s}{'random init':>12s}{'MoCo v2':>10s}")
for key, label in (("knn", "kNN on h (encoder)"), ("probe", "linear probe on h")):
    print(f"{label:26s}{100 * before[key]:11.1f}%{100 * after[key]:9.1f}%")
print(f"\nFrom {EPOCHS} epochs without labels: kNN {100 * (after['knn'] - before['knn']):+.1f} points, "
      f"linear probe {100 * (after['probe'] - before['probe']):+.1f} points over the random encoder "
      f"(one test image is {100 / len(x_test):.2f} points).")
