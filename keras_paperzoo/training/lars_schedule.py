"""The large-batch recipe of SimCLR, BYOL and SwAV: LARS, lr scaled with the batch, warmup, cosine.

SimCLR (Chen et al. 2020, Sec. B.6 and its `run.py`): LARS, lr = 0.3 x B / 256
(`"linear"`; `"sqrt"`: 0.075 x sqrt(B), the paper's rule for small batches and
long runs, App. B.1), 10 warmup epochs, cosine decay, weight decay 1e-6. BYOL
(Grill et al. 2020, App. C): lr = 0.2 x B / 256, 10 warmup epochs, cosine,
weight decay 1.5e-6.
"""

import math

from keras_paperzoo.training.lars import LARS
from keras_paperzoo.training.schedules import WarmupCosineDecay

IMAGENET_IMAGES = 1_281_167
SCALINGS = ("linear", "sqrt")


def run_length(batch_size, steps_per_epoch, epochs, default_epochs):
    """(steps per epoch, total updates): the run's, or `default_epochs` of ImageNet at this batch."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be an int >= 1; got {batch_size!r}.")
    steps_per_epoch = int(steps_per_epoch or max(1, IMAGENET_IMAGES // batch_size))
    return steps_per_epoch, steps_per_epoch * int(epochs or default_epochs)


def lars_warmup_cosine(base_learning_rate, batch_size, steps_per_epoch, epochs, default_epochs,
                       warmup_epochs=10, weight_decay=1e-6, scaling="linear", learning_rate=None, final_rate=0.0):
    """LARS over a linear warmup then cosine decay, the rate scaled with the batch size.

    Args:
        base_learning_rate: the rate at batch 256 ("linear") or the sqrt rule's factor.
        batch_size, steps_per_epoch, epochs: the run; without the last two,
            `default_epochs` of ImageNet.
        warmup_epochs: linear warmup (10 in SimCLR and BYOL); a run shorter than ten
            times that warms up over its first tenth instead (10 of the papers' 100+
            epochs), so that a short run still reaches the peak rate.
        weight_decay: LARS's coupled decay, biases and normalisation excluded.
        scaling: "linear" (base x B / 256) or "sqrt" (base x sqrt(B)).
        learning_rate: a peak rate that replaces the scaled one.
        final_rate: the rate at the end, as a fraction of the peak (SwAV's 0.001).
    """
    if scaling not in SCALINGS:
        raise ValueError(f"scaling must be one of {SCALINGS}; got {scaling!r}.")
    steps_per_epoch, total = run_length(batch_size, steps_per_epoch, epochs, default_epochs)
    if learning_rate is None:
        learning_rate = base_learning_rate * (batch_size / 256 if scaling == "linear" else math.sqrt(batch_size))
    warmup = min(int(warmup_epochs) * steps_per_epoch, total // 10)
    schedule = WarmupCosineDecay(float(learning_rate), warmup_steps=warmup, total_steps=max(total, 1),
                                 alpha=final_rate)
    return LARS(schedule, momentum=0.9, weight_decay=weight_decay)
