"""`paperzoo train moco`: MoCo v1 / v2 self-supervised pre-training, then the papers' evaluations.

`--preset` picks the configuration (`MOCO_PRESETS`): `moco_v2_resnet20_cifar`
(default) or `moco_v1_resnet20_cifar` on a CPU budget, `moco_cifar_resnet18`
(the MoCo authors' CIFAR-10 demo), `moco_v1_resnet50` / `moco_v2_resnet50` (the
papers'). The images (in [0, 1], normalised by the training set's per-channel
mean and std after augmentation) go to the model raw; it draws the two views
with the version's augmentation. Labels are used only to evaluate:

- kNN accuracy (InstDisc protocol: k = 200, cosine, exp(s / 0.1) votes) of the
  backbone's pooled features, every epoch (`knn_acc`) and at initialisation;
- linear-probe accuracy on the frozen features (SGD lr 30, momentum 0.9, no
  weight decay, 100 epochs, /10 at 60 and 80).

The data, the evaluations and the files (`model.keras`, `encoder.keras`,
`metrics.json`) are the self-supervised recipes' (`recipes/self_supervised.py`).

CPU-budget choices (named, not the paper's): batch 128 instead of 256; the queue
is cut to a multiple of the batch at most half the training set (65536 or 4096
keys would hold every image many times over on small data); batch-norm groups
of at least 8 images (8 groups when the batch allows, the paper's 8 GPUs); `digits` upsampled to 16x16 and cropped to at
least half their area (a 20 % crop of an 8x8 digit is a few pixels); the CPU
presets' m = 0.99 (see `moco_presets.py`); learning rate 0.06 x batch / 256,
twice the papers' rule, for runs of a few hundred updates. Measured on `digits`
(JAX, 30 epochs of 11 updates, m = 0.99, crops >= 0.5): kNN accuracy 0.86 at
the doubled rate, 0.835 at the papers' rate; 0.83 for the untrained encoder.
"""

from keras_paperzoo.recipes.self_supervised import Pretraining, pretrain

DEFAULT_PRESET = "moco_v2_resnet20_cifar"
PAPER = (
    "MoCo authors' CIFAR-10 demo, ResNet-18, 200 epochs: kNN 82.6 %; MoCo v2 ImageNet "
    "ResNet-50, 200 epochs: linear 67.5 % (Chen et al. 2020)"
)
DEFAULT_EPOCHS = 30


def shuffle_bn_splits_for(batch_size):
    """The paper's 8 batch-norm groups, fewer when the batch would give groups of under 8 images."""
    return next(s for s in (8, 4, 2, 1) if batch_size % s == 0 and batch_size // s >= 8 or s == 1)


def queue_size_for(preset_size, batch_size, num_images):
    """The preset's K, cut to a multiple of the batch size of at most half the images."""
    batches = max(1, min(preset_size, num_images // 2) // batch_size)
    return batches * batch_size


def pretraining():
    """What this recipe adds to the self-supervised run (`recipes/self_supervised.py`)."""
    from keras_paperzoo.models.moco import MOCO_PRESETS, MoCo

    def overrides(preset, batch_size, num_images):
        queue_size = queue_size_for(MOCO_PRESETS[preset]["arguments"]["queue_size"], batch_size, num_images)
        return {"queue_size": queue_size, "shuffle_bn_splits": shuffle_bn_splits_for(batch_size)}

    def describe(moco):
        return {"version": moco.version, "queue_size": moco.queue_size, "shuffle_bn_splits": moco.shuffle_bn_splits}

    return Pretraining(
        "moco", MoCo, MOCO_PRESETS, DEFAULT_PRESET, PAPER, default_epochs=DEFAULT_EPOCHS, overrides=overrides,
        compile_arguments=lambda batch_size: {"learning_rate": 0.06 * batch_size / 256}, describe=describe,
    )


def run(args, extra_callbacks=()):
    return pretrain(args, pretraining(), extra_callbacks)
