"""`FeatureQueue`: a ring buffer of past keys, the negatives of MoCo (He et al. 2020, Sec. 3.2).

The dictionary is a queue of K encoded keys; each step the current batch's keys are
enqueued and the oldest dequeued (Algorithm 1's `enqueue(queue, k)`,
`dequeue(queue)`). The queue is *read before it is written*: the step's logits use
the keys of earlier batches only. Keys enter under stop-gradient. The queue and its
pointer are non-trainable float32 / int32 variables updated with `assign`, so a
traced step on any backend carries them (JAX threads them through `fit`), `.keras`
files and `BackupAndRestore` keep them, and a mixed-precision policy leaves them in
float32. MoCo uses one; DenseCL two; SwAV a queue of past features for Sinkhorn.

Example:

```python
queue = FeatureQueue(size=4096, dim=128, seed=0)
negatives = queue.read()                 # (4096, 128), before this step's keys
queue.enqueue(keys)                      # keys: (B, 128), B divides 4096
```
"""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class FeatureQueue(keras.layers.Layer):
    """K past keys of width C with a write pointer; starts as random unit vectors.

    Args:
        size: K, the number of keys kept (an int >= 1).
        dim: C, the width of a key (an int >= 1).
        seed: int or None, for the initial random unit vectors.
    """

    def __init__(self, size, dim, seed=None, **kwargs):
        kwargs.setdefault("autocast", False)  # the keys stay float32 under mixed precision
        super().__init__(**kwargs)
        for name, value in (("size", size), ("dim", dim)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"FeatureQueue {name} must be an int >= 1; got {name}={value!r}.")
        self.size = size
        self.dim = dim
        self.seed = seed
        # autocast=False on the variables too: under a mixed policy Keras autocasts a layer's
        # variables when it is called at top level even with the layer's autocast off.
        self.queue = self.add_weight(shape=(size, dim), initializer=self._unit_vectors, dtype="float32",
                                     trainable=False, autocast=False, name="queue")  # (K, C)
        self.pointer = self.add_weight(shape=(), initializer="zeros", dtype="int32", trainable=False,
                                       autocast=False, name="pointer")
        self.built = True

    def _unit_vectors(self, shape, dtype=None):
        values = keras.random.normal(shape, seed=self.seed, dtype="float32")
        return values / ops.norm(values, axis=-1, keepdims=True)

    def read(self):
        """The (K, C) keys as they are now, under stop-gradient (a copy: a later write does not change it)."""
        return ops.stop_gradient(ops.copy(ops.convert_to_tensor(self.queue)))

    def enqueue(self, keys):
        """Write (B, C) keys over the B oldest entries and advance the pointer by B mod K."""
        keys = ops.convert_to_tensor(keys)  # a NumPy array too (PyTorch's stop_gradient needs a tensor)
        if len(keys.shape) != 2 or keys.shape[-1] != self.dim:
            raise ValueError(f"FeatureQueue of width {self.dim} got keys of shape {tuple(keys.shape)}; expected (B, {self.dim}).")
        if keys.shape[0] is not None and self.size % keys.shape[0]:
            raise ValueError(
                f"FeatureQueue size {self.size} must be divisible by the batch size {keys.shape[0]}, so that the "
                "queue is replaced batch by batch (drop a partial last batch)."
            )
        batch = ops.shape(keys)[0]
        pointer = ops.convert_to_tensor(self.pointer)
        rows = ops.mod(pointer + ops.arange(batch, dtype="int32"), self.size)  # (B,)
        keys = ops.cast(ops.stop_gradient(keys), "float32")
        self.queue.assign(ops.scatter_update(self.queue, ops.expand_dims(rows, -1), keys))
        self.pointer.assign(ops.mod(pointer + ops.cast(batch, "int32"), self.size))

    def call(self, keys):
        """Read, then enqueue `keys`: returns the (K, C) keys from before this call."""
        negatives = self.read()
        self.enqueue(keys)
        return negatives

    def get_config(self):
        return {**super().get_config(), "size": self.size, "dim": self.dim, "seed": self.seed}
