"""The Transformer's learning-rate schedule (Vaswani et al. 2017, eq. 3), the "Noam" schedule.

    lrate = d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5)

Linear warmup for `warmup_steps` updates (4000 in the paper), then decay with the inverse
square root of the step. `step` counts from 1 (the optimizer's update count + 1), so the
first update does not get a rate of 0.
"""

import keras
from keras import ops


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
