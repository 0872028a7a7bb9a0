"""`paperzoo train byol`: BYOL self-supervised pre-training, then kNN and linear probe.

`--preset` picks the configuration (`BYOL_PRESETS`): `byol_resnet20_cifar`
(default: CIFAR ResNet-20, projector and predictor 256-64, tau_base 0.99),
`byol_cifar_resnet18` (lightly's CIFAR-10 benchmark backbone with the paper's
4096-256 heads and tau_base 0.996), `byol_resnet50` (the paper's), `byol_tiny`
(tests). The images go to the model raw; it draws BYOL's two asymmetric views
(blur 1.0 / 0.1 on images of at least 96 pixels, solarisation 0 / 0.2), the online
network predicts the target network's projection of the other view, and the
target follows the online network with tau rising from tau_base to 1 on a cosine
over the run. `BYOL.compile()` gives the paper's optimizer for this run: LARS, lr
0.2 x B / 256, weight decay 1.5e-6, linear warmup (10 epochs, or the first tenth
of a shorter run) then cosine. The metric `output_std` (the spread of the
normalised projections across the batch) falls toward 0 if the representation
collapses. The data, evaluations (kNN every epoch and at initialisation, linear
probe before and after) and files are the self-supervised recipes'
(`recipes/self_supervised.py`); `encoder.keras` is the online encoder, the one
BYOL evaluates.

CPU-budget choices (named, not the paper's): batch 128 (the paper: 4096), 30
epochs of `digits` (330 updates; the paper: 1000 epochs), tau_base 0.99 in the
small presets (a few hundred updates barely move a target at 0.996); `digits`
upsampled to 16 x 16 and cropped to at least half their area.
"""

from keras_paperzoo.recipes.self_supervised import Pretraining, pretrain

DEFAULT_PRESET = "byol_resnet20_cifar"
PAPER = ("BYOL (Grill et al. 2020), ImageNet ResNet-50, 1000 epochs: linear 74.3 %; lightly's CIFAR-10 "
         "benchmark, ResNet-18, 200 epochs, batch 512: kNN 86.8 %")


def _describe(byol):
    return {"tau_base": byol.tau_base, "momentum_schedule": byol.momentum_schedule,
            "projection_dims": list(byol.projection_dims),
            "prediction_dims": None if byol.prediction_dims is None else list(byol.prediction_dims)}


def pretraining():
    """What this recipe adds to the self-supervised run (`recipes/self_supervised.py`)."""
    from keras_paperzoo.models.byol import BYOL, BYOL_PRESETS

    return Pretraining("byol", BYOL, BYOL_PRESETS, DEFAULT_PRESET, PAPER, describe=_describe)


def run(args, extra_callbacks=()):
    return pretrain(args, pretraining(), extra_callbacks)
