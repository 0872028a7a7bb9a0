"""CMC's optimizer: the authors' SGD and step schedule (`train_CMC.py`, HobbitLong/CMC)."""

from keras_paperzoo.models.checks import check_int
from keras_paperzoo.training.optimizers import ScheduledMomentumSGD
from keras_paperzoo.training.schedules import StepDecay

# The authors' train_CMC.py: 240 epochs, lr x0.1 after epochs 120, 160 and 200.
PAPER_EPOCHS = 240
DECAY_EPOCHS = (120, 160, 200)


def cmc_optimizer(steps_per_epoch, epochs=None, learning_rate=None, weight_decay=1e-4):
    """The authors' SGD (`train_CMC.py`): lr 0.03, momentum 0.9, coupled weight decay 1e-4, x0.1 after
    epochs 120, 160 and 200 of 240, at the same fractions of a run of `steps_per_epoch` x `epochs` updates.

    The authors set the rate once per epoch and do not scale it with the batch (128
    for their ResNets, 256 for AlexNet); here the drops fall on the update at that
    fraction of the run.
    """
    for name, value in (("steps_per_epoch", steps_per_epoch), ("epochs", epochs or PAPER_EPOCHS)):
        check_int("CMC's optimizer", name, value, named=False)
    learning_rate = 0.03 if learning_rate is None else float(learning_rate)
    total = int(steps_per_epoch) * int(epochs or PAPER_EPOCHS)
    boundaries = sorted({max(1, round(total * e / PAPER_EPOCHS)) for e in DECAY_EPOCHS})
    return ScheduledMomentumSGD(StepDecay(learning_rate, boundaries=boundaries, factor=0.1), momentum=0.9,
                                l2=weight_decay)
