"""Training machinery shared by every trainer: the multi-optimizer step, EMA
updates, schedules and optimizers."""

from keras_paperzoo.training.ema import ema_update
from keras_paperzoo.training.lars import LARS
from keras_paperzoo.training.layerwise_decay import ScaledSchedule, layerwise_decay_optimizer, learning_rate_of
from keras_paperzoo.training.optimizer_group import OptimizerGroup
from keras_paperzoo.training.optimizers import ScheduledMomentumSGD
from keras_paperzoo.training.schedules import (
    ExponentialDecayWithFloor,
    LinearRamp,
    NoamSchedule,
    StepDecay,
    WarmupCosineDecay,
    WarmupLinearDecay,
)
from keras_paperzoo.training.selective_decay import SelectiveDecayAdamW
from keras_paperzoo.training.shuffle_bn import batch_sharded, grouped_call
from keras_paperzoo.training.step import MultiOptimizerTrainer, apply_gradient_update, apply_simultaneous_updates
