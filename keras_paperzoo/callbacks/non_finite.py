"""`StopOnNonFinite`: stop `fit` at the first batch whose loss is NaN or infinite, whatever the loss is called.

Keras's `TerminateOnNaN` watches the log named `loss`; a GAN logs `d_loss` and
`g_loss`, so a diverged GAN trained on to the last epoch. This callback watches
every logged value whose name ends in `loss` (or the names given) and remembers
what it saw, so that the caller can refuse to save the model with one line.
"""

import math

import numpy as np

import keras


class StopOnNonFinite(keras.callbacks.Callback):
    """Stop training when a watched log value turns NaN or infinite.

    Args:
        monitor: names of the logs to watch; default every log whose name ends in `loss`.

    Attributes:
        problem: None, or `(name, value, epoch, batch)` of the first non-finite value.

    Example:

    ```python
    guard = StopOnNonFinite()
    gan.fit(images, epochs=10, callbacks=[guard])
    if guard.problem:
        raise RuntimeError(guard.message())
    ```
    """

    def __init__(self, monitor=None):
        super().__init__()
        if monitor is not None and (isinstance(monitor, str) or not all(isinstance(m, str) for m in monitor)):
            raise ValueError(f"monitor must be None or a list of log names; got {monitor!r}.")
        self.monitor = None if monitor is None else tuple(monitor)
        self.problem = None
        self.epoch = 0

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

    def message(self):
        """One line naming the value, the epoch and the batch (1-based), or None."""
        if self.problem is None:
            return None
        name, value, epoch, batch = self.problem
        return f"{name} became {value} at epoch {epoch + 1}, batch {batch + 1}"
