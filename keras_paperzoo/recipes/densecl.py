"""`paperzoo train densecl`: DenseCL self-supervised pre-training, then the evaluations of MoCo's recipe.

`--preset` picks the configuration (`DENSECL_PRESETS`): `densecl_resnet8_cifar`
(default, a CPU budget), `densecl_tiny` (smoke runs) or `densecl_resnet50` (the
paper's). The run is MoCo's (`recipes/moco.py`, through `recipes/self_supervised.py`):
raw images in [0, 1], MoCo v2's augmentation drawn inside the model, normalised by
the training set's statistics; kNN every epoch and a linear probe of the frozen
pooled encoder at the start and the end; `model.keras`, `encoder.keras` (what
`paperzoo export` deploys; `model.backbone` is the dense representation), metrics.json;
exact `--resume`. The dense evaluation that DenseCL is for is the reproduction's
(`paperzoo reproduce densecl`: per-cell digit classes on a canvas, probed linearly).

CPU-budget choices, MoCo's recipe's: batch 128, both queues cut to a multiple of the
batch of at most half the training set, batch-norm groups of at least 8 images,
`digits` at 16 x 16 with crops of at least half their area, m = 0.99 in the CPU
preset, learning rate 0.06 x batch / 256.
"""

from keras_paperzoo.recipes.moco import queue_size_for, shuffle_bn_splits_for
from keras_paperzoo.recipes.self_supervised import Pretraining, pretrain

DEFAULT_PRESET = "densecl_resnet8_cifar"
PAPER = (
    "DenseCL ImageNet ResNet-50, 200 epochs: VOC detection AP 58.7 vs MoCo v2's 57.0 (+2.0 AP over MoCo v2 "
    "in the abstract), VOC segmentation mIoU 69.4 vs 67.5 (Wang et al. 2021)"
)
DEFAULT_EPOCHS = 30


def pretraining():
    """What this recipe adds to the self-supervised run (`recipes/self_supervised.py`)."""
    from keras_paperzoo.models.densecl import DENSECL_PRESETS, DenseCL

    def overrides(preset, batch_size, num_images):
        queue_size = queue_size_for(DENSECL_PRESETS[preset]["arguments"]["queue_size"], batch_size, num_images)
        return {"queue_size": queue_size, "shuffle_bn_splits": shuffle_bn_splits_for(batch_size)}

    def describe(model):
        return {"queue_size": model.queue_size, "dense_weight": model.dense_weight,
                "shuffle_bn_splits": model.shuffle_bn_splits}

    return Pretraining(
        "densecl", DenseCL, DENSECL_PRESETS, DEFAULT_PRESET, PAPER, default_epochs=DEFAULT_EPOCHS,
        overrides=overrides, compile_arguments=lambda batch_size: {"learning_rate": 0.06 * batch_size / 256},
        describe=describe,
    )


def run(args, extra_callbacks=()):
    return pretrain(args, pretraining(), extra_callbacks)
