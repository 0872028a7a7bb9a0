"""Learning-rate (and momentum) schedules the papers use.

Each is a `keras.optimizers.schedules.LearningRateSchedule`: a function of the
optimizer's update count, serializable with the model.

- `StepDecay`: multiply by `factor` at given updates (AlexNet, VGG, ResNet, MoCo v1).
- `WarmupCosineDecay`: linear warmup then half-cosine decay (ViT, MAE, MoCo v2, BYOL).
- `ExponentialDecayWithFloor`: lr_t = max(lr_0 / decay_factor**t, min) (the GAN
  paper's pylearn2 setting: decay factor 1.000004 per update, floor 1e-6).
- `LinearRamp`: linear change from a start to an end value, then constant (the GAN
  paper's momentum: 0.5 rising to 0.7).
- `NoamSchedule`: the Transformer's eq. (3), linear warmup then inverse square root
  decay, d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5).
"""

import math

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class StepDecay(keras.optimizers.schedules.LearningRateSchedule):
    """`initial_learning_rate * factor ** (number of boundaries passed)`.

    Args:
        initial_learning_rate: float, the learning rate before the first boundary.
        boundaries: increasing list of update counts at which the rate is
            multiplied by `factor`.
        factor: float, the multiplier (0.1 in AlexNet, VGG, ResNet and MoCo v1).

    Example:

    ```python
    # ResNet CIFAR (He et al. 2016, Sec. 4.2): 0.1, /10 at 32k and 48k updates.
    schedule = StepDecay(0.1, boundaries=[32000, 48000], factor=0.1)
    keras.optimizers.SGD(schedule, momentum=0.9)
    ```
    """

    def __init__(self, initial_learning_rate, boundaries, factor=0.1, name="step_decay"):
        boundaries = [int(b) for b in boundaries]
        if any(b <= 0 for b in boundaries) or boundaries != sorted(boundaries):
            raise ValueError(
                f"boundaries must be increasing positive update counts; got {boundaries}."
            )
        if not factor > 0:
            raise ValueError(f"factor must be positive; got {factor}.")
        self.initial_learning_rate = float(initial_learning_rate)
        self.boundaries = boundaries
        self.factor = float(factor)
        self.name = name

    def __call__(self, step):
        step = ops.cast(step, "float32")
        passed = ops.zeros((), "float32")
        for boundary in self.boundaries:
            passed = passed + ops.cast(ops.greater_equal(step, boundary), "float32")
        return self.initial_learning_rate * ops.power(self.factor, passed)

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "boundaries": self.boundaries,
            "factor": self.factor,
            "name": self.name,
        }


