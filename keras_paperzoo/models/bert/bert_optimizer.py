"""BERT's optimizer: Adam with decoupled weight decay 0.01, linear warmup then linear decay.

Pre-training (Devlin et al. 2019, App. A.2): "Adam with learning rate of 1e-4, beta1 = 0.9,
beta2 = 0.999, L2 weight decay of 0.01, learning rate warmup over the first 10,000 steps,
and linear decay of the learning rate", 1,000,000 steps of 256 sequences. Fine-tuning
(App. A.3): the same optimizer with lr in {5e-5, 3e-5, 2e-5}, batch 16 or 32, 2-4 epochs;
the reference `run_classifier.py` warms up over the first 10 % of the steps.

The reference `AdamWeightDecayOptimizer` decays every weight except LayerNorm parameters
and biases (decoupled, as in AdamW) and uses epsilon 1e-6: `SelectiveDecayAdamW` with
`no_decay="bias_and_norm"` is that rule. The reference `create_optimizer` also clips the
gradients to global norm 1.0 ("This is how the model was pre-trained"), for pre-training
and fine-tuning alike: `global_clipnorm=1.0` here. One difference: the reference optimizer has no
bias correction of the moment estimates; Keras's Adam has (it changes only the first
few hundred updates, which warmup keeps small anyway).
"""

import numbers

from keras_paperzoo.training.schedules import WarmupLinearDecay
from keras_paperzoo.training.selective_decay import SelectiveDecayAdamW

PAPER_PRETRAINING_STEPS = 1_000_000
PAPER_WARMUP_STEPS = 10_000
FINE_TUNING_LEARNING_RATES = (5e-5, 3e-5, 2e-5)


def bert_optimizer(learning_rate, total_steps, warmup_steps, weight_decay=0.01, global_clipnorm=1.0):
    """`SelectiveDecayAdamW` (beta 0.9 / 0.999, epsilon 1e-6, no decay on biases and LayerNorm, gradients clipped
    to global norm 1.0 as the reference code) on `WarmupLinearDecay`."""
    schedule = WarmupLinearDecay(learning_rate, warmup_steps=warmup_steps, total_steps=total_steps)
    return SelectiveDecayAdamW(
        schedule, weight_decay=weight_decay, beta_1=0.9, beta_2=0.999, epsilon=1e-6, no_decay="bias_and_norm",
        global_clipnorm=global_clipnorm,
    )


def pretraining_optimizer(total_steps=PAPER_PRETRAINING_STEPS, learning_rate=1e-4, weight_decay=0.01):
    """The paper's pre-training optimizer; warmup is 1 % of `total_steps` (10,000 of the paper's 1,000,000)."""
    total_steps = _positive_steps(total_steps)
    warmup = round(total_steps * PAPER_WARMUP_STEPS / PAPER_PRETRAINING_STEPS)
    return bert_optimizer(learning_rate, total_steps, warmup, weight_decay)


def fine_tuning_optimizer(total_steps, learning_rate=2e-5, warmup_proportion=0.1, weight_decay=0.01):
    """The paper's fine-tuning optimizer (lr from {5e-5, 3e-5, 2e-5}), warmup over 10 % of the steps."""
    total_steps = _positive_steps(total_steps)
    if not 0.0 <= warmup_proportion <= 1.0:
        raise ValueError(f"warmup_proportion must be in [0, 1]; got {warmup_proportion!r}.")
    return bert_optimizer(learning_rate, total_steps, round(total_steps * warmup_proportion), weight_decay)


def task_optimizer(total_steps=None, learning_rate=2e-5, weight_decay=0.01):
    """The fine-tuning heads' `compile()` default: `fine_tuning_optimizer` over `total_steps`
    (warmup 10 %, linear decay), or without `total_steps` the same Adam at a constant rate."""
    if total_steps is None:
        return SelectiveDecayAdamW(learning_rate, weight_decay=weight_decay, epsilon=1e-6)
    return fine_tuning_optimizer(total_steps, learning_rate, weight_decay=weight_decay)


def _positive_steps(total_steps):
    if isinstance(total_steps, bool) or not isinstance(total_steps, numbers.Integral) or total_steps < 1:
        raise ValueError(f"total_steps must be a positive int (the schedule's length in updates); got {total_steps!r}.")
    return int(total_steps)
