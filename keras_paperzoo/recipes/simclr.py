"""`paperzoo train simclr`: SimCLR v1 / v2 self-supervised pre-training, then kNN and linear probe.

`--preset` picks the configuration (`SIMCLR_PRESETS`): `simclr_resnet20_cifar`
(default: the CIFAR ResNet-20 with the paper's CIFAR-10 settings of Appendix B.9,
temperature 0.5, colour strength 0.5, no blur), `simclr_cifar_resnet18`
(lightly's CIFAR-10 benchmark backbone), `simclr_v1_resnet50` / `simclr_v2_resnet50`
(the papers'), `simclr_tiny` (tests). The images go to the model raw; it draws
two views per image and minimises NT-Xent over the 2N views of each batch.
`SimCLR.compile()` gives the paper's optimizer for this run: LARS, lr 0.3 x B /
256, weight decay 1e-6, linear warmup (10 epochs, or the first tenth of a
shorter run) then cosine. The data, the evaluations (kNN every epoch and at
initialisation, linear probe before and after) and the files are the
self-supervised recipes' (`recipes/self_supervised.py`); `encoder.keras` is h,
the representation SimCLR evaluates (before the head).

CPU-budget choices (named, not the paper's): batch 128 (the paper: 256 to 8192;
NT-Xent sees 2 x 128 - 2 = 254 negatives per view), 30 epochs of `digits` (330
updates) against the paper's 100 to 1000 epochs; `digits` upsampled to 16 x 16
and cropped to at least half their area.
"""

from keras_paperzoo.recipes.self_supervised import Pretraining, pretrain

DEFAULT_PRESET = "simclr_resnet20_cifar"
PAPER = ("SimCLR (Chen et al. 2020), CIFAR-10 ResNet-50, 1000 epochs: linear ~91 %; lightly's CIFAR-10 "
         "benchmark, ResNet-18, 200 epochs, batch 512: kNN 84.8 %")


def _describe(simclr):
    return {"version": simclr.version, "temperature": simclr.temperature,
            "projection_dims": list(simclr.projection_dims)}


def pretraining():
    """What this recipe adds to the self-supervised run (`recipes/self_supervised.py`)."""
    from keras_paperzoo.models.simclr import SIMCLR_PRESETS, SimCLR

    return Pretraining("simclr", SimCLR, SIMCLR_PRESETS, DEFAULT_PRESET, PAPER, describe=_describe)


def run(args, extra_callbacks=()):
    return pretrain(args, pretraining(), extra_callbacks)
