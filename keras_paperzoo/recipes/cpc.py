"""`paperzoo train cpc`: Contrastive Predictive Coding (v1 / v2) on images, then kNN and linear probe.

`--preset` picks the configuration (the image presets of `CPC_PRESETS`):
`cpc_v1_small` (default: 16 x 16 images cut into a 7 x 7 grid of 4-pixel patches
at stride 2, v1's proportions of 64-pixel patches at stride 32 on 256 pixels; a
two-block pre-activation ResNet without normalisation; a PixelCNN-style context
over the rows; 1 to 5 rows ahead), `cpc_v2_small` (the same grid with v2's layer
norm, four directions, colour dropping), `cpc_v1_cifar` / `cpc_v2_cifar` (32 x 32,
8-pixel patches at stride 4), `cpc_v1_imagenet` / `cpc_v2_imagenet` (the papers'),
`cpc_tiny` (tests). Without `--image-size` the images are resized to the preset's
size (its grid must fit them: another size is refused in one line naming the
rule). The model takes the raw images and draws its own augmentation (a random
crop, a flip, the dataset normalisation; v1's per-patch jitter at 64-pixel
patches, v2's colour dropping). `CPC.compile()` gives the paper's optimizer:
Adam, lr 2e-4.

Logged per epoch: `loss` (InfoNCE), `mi_bound` (log N - loss, N = batch x 49
candidates: the mutual-information bound of the paper, about 0 at
initialisation), `contrastive_accuracy`, and `knn_acc` of the frozen encoder.
The data, the evaluations (kNN every epoch and at initialisation, linear probe
before and after) and the files are the self-supervised recipes'
(`recipes/self_supervised.py`); `encoder.keras` takes normalised images to the
patch encodings mean-pooled over the grid, the representation CPC v1's linear
classifier reads (and what `paperzoo export` deploys).

CPU-budget choices (named, not the paper's): batch 32 (v1: 16 per GPU on 32
GPUs), 10 epochs of `digits` (470 updates; v1 trained for days), the small
two-block encoder at 16 pixels, crops of at least half the digit.
"""

from keras_paperzoo.recipes.self_supervised import Pretraining, pretrain

DEFAULT_PRESET = "cpc_v1_small"
PAPER = ("CPC v1 (van den Oord et al. 2018), ImageNet, ResNet v2 101 (3 stacks): linear 48.7 % top-1; CPC v2 "
         "(Henaff et al. 2019), ResNet-161: 71.5 %; lightning-bolts' CPC v2, CIFAR-10: 84.52 %")


def _describe(cpc):
    return {"grid_size": list(cpc.grid_size), "patch_size": list(cpc.patch_size), "patch_stride": cpc.patch_stride,
            "directions": list(cpc.directions), "prediction_steps": cpc.steps, "context": cpc.context,
            "target_dim": cpc.target_dim, "color_dropping": cpc.color_dropping, "patch_jitter": cpc.patch_jitter}


def _image_size(preset):
    from keras_paperzoo.models.cpc import CPC_PRESETS

    return CPC_PRESETS[preset]["arguments"]["image_shape"][0]


def pretraining():
    """What this recipe adds to the self-supervised run (`recipes/self_supervised.py`)."""
    from keras_paperzoo.models.cpc import CPC, CPC_PRESETS
    from keras_paperzoo.models.cpc.cpc_presets import IMAGE_PRESETS

    presets = {name: CPC_PRESETS[name] for name in IMAGE_PRESETS}  # the sequence presets take no images
    return Pretraining("cpc", CPC, presets, DEFAULT_PRESET, PAPER, default_epochs=10, default_batch_size=32,
                       describe=_describe, image_size=_image_size)


def run(args, extra_callbacks=()):
    return pretrain(args, pretraining(), extra_callbacks)
