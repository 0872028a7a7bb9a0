"""A momentum (EMA) copy of an encoder: MoCo's key encoder, BYOL's target network.

MoCo (He et al. 2020, eq. 2): theta_k <- m theta_k + (1 - m) theta_q, m constant
(0.999). BYOL (Grill et al. 2020, Sec. 3.2 and App. A): xi <- tau xi + (1 - tau)
theta with tau_k = 1 - (1 - tau_base) (cos(pi k / K) + 1) / 2, k the training step
and K the total number of steps, so tau rises from tau_base to 1.

The copy starts equal to the online network, its variables are non-trainable (no
gradient reaches it; its batch-norm layers still run in training mode and keep their
own statistics, as in the authors' code, where only parameters are averaged).

The step k is the layer's own int32 variable, incremented by `update()`, not the
optimizer's `iterations`: on JAX the forward pass and loss are traced with the
model's variables as state, and a value read from the optimizer there would be the
constant of the trace (the same trap as a momentum schedule read eagerly). K is a
variable too (set by `set_total_steps`, from the trainer's `compile()`), so both are
saved with the model and a resumed run continues the schedule where it stopped.

Example:

```python
target = MomentumEncoder(online_encoder, momentum=0.996, schedule="cosine")
target.set_total_steps(10_000)
target.update()                  # inside the training step, before using the target
z = target(images, training=True)
```
"""

import math

import keras
from keras import ops

from keras_paperzoo.training.ema import ema_update

SCHEDULES = ("constant", "cosine")


def cosine_momentum(step, total_steps, base):
    """BYOL's tau_k = 1 - (1 - base) (cos(pi k / K) + 1) / 2, for k in [0, K]; tensors or numbers."""
    progress = ops.minimum(ops.cast(step, "float32") / ops.maximum(ops.cast(total_steps, "float32"), 1.0), 1.0)
    return 1.0 - (1.0 - base) * (ops.cos(math.pi * progress) + 1.0) / 2.0


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class MomentumEncoder(keras.layers.Layer):
    """A non-trainable copy of `online` moved toward it by an exponential moving average.

    Args:
        online: the Keras model to copy (serializable by `keras.models.clone_model`).
        momentum: m or tau_base in [0, 1] (1 freezes the copy, 0 copies every step).
        schedule: "constant" (MoCo) or "cosine" (BYOL: from `momentum` to 1 over
            `set_total_steps(K)` steps; constant at `momentum` while K is unset).
    """

    def __init__(self, online, momentum=0.999, schedule="constant", **kwargs):
        super().__init__(**kwargs)
        if isinstance(momentum, bool) or not isinstance(momentum, (int, float)) or not 0.0 <= momentum <= 1.0:
            raise ValueError(f"momentum (tau) must be a number in [0, 1]; got {momentum!r}.")
        if schedule not in SCHEDULES:
            raise ValueError(f"momentum schedule must be one of {SCHEDULES}; got {schedule!r}.")
        self.momentum = float(momentum)
        self.schedule = schedule
        self.target = keras.models.clone_model(online)
        self.target.name = f"{online.name}_momentum"
        online_weights, target_weights = online.weights, self.target.weights
        if [tuple(w.shape) for w in online_weights] != [tuple(w.shape) for w in target_weights]:
            raise ValueError(
                f"The copy of {online.name!r} does not have its variables; a momentum encoder needs a model "
                "that keras.models.clone_model can copy (serializable)."
            )
        for target, source in zip(target_weights, online_weights):
            target.assign(ops.convert_to_numpy(source))  # equal at start, a copy (not a shared buffer)
            target.trainable = False
        # Parameters only: batch-norm statistics follow the copy's own forward passes.
        # (Not tracked: the online variables belong to the online model, not to this layer.)
        object.__setattr__(self, "_pairs", [(t, s) for t, s in zip(target_weights, online_weights) if s.trainable])
        self.step = self.add_weight(shape=(), initializer="zeros", dtype="int32", trainable=False, name="step")
        self.total_steps = self.add_weight(shape=(), initializer="zeros", dtype="int32", trainable=False,
                                           name="total_steps")
        self.built = True

    def set_total_steps(self, total_steps):
        """K of the cosine schedule: the run's number of training steps."""
        if isinstance(total_steps, bool) or not isinstance(total_steps, int) or total_steps < 1:
            raise ValueError(f"total_steps must be an int >= 1; got {total_steps!r}.")
        self.total_steps.assign(total_steps)

    def current_momentum(self):
        """m (constant) or tau_k at the current step, a float32 scalar tensor."""
        base = ops.convert_to_tensor(self.momentum, "float32")
        if self.schedule == "constant":
            return base
        total = ops.convert_to_tensor(self.total_steps)
        scheduled = cosine_momentum(ops.convert_to_tensor(self.step), total, self.momentum)
        return ops.where(total > 0, scheduled, base)

    def update(self):
        """theta_target <- m theta_target + (1 - m) theta_online; then k <- k + 1."""
        targets = [t for t, _ in self._pairs]
        sources = [ops.stop_gradient(s) for _, s in self._pairs]
        ema_update(targets, sources, self.current_momentum())
        self.step.assign(self.step + 1)

    def call(self, inputs, training=None):
        return ops.stop_gradient(self.target(inputs, training=training))
