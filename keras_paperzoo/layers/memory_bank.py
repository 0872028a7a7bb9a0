"""`MemoryBank`: one stored feature per training image, InstDisc's and CMC's source of negatives.

InstDisc (Wu et al. 2018, "Unsupervised Feature Learning via Non-Parametric Instance
Discrimination", Sec. 3.1-3.2) keeps a memory V = {v_j} of one L2-normalised d-dim
feature per training image. A step reads the positive v_i of each image i of the
batch (the row of its own index: there is no second view) and m negatives drawn
uniformly from the n rows (the noise distribution P_n = 1/n of its NCE, Sec. 3.2),
then writes the batch's new features back:

    v_i <- normalize(m v_i + (1 - m) f_i)        (m = 0.5, the authors' `--nce-m`)

CMC (Tian et al. 2019) keeps one bank per view. The bank is a non-trainable float32
variable updated with `assign` inside the traced step (JAX threads it through
`fit`; `.keras` files and checkpoints keep it); a mixed-precision policy leaves it in
float32. Reads come before the write in a step, under stop-gradient. The rows start
as random unit vectors (the authors draw them uniformly in [-s, s], s = 1 / sqrt(d / 3),
and normalise them on first write; starting them normalised keeps every row on the
sphere the scores assume).

The training data must say which image is which: `keras_paperzoo.data.with_index`
(arrays) and `EpochShuffledBatches(..., with_index=True)` give
x = {"images": ..., "index": ...} (see `keras_paperzoo/data/indexed.py`).

Example:

```python
bank = MemoryBank(size=50_000, dim=128, seed=0)
positives = bank.read(index)                  # (B, 128): v_i, the rows of the batch's images
negatives = bank.read(bank.sample(index.shape[0], 4096))   # (B, 4096, 128), uniform rows
bank.update(index, features)                  # after the loss: v_i <- normalize(0.5 v_i + 0.5 f_i)
```
"""

import numbers

import keras
from keras import ops


def _normalize(x, axis=-1):
    return x / ops.maximum(ops.norm(x, axis=axis, keepdims=True), 1e-12)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class MemoryBank(keras.layers.Layer):
    """n stored unit features of width d, read by index and moved toward new features.

    Args:
        size: n, the number of rows: one per training image (an int >= 1).
        dim: d, the width of a feature (an int >= 1).
        momentum: m in [0, 1): the weight of the stored row in its update
            (0.5, InstDisc's `--nce-m`; 0 replaces the row by the new feature).
        seed: int or None, for the initial rows and the sampled negatives.
    """

    def __init__(self, size, dim, momentum=0.5, seed=None, **kwargs):
        kwargs.setdefault("autocast", False)  # the rows stay float32 under mixed precision
        super().__init__(**kwargs)
        for name, value in (("size", size), ("dim", dim)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"MemoryBank {name} must be an int >= 1; got {name}={value!r}.")
        if isinstance(momentum, bool) or not isinstance(momentum, numbers.Real) or not 0.0 <= momentum < 1.0:
            raise ValueError(f"MemoryBank momentum must be a number in [0, 1); got momentum={momentum!r}.")
        self.size = int(size)
        self.dim = int(dim)
        self.momentum = float(momentum)
        self.seed = seed
        self.bank = self.add_weight(shape=(self.size, self.dim), initializer=self._unit_rows, dtype="float32",
                                    trainable=False, autocast=False, name="bank")  # (n, d)
        self.seed_generator = keras.random.SeedGenerator(seed, name="negatives_seed")
        self.built = True

    def _unit_rows(self, shape, dtype=None):
        return _normalize(keras.random.uniform(shape, -1.0, 1.0, seed=self.seed, dtype="float32"))

    def _check_index(self, index):
        index = ops.convert_to_tensor(index)
        dtype = keras.backend.standardize_dtype(index.dtype)
        if "int" not in dtype:
            raise ValueError(f"MemoryBank indices must be integers; got dtype {dtype}.")
        return ops.cast(index, "int32")

    def read(self, index):
        """The stored rows of `index` ((B,) -> (B, d); (B, m) -> (B, m, d)), under stop-gradient."""
        index = self._check_index(index)
        return ops.stop_gradient(ops.take(ops.convert_to_tensor(self.bank), index, axis=0))

    def sample(self, batch_size, count):
        """(batch_size, count) row indices drawn uniformly from [0, n): P_n = 1/n."""
        if isinstance(count, bool) or not isinstance(count, numbers.Integral) or not 1 <= count:
            raise ValueError(f"The number of negatives must be an int >= 1; got {count!r}.")
        if count > self.size:
            raise ValueError(
                f"A memory bank of {self.size} rows cannot give {count} negatives per image: the bank must "
                "have at least as many rows (one per training image) as negatives; lower the number of negatives."
            )
        return keras.random.randint((batch_size, count), 0, self.size, seed=self.seed_generator, dtype="int32")

    def update(self, index, features):
        """v_i <- normalize(m v_i + (1 - m) f_i) for the rows `index` (B,) with features (B, d)."""
        index = self._check_index(index)
        features = ops.cast(ops.stop_gradient(ops.convert_to_tensor(features)), "float32")
        if len(features.shape) != 2 or features.shape[-1] != self.dim:
            raise ValueError(f"MemoryBank of width {self.dim} got features of shape {tuple(features.shape)}; "
                             f"expected (B, {self.dim}).")
        stored = ops.take(ops.convert_to_tensor(self.bank), index, axis=0)  # (B, d)
        rows = _normalize(self.momentum * stored + (1.0 - self.momentum) * features)
        self.bank.assign(ops.scatter_update(self.bank, ops.expand_dims(index, -1), rows))

    def call(self, index):
        return self.read(index)

    def compute_output_shape(self, index_shape):
        return tuple(index_shape) + (self.dim,)

    def get_config(self):
        return {**super().get_config(), "size": self.size, "dim": self.dim, "momentum": self.momentum,
                "seed": self.seed}
