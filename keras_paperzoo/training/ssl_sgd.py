"""The SGD recipe of InstDisc and MoCo: momentum 0.9, weight decay 1e-4, lr 0.03 x B / 256, 200 epochs.

InstDisc (Wu et al. 2018, Sec. 4.2; the authors' `main.py`: `--lr 0.03 --momentum 0.9
--wd 1e-4`, lr x0.1 at epoch 120 and x0.01 from epoch 160, 200 epochs, batch 256)
set it; MoCo v1 (He et al. 2020, Sec. 4) kept it, and MoCo v2 (Chen et al. 2020)
replaced the steps by a cosine decay to 0. The weight decay is coupled (added to the
gradient, as PyTorch's `SGD(weight_decay=)`). The drops sit at the same fractions
(120/200, 160/200) of a run of `steps_per_epoch` x `epochs` updates; without those,
200 epochs of ImageNet at the batch size. Both papers decay per epoch; this decays
per update.

Example:

```python
optimizer = contrastive_sgd(batch_size=128, steps_per_epoch=390, epochs=200)   # lr 0.015, x0.1 at 120, 160
```
"""

import numbers

from keras_paperzoo.training.optimizers import ScheduledMomentumSGD
from keras_paperzoo.training.schedules import StepDecay, WarmupCosineDecay

IMAGENET_IMAGES = 1_281_167
SCHEDULES = ("step", "cosine")
DROPS = (120, 160)  # of 200 epochs
DEFAULT_EPOCHS = 200


def contrastive_sgd(batch_size=256, steps_per_epoch=None, epochs=None, learning_rate=None, schedule="step",
                    weight_decay=1e-4, base_learning_rate=0.03):
    """SGD with momentum 0.9 and coupled weight decay over InstDisc's step schedule or MoCo v2's cosine.

    Args:
        batch_size: B (int >= 1); the rate is `base_learning_rate` x B / 256.
        steps_per_epoch, epochs: the run's length; without them 200 ImageNet epochs.
        learning_rate: a rate that replaces the scaled one.
        schedule: "step" (x0.1 at 120/200 and 160/200 of the run) or "cosine"
            (to 0, no warmup).
        weight_decay: the coupled L2 factor (1e-4).
        base_learning_rate: the rate at batch 256 (0.03).
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or batch_size < 1:
        raise ValueError(f"batch_size must be an int >= 1; got {batch_size!r}.")
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be 'step' or 'cosine'; got {schedule!r}.")
    learning_rate = base_learning_rate * batch_size / 256 if learning_rate is None else float(learning_rate)
    steps_per_epoch = steps_per_epoch or max(1, IMAGENET_IMAGES // batch_size)
    total = int(steps_per_epoch) * int(epochs or DEFAULT_EPOCHS)
    if schedule == "step":
        boundaries = sorted({max(1, round(total * drop / DEFAULT_EPOCHS)) for drop in DROPS})
        rate = StepDecay(learning_rate, boundaries=boundaries, factor=0.1)
    else:
        rate = WarmupCosineDecay(learning_rate, warmup_steps=0, total_steps=total)
    return ScheduledMomentumSGD(rate, momentum=0.9, l2=weight_decay)
