"""`StopOnNonFinite`: stop `fit` at the first batch whose loss is NaN or infinite, whatever the loss is called,
or at the first epoch end whose weights are.

Keras's `TerminateOnNaN` watches the log named `loss`; a GAN logs `d_loss` and
`g_loss`, so a diverged GAN trained on to the last epoch. This callback watches
every logged value whose name ends in `loss` (or the names given) and remembers
what it saw, so that the caller can refuse to save the model with one line.

A finite loss does not make finite weights: on JAX, ResNet at lr 1e3 ended an epoch
with loss 1552 and 130 of its 156 weight arrays NaN or infinite (a batch-norm layer
whose statistics overflow still outputs finite values). So the weights are checked
too, at every epoch end (`non_finite_weights`, one reduction per array on the
device), and `check_finite_weights` refuses a model before it is saved.
"""

import math

import numpy as np

import keras


class NonFiniteWeightsError(ValueError):
    """A model holds NaN or infinite weights; the message names how many arrays and the first."""


def non_finite_weights(model):
    """Paths of `model.weights` (float arrays: trainable ones, batch-norm statistics, queues, banks) holding NaN or
    infinity, in `model.weights` order; [] when all are finite.

    One `all(isfinite(w))` per array on the device, read back together.
    """
    weights = [w for w in model.weights if keras.backend.is_float_dtype(w.dtype)]
    if not weights:
        return []
    flags = keras.ops.stack([keras.ops.all(keras.ops.isfinite(w.value)) for w in weights])
    finite = np.asarray(keras.ops.convert_to_numpy(flags))
    return [w.path for w, ok in zip(weights, finite) if not ok]


def weights_message(model, bad):
    """'3 of 156 weight arrays are NaN or infinite (the first: path)'."""
    total = sum(1 for w in model.weights if keras.backend.is_float_dtype(w.dtype))
    return f"{len(bad)} of {total} weight arrays are NaN or infinite (the first: {bad[0]})"


def check_finite_weights(model, what="the model"):
    """Raise `NonFiniteWeightsError` naming how many weight arrays of `model` are NaN or infinite and the first.

    Example:

    ```python
    check_finite_weights(model)  # before model.save(...): a non-finite model is never written
    ```
    """
    bad = non_finite_weights(model)
    if bad:
        raise NonFiniteWeightsError(f"{what} was not saved: {weights_message(model, bad)}")


class StopOnNonFinite(keras.callbacks.Callback):
    """Stop training when a watched log value turns NaN or infinite.

    Args:
        monitor: names of the logs to watch; default every log whose name ends in `loss`.
        weights: also check the weights at every epoch end (`non_finite_weights`).

    Attributes:
        problem: None, or `(name, value, epoch, batch)` of the first non-finite value
            (for the weights: `("weights", message, epoch, None)`).

    Example:

    ```python
    guard = StopOnNonFinite()
    gan.fit(images, epochs=10, callbacks=[guard])
    if guard.problem:
        raise RuntimeError(guard.message())
    ```
    """

    def __init__(self, monitor=None, weights=True):
        super().__init__()
        if monitor is not None and (isinstance(monitor, str) or not all(isinstance(m, str) for m in monitor)):
            raise ValueError(f"monitor must be None or a list of log names; got {monitor!r}.")
        self.monitor = None if monitor is None else tuple(monitor)
        self.problem = None
        self.epoch = 0
        self.weights = bool(weights)

    def on_train_begin(self, logs=None):
        self.problem = None

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def _watched(self, name):
        return name.endswith("loss") if self.monitor is None else name in self.monitor

    def on_train_batch_end(self, batch, logs=None):
        if self.problem is not None:
            return
        for name, value in (logs or {}).items():
            if not self._watched(name):
                continue
            try:
                number = float(np.asarray(keras.ops.convert_to_numpy(value)).mean())
            except (TypeError, ValueError):
                continue
            if not math.isfinite(number):
                self.problem = (name, number, self.epoch, batch)
                self.model.stop_training = True
                return

    def on_epoch_end(self, epoch, logs=None):
        if self.problem is not None or not self.weights:
            return
        bad = non_finite_weights(self.model)
        if bad:
            self.problem = ("weights", weights_message(self.model, bad), epoch, None)
            self.model.stop_training = True

    def message(self):
        """One line naming the value, the epoch and the batch (1-based), or None."""
        if self.problem is None:
            return None
        name, value, epoch, batch = self.problem
        if batch is None:
            return f"after epoch {epoch + 1}, {value}"
        return f"{name} became {value} at epoch {epoch + 1}, batch {batch + 1}"
