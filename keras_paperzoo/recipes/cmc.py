"""`paperzoo train cmc`: Contrastive Multiview Coding on the L and ab views of images, then kNN and linear probe.

`--preset` picks the configuration (`CMC_PRESETS`): `cmc_resnet20_cifar` (default:
two half-width CIFAR ResNet-20s on a CPU budget), `cmc_cifar_resnet18`,
`cmc_resnet50_half` (the paper's ImageNet setting with the authors' `resnet50v1`),
`cmc_tiny` (tests). The images (RGB in [0, 1], normalised by the training set's
per-channel mean and std after the crop and flip) go to the model with their index
(x = {"images", "index"}: each image's row in the two memory banks); the model
turns each crop into its L and ab channels, encodes each with its own network and
contrasts each view's features with the other view's memory bank (NCE, one Z per
direction). `CMC.compile()` gives the authors' SGD: lr 0.03, momentum 0.9, weight
decay 1e-4, x0.1 at 120, 160 and 200 of 240 epochs (the same fractions of this
run). The data, the evaluations and the files are the self-supervised recipes'
(`recipes/self_supervised.py`); `encoder.keras` is the concatenation of both
encoders' pooled features (what the authors' linear probe reads), taking the
normalised RGB images, so `paperzoo export` deploys it as the other encoders.

`--resume` is exact: the banks, both Zs and the optimizer are in the checkpoint,
the batches (and their indices) come from (seed, epoch), and the crops and drawn
negatives from `SeedGenerator`s set by `EpochSeeds`.

CPU-budget choices (named, not the paper's): batch 128 (the authors' ResNet
batch), 30 epochs; the negatives cut to at most half the training images
(`negatives_for`: 4096 are drawn from 1.28M ImageNet rows; from 1,500 digits they
would repeat every row several times per image); `digits` upsampled to 16 x 16 and
cropped to at least half their area.

Colour matters: the embedded `digits` are grayscale, so their ab channels are zero
everywhere and the ab view is a constant image; the two views then share nothing
and CMC has nothing to learn (the default run is a smoke run of the machinery, and
says so: `grey_images_note` is printed and kept in metrics.json's "notes"). Train on
colour images (`--dataset cifar10`, an image folder or a `.npz`) to see it learn;
`examples/cmc_digits.py` colours the digits for this reason.
"""

import numpy as np

from keras_paperzoo.recipes.self_supervised import memory_bank_overrides, negatives_for, Pretraining, pretrain

DEFAULT_PRESET = "cmc_resnet20_cifar"
PAPER = ("CMC (Tian et al. 2019, ECCV 2020) ImageNet linear top-1: ResNet-50 per view 66.2 %, ResNet-50 x2 per view "
         "70.6 % (ECCV version); ImageNet-100, two half-width ResNet-50s, softmax, 4096 negatives: 75.8 % (authors' "
         "README)")
DEFAULT_EPOCHS = 30


def pretraining():
    """What this recipe adds to the self-supervised run (`recipes/self_supervised.py`)."""
    from keras_paperzoo.models.cmc import CMC, CMC_PRESETS

    def describe(cmc):
        return {"num_negatives": cmc.num_negatives, "num_data": cmc.num_data, "temperature": cmc.temperature,
                "feature_dim": cmc.feature_dim, "loss_type": cmc.objective}

    return Pretraining("cmc", CMC, CMC_PRESETS, DEFAULT_PRESET, PAPER, default_epochs=DEFAULT_EPOCHS,
                       overrides=memory_bank_overrides(CMC_PRESETS), describe=describe, indexed=True,
                       notes=grey_images_note)


def grey_images_note(images):
    """[a note] when every pixel has R = G = B (within 1/255): their ab view is a constant image."""
    images = np.asarray(images[:1024], dtype="float32")  # (n, H, W, 3) in [0, 1]
    if images.shape[-1] != 3 or np.max(np.abs(np.diff(images, axis=-1))) > 1 / 255:  # not RGB: CMC says so
        return []
    return ["the training images are grey (R = G = B), so CMC's ab view is a constant image and the two views share "
            "nothing to learn: this run only exercises the machinery; train on colour images (--dataset cifar10, "
            "a folder of images or a .npz) to see CMC learn"]


def run(args, extra_callbacks=()):
    return pretrain(args, pretraining(), extra_callbacks)
