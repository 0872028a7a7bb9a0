"""Optimizers the papers use that Keras's own do not cover."""

import keras
from keras import ops

from keras_paperzoo.training.step import multi_tensor_momentum_step


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class ScheduledMomentumSGD(keras.optimizers.SGD):
    """SGD with classical momentum whose momentum may follow a schedule.

    Keras's `SGD` takes a constant momentum. The GAN paper's MNIST run raised it
    from 0.5 to 0.7 over the first 250 epochs (Goodfellow et al. 2014; authors'
    pylearn2 `MomentumAdjustor`), so here `momentum` may also be a schedule
    (a function of this optimizer's update count, e.g. `LinearRamp`).
    The update is Keras's: v <- m v - lr g; w <- w + v (Nesterov: w <- w + m v - lr g). On
    PyTorch it runs as one multi-tensor update of all variables (`multi_tensor_momentum_step`).

    `l2` is weight decay as the papers of the Caffe era used it (AlexNet, VGG,
    ResNet: "weight decay 5e-4 / 1e-4"): l2 * w is added to the gradient *before*
    the momentum step, like PyTorch's `SGD(weight_decay=...)`. Keras's own
    `weight_decay` is decoupled (applied outside the momentum), which at
    momentum 0.9 decays about ten times less for the same number.
    `exclude_from_weight_decay(...)` applies to `l2` too.

    Args:
        learning_rate: float or schedule.
        momentum: float in [0, 1] or a `LearningRateSchedule`-like callable of
            the update count returning the momentum.
        l2: float >= 0, coupled weight decay (see above).
        **kwargs: the other `keras.optimizers.SGD` arguments.

    Example:

    ```python
    from keras_paperzoo.training.schedules import LinearRamp
    opt = ScheduledMomentumSGD(0.1, momentum=LinearRamp(0.5, 0.7, 125_000))
    ```
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, l2=0.0, **kwargs):
        if isinstance(momentum, dict):
            momentum = keras.saving.deserialize_keras_object(momentum)
        schedule = momentum if callable(momentum) else None
        # With a schedule, a placeholder > 0 makes SGD create its momentum slots.
        constant = 0.5 if schedule is not None else float(momentum)
        super().__init__(learning_rate=learning_rate, momentum=constant, **kwargs)
        self.momentum_schedule = schedule
        if not l2 >= 0:
            raise ValueError(f"l2 must be >= 0; got {l2}.")
        self.l2 = float(l2)

    def update_step(self, gradient, variable, learning_rate):
        if self.l2 and self._use_weight_decay(variable):
            gradient = ops.cast(gradient, variable.dtype) + self.l2 * variable
        if self.momentum_schedule is None:
            return super().update_step(gradient, variable, learning_rate)
        learning_rate = ops.cast(learning_rate, variable.dtype)
        gradient = ops.cast(gradient, variable.dtype)
        momentum = ops.cast(self.momentum_schedule(self.iterations), variable.dtype)
        velocity = self.momentums[self._get_variable_index(variable)]
        self.assign(velocity, velocity * momentum - gradient * learning_rate)
        if self.nesterov:
            self.assign_add(variable, velocity * momentum - gradient * learning_rate)
        else:
            self.assign_add(variable, velocity)

    def _backend_update_step(self, grads, trainable_variables, learning_rate):
        # PyTorch: one multi-tensor update of every variable (`multi_tensor_momentum_step`), as Keras's own SGD
        # gets there; elsewhere, or when a subclass changes `update_step`, Keras's loop over `update_step`.
        own_rule = type(self).update_step is not ScheduledMomentumSGD.update_step
        decayed = [bool(self.l2) and self._use_weight_decay(v) for v in trainable_variables]
        if own_rule or not multi_tensor_momentum_step(self, grads, trainable_variables, learning_rate,
                                                      self.current_momentum, decayed):
            super()._backend_update_step(grads, trainable_variables, learning_rate)

    def current_momentum(self):
        if self.momentum_schedule is None:
            return self.momentum
        return float(ops.convert_to_numpy(self.momentum_schedule(self.iterations)))

    def get_config(self):
        config = super().get_config()
        config["l2"] = self.l2
        if self.momentum_schedule is not None:
            config["momentum"] = keras.saving.serialize_keras_object(self.momentum_schedule)
        return config
