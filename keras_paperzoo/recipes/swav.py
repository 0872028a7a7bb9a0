"""`paperzoo train swav`: SwAV self-supervised pre-training, then kNN and linear probe.

`--preset` picks the configuration (`SWAV_PRESETS`): `swav_resnet20_cifar`
(default: CIFAR ResNet-20, projector 256-64, 64 prototypes), `swav_cifar_resnet18`
(lightly's CIFAR-10 benchmark backbone with the paper's heads and 3000 prototypes),
`swav_resnet50` / `swav_resnet50_bs256` (the paper's), `swav_tiny` (tests). The
images go to the model raw; it draws SwAV's multi-crop (2 full-size crops + 6
small ones at the 224 : 96 ratio: 16 + 7 pixels on `digits`, 32 + 14 on CIFAR),
computes Sinkhorn codes of the two full-size crops and predicts each from every
other crop. `SwAV.compile()` gives the paper's optimizer for this run: LARS, lr
0.6 x B / 256, cosine to a thousandth of it, weight decay 1e-6; the prototypes are
frozen for the first epoch. The metrics `loss_over_ln_k` and `prediction_entropy`
stay at 1 when the run collapses (the authors' "loss stuck at ln K"). The data,
evaluations (kNN every epoch and at initialisation, linear probe before and
after) and files are the self-supervised recipes' (`recipes/self_supervised.py`);
`encoder.keras` is backbone + pooling at the images' size (what `paperzoo export`
deploys; the backbone inside takes any size).

CPU-budget choices (named, not the paper's): batch 128 (the paper: 4096, or 256
with a queue), 30 epochs of `digits` (the paper: 800 of ImageNet), 64
prototypes (3000 cannot be spread over a batch of 128 without a queue); `digits`
upsampled to 16 x 16, full-size crops of at least half the image (small crops
(0.18, 0.5), SwAV's proportions).
"""

from keras_paperzoo.recipes.common import RecipeError
from keras_paperzoo.recipes.self_supervised import Pretraining, pretrain

DEFAULT_PRESET = "swav_resnet20_cifar"
PAPER = ("SwAV (Caron et al. 2020), ImageNet ResNet-50, 800 epochs, 2 x 224 + 6 x 96 crops: linear 75.3 % "
         "(70.1 % with 2 x 224 only, 400 epochs); lightly's CIFAR-10 benchmark, ResNet-18, 200 epochs, batch 512: "
         "kNN 84.2 %")


def _overrides(preset, batch_size, num_images):
    from keras_paperzoo.models.swav import SWAV_PRESETS

    arguments = SWAV_PRESETS[preset]["arguments"]
    prototypes, queue = arguments.get("num_prototypes", 3000), arguments.get("queue_length", 0)
    if prototypes > queue + batch_size:
        raise RecipeError(f"--preset {preset}'s {prototypes} prototypes are more than a batch of {batch_size} and its "
                          f"queue of {queue} can assign: use --batch-size {prototypes - queue} or more.")
    return {}


def _describe(swav):
    return {"num_prototypes": swav.num_prototypes, "epsilon": swav.epsilon, "temperature": swav.temperature,
            "crop_counts": list(swav.crop_counts), "queue_length": swav.queue_length,
            "projection_dims": list(swav.projection_dims)}


def pretraining():
    """What this recipe adds to the self-supervised run (`recipes/self_supervised.py`)."""
    from keras_paperzoo.models.swav import SWAV_PRESETS, SwAV

    return Pretraining("swav", SwAV, SWAV_PRESETS, DEFAULT_PRESET, PAPER, overrides=_overrides, describe=_describe)


def run(args, extra_callbacks=()):
    return pretrain(args, pretraining(), extra_callbacks)