class _WarmupThenDecay(keras.optimizers.schedules.LearningRateSchedule):
    """Linear warmup from 0 to `peak_learning_rate`, then `peak * _decay(progress)`.

    `progress` runs from 0 at the end of warmup to 1 at `total_steps` (clipped).
    Subclasses name the decay shape.
    """

    def __init__(self, peak_learning_rate, warmup_steps, total_steps, name):
        if not total_steps > 0 or warmup_steps < 0 or warmup_steps > total_steps:
            raise ValueError(
                f"{type(self).__name__} needs 0 <= warmup_steps <= total_steps and "
                f"total_steps > 0; got warmup_steps={warmup_steps}, total_steps={total_steps}."
            )
        self.peak_learning_rate = float(peak_learning_rate)
        self.warmup_steps = int(warmup_steps)
        self.total_steps = int(total_steps)
        self.name = name

    def _decay(self, progress):
        raise NotImplementedError

    def __call__(self, step):
        step = ops.cast(step, "float32")
        peak = self.peak_learning_rate
        warmup = peak * step / max(self.warmup_steps, 1)
        decay_steps = max(self.total_steps - self.warmup_steps, 1)
        progress = ops.clip((step - self.warmup_steps) / decay_steps, 0.0, 1.0)
        return ops.where(step < self.warmup_steps, warmup, peak * self._decay(progress))

    def get_config(self):
        return {
            "peak_learning_rate": self.peak_learning_rate,
            "warmup_steps": self.warmup_steps,
            "total_steps": self.total_steps,
            "name": self.name,
        }


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class WarmupCosineDecay(_WarmupThenDecay):
    """Linear warmup from 0 to `peak_learning_rate`, then cosine decay to `alpha * peak`.

    Args:
        peak_learning_rate: float, the rate reached at the end of warmup.
        warmup_steps: int, updates of linear warmup (0 for none).
        total_steps: int, updates of the whole run (warmup included).
        alpha: float, the final rate as a fraction of the peak.

    Example:

    ```python
    # MAE pre-training (He et al. 2022, Table 8): 40 warmup epochs of 800.
    schedule = WarmupCosineDecay(1.5e-4 * 4096 / 256, warmup_steps=40 * 312,
                                 total_steps=800 * 312)
    ```
    """

    def __init__(self, peak_learning_rate, warmup_steps, total_steps, alpha=0.0, name="warmup_cosine"):
        super().__init__(peak_learning_rate, warmup_steps, total_steps, name)
        self.alpha = float(alpha)

    def _decay(self, progress):
        cosine = 0.5 * (1.0 + ops.cos(3.141592653589793 * progress))
        return (1.0 - self.alpha) * cosine + self.alpha

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class ExponentialDecayWithFloor(keras.optimizers.schedules.LearningRateSchedule):
    """`max(initial_learning_rate / decay_factor ** step, min_learning_rate)`.

    Args:
        initial_learning_rate: float.
        decay_factor: float > 1, the divisor applied at every update.
        min_learning_rate: float, the floor.

    Example:

    ```python
    # GAN on MNIST (Goodfellow et al. 2014; the authors' pylearn2 setting).
    schedule = ExponentialDecayWithFloor(0.1, decay_factor=1.000004, min_learning_rate=1e-6)
    ```
    """

    def __init__(self, initial_learning_rate, decay_factor, min_learning_rate=0.0, name="exponential_decay_floor"):
        if not decay_factor >= 1.0:
            raise ValueError(f"decay_factor must be >= 1; got {decay_factor}.")
        self.initial_learning_rate = float(initial_learning_rate)
        self.decay_factor = float(decay_factor)
        self.min_learning_rate = float(min_learning_rate)
        self.name = name

    def __call__(self, step):
        step = ops.cast(step, "float32")
        # exp(-step * log(decay_factor)): the power form underflows to the same value.
        rate = self.initial_learning_rate * ops.exp(-step * math.log(self.decay_factor))
        return ops.maximum(rate, self.min_learning_rate)

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_factor": self.decay_factor,
            "min_learning_rate": self.min_learning_rate,
            "name": self.name,
        }


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class LinearRamp(keras.optimizers.schedules.LearningRateSchedule):
    """`start` at update 0, changing linearly to `end` at `ramp_steps`, then constant.

    Example:

    ```python
    # GAN momentum: 0.5 rising to 0.7 by epoch 250 of 500 updates each.
    momentum = LinearRamp(0.5, 0.7, ramp_steps=250 * 500)
    ```
    """

    def __init__(self, start, end, ramp_steps, name="linear_ramp"):
        if ramp_steps <= 0:
            raise ValueError(f"ramp_steps must be positive; got {ramp_steps}.")
        self.start = float(start)
        self.end = float(end)
        self.ramp_steps = int(ramp_steps)
        self.name = name

    def __call__(self, step):
        fraction = ops.clip(ops.cast(step, "float32") / self.ramp_steps, 0.0, 1.0)
        return self.start + (self.end - self.start) * fraction

    def get_config(self):
        return {"start": self.start, "end": self.end, "ramp_steps": self.ramp_steps, "name": self.name}


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class WarmupLinearDecay(_WarmupThenDecay):
    """Linear warmup from 0 to `peak_learning_rate` over `warmup_steps`, then linear decay to 0 at `total_steps`.

    BERT pre-training and fine-tuning (Devlin et al. 2019, App. A.2: "learning rate
    warmup over the first 10,000 steps, and linear decay of the learning rate") and
    GPT-1 fine-tuning (Radford et al. 2018, Sec. 4.1: "a linear learning rate decay
    schedule with warmup over 0.2% of training").

    Example: BERT pre-training, `WarmupLinearDecay(1e-4, warmup_steps=10_000, total_steps=1_000_000)`.
    """

    def __init__(self, peak_learning_rate, warmup_steps, total_steps, name="warmup_linear_decay"):
        super().__init__(peak_learning_rate, warmup_steps, total_steps, name)

    def _decay(self, progress):
        return 1.0 - progress

@keras.saving.register_keras_serializable(package="keras_paperzoo")
class NoamSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """`scale * d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5)` (eq. 3).

    Args:
        d_model: int, the model width (512 base, 1024 big).
        warmup_steps: int, 4000 in the paper.
        scale: float, a multiplier on the whole schedule (1 in the paper; tensor2tensor
            exposes it as `learning_rate`).

    Example:

    ```python
    schedule = NoamSchedule(512)   # peak 7.0e-4 at update 4000
    keras.optimizers.Adam(schedule, beta_1=0.9, beta_2=0.98, epsilon=1e-9)
    ```
    """

    def __init__(self, d_model, warmup_steps=4000, scale=1.0, name="noam"):
        if not isinstance(d_model, int) or d_model < 1:
            raise ValueError(f"NoamSchedule d_model must be a positive int; got {d_model!r}.")
        if not isinstance(warmup_steps, int) or warmup_steps < 1:
            raise ValueError(f"NoamSchedule warmup_steps must be a positive int; got {warmup_steps!r}.")
        if not scale > 0:
            raise ValueError(f"NoamSchedule scale must be positive; got {scale!r}.")
        self.d_model = d_model
        self.warmup_steps = warmup_steps
        self.scale = float(scale)
        self.name = name

    def __call__(self, step):
        step = ops.cast(step, "float32") + 1.0  # the paper's step_num counts from 1
        rate = ops.minimum(ops.power(step, -0.5), step * self.warmup_steps**-1.5)
        return self.scale * self.d_model**-0.5 * rate

    def get_config(self):
        return {"d_model": self.d_model, "warmup_steps": self.warmup_steps, "scale": self.scale, "name": self.name}
