"""`paperzoo train instdisc`: InstDisc pre-training (a memory bank and NCE), then the paper's kNN and a linear probe.

`--preset` picks the configuration (`INSTDISC_PRESETS`):
`instdisc_softmax_resnet20_cifar` (default: the CIFAR ResNet-20 with the softmax
objective, see below), `instdisc_resnet20_cifar` (the same with the paper's NCE),
`instdisc_cifar_resnet18` (the authors' CIFAR-10 script), `instdisc_resnet50` (the
paper's ImageNet setting), `instdisc_tiny` (NCE; tests). The images (RGB in [0, 1], normalised by the training set's
per-channel mean and std after MoCo v1's augmentation, which is InstDisc's) go to the
model with their index (x = {"images", "index"}: each image's memory-bank row, which
the bank is sized to). `InstDisc.compile()` gives the paper's SGD: lr 0.03 x B / 256,
momentum 0.9, weight decay 1e-4, x0.1 at 120 and 160 of 200 epochs (the same
fractions of this run).

Evaluations, when the data has labels (the self-supervised recipes', plus the
paper's own):

- `memory_bank_knn_acc`, every epoch: the paper's weighted kNN (Sec. 3.4) of each
  test image's 128-d embedding f against the memory bank's rows, k = 200, votes
  exp(s / 0.07) (`InstDisc.memory_bank_knn`);
- `knn_acc` (every epoch and at initialisation) and the linear probe of the pooled
  backbone features h, as for the other self-supervised recipes.

`--resume` is exact: the bank, Z, the noise generator and the optimizer are in the
checkpoint, the batches (and their indices) come from (seed, epoch), the views from
`SeedGenerator`s set by `EpochSeeds`. `model.keras` is the trainer (bank included);
`encoder.keras` is h, what `paperzoo export` deploys.

The default objective is the softmax over the 1 + m scores, not the paper's NCE,
because NCE with Z fixed from the first batch collapses on small data: on the
digits (12 updates per pass) the bank fills with the nearly parallel embeddings of
the untrained network before they spread, every noise score nears 1 / tau, and the
loss climbs to its maximum. Measured (TensorFlow, 30 epochs, ResNet-20, m = 750):
the NCE loss went from 8.4 to 5227 = m log(1 + exp(1 / tau) n / (Z m)), the kNN of
the embeddings fell from 78.8 % (random init) to 15.8 % and the linear probe on h
from 81.5 % to 37.0 %; an independent PyTorch version of the step
(benchmarks/torch_reference/instdisc.py) collapsed alike. The softmax over the same
rows (the authors' later memory-bank models, "Softmax-CE loss as in CPC/MoCo") has
no Z and learns (examples/instdisc_digits.py). `--preset instdisc_resnet20_cifar`
runs the paper's NCE.

CPU-budget choices (named, not the paper's): batch 128, 30 epochs; the noise samples
cut to at most half the training images (`negatives_for`: 4096 are drawn from 1.28M
ImageNet rows, 0.3 %; from 1,500 digits they would repeat every row several times per
image); `digits` upsampled to 16 x 16 and cropped to at least half their area.
"""

from keras_paperzoo.recipes.self_supervised import (
    memory_bank_overrides,
    negatives_for,
    Pretraining,
    load_images,
    pretrain,
)

DEFAULT_PRESET = "instdisc_softmax_resnet20_cifar"
PAPER = ("InstDisc (Wu et al. 2018) ImageNet ResNet-50: linear top-1 54.0 % on conv5 (CVPR version, as MoCo's "
         "Table cites it); CIFAR-10 ResNet-18 weighted kNN 80.8 % with the exact non-parametric softmax (Table 1; "
         "NCE with m = 4096 approaches it)")
DEFAULT_EPOCHS = 30


def pretraining():
    """What this recipe adds to the self-supervised run (`recipes/self_supervised.py`)."""
    from keras_paperzoo.models.instdisc import INSTDISC_PRESETS, InstDisc

    def describe(model):
        import keras

        z = None if model.z is None else float(keras.ops.convert_to_numpy(model.z))
        return {"num_data": model.num_data, "num_negatives": model.num_negatives, "temperature": model.temperature,
                "feature_dim": model.feature_dim, "bank_momentum": model.bank_momentum, "proximal": model.proximal,
                "objective": model.objective, "nce_z": z}

    return Pretraining("instdisc", InstDisc, INSTDISC_PRESETS, DEFAULT_PRESET, PAPER, default_epochs=DEFAULT_EPOCHS,
                       overrides=memory_bank_overrides(INSTDISC_PRESETS), describe=describe, indexed=True)


def memory_bank_knn_callback(load_data, name="memory_bank_knn_acc"):
    """A callback logging the paper's kNN against the memory bank (`InstDisc.memory_bank_knn`) every epoch.

    `load_data()` returns (y_train, x_test, y_test): the bank rows' labels in index order and the raw test
    images; it is called when training begins (after `--resume` has restored the run's arguments).
    """
    import keras

    class MemoryBankKNN(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.data = load_data()

        def on_epoch_end(self, epoch, logs=None):
            y_train, x_test, y_test = self.data
            if logs is not None and y_train is not None and y_test is not None:
                logs[name] = self.model.memory_bank_knn(y_train, x_test, y_test)

    return MemoryBankKNN()


def run(args, extra_callbacks=()):
    def load_data():  # the run's data, as `pretrain` loaded it
        _, y_train, x_test, y_test = load_images(args.dataset or "digits", args.image_size)
        return y_train, x_test, y_test

    return pretrain(args, pretraining(), [memory_bank_knn_callback(load_data), *extra_callbacks])
