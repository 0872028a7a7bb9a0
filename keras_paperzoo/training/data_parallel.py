"""One training run over every local device: `keras.distribution.DataParallel` (JAX).

`paperzoo train RECIPE --data-parallel` calls `use_data_parallel()` before the recipe builds
its model. Keras then compiles one step for the global batch and splits each batch along its
first axis over the devices, so what the papers compute over the whole batch stays global:
batch-norm statistics, the contrastive negatives, the queue and memory-bank writes (every
trainer is tested to give the losses and weights of one device, tests/training/
test_data_parallel.py). `--batch-size` stays the global batch: the paper's 256 over 8 GPUs is
`--batch-size 256`.

A batch that the devices cannot share equally (an evaluation's last batch, one prompt being
decoded) is given whole to every device instead of refused: each computes the same result, so
the numbers are the same and only that batch's speed-up is lost. Training batches are checked
to split (`check_batch_size`).

Keras 3 distributes `fit` only on JAX; on TensorFlow and PyTorch this refuses in one line
(docs/accelerators.md says what those backends offer instead).

Example (4 virtual CPU devices stand in for 4 GPUs):

```python
# XLA_FLAGS=--xla_force_host_platform_device_count=4 KERAS_BACKEND=jax python ...
from keras_paperzoo.training.data_parallel import use_data_parallel

devices = use_data_parallel()   # 4
```
"""

import keras


class DataParallel(keras.distribution.DataParallel):
    """Keras's `DataParallel`, replicating the batches it cannot split over its devices.

    Keras's own refuses them (JAX: "array axis 0 is partitioned 4 times, but the dimension size
    is 62"), which stops a kNN or linear-probe evaluation whose example count is not a multiple
    of the device count.
    """

    def get_data_layout(self, data_shape):
        devices = int(self.device_mesh.devices.size)
        if len(data_shape) and data_shape[0] is not None and data_shape[0] % devices:
            return keras.distribution.TensorLayout([None] * len(data_shape), self.device_mesh)  # replicated
        return super().get_data_layout(data_shape)


def use_data_parallel():
    """Set `DataParallel` over every local device as Keras's distribution; returns the device count."""
    backend = keras.backend.backend()
    if backend != "jax":
        raise ValueError(
            f"--data-parallel needs the JAX backend (keras.distribution is JAX-only in Keras 3); this is {backend}: "
            "use --backend jax, or train on one device (docs/accelerators.md)."
        )
    devices = keras.distribution.list_devices()
    keras.distribution.set_distribution(DataParallel(devices=devices))
    return len(devices)


def device_count():
    """How many devices the current distribution splits a batch over (1 without one)."""
    distribution = keras.distribution.distribution()
    if distribution is None:
        return 1
    return int(distribution.device_mesh.devices.size)


def check_batch_size(batch_size, what="--batch-size"):
    """Refuse, in one line, a global batch that the devices cannot share equally."""
    devices = device_count()
    if batch_size is not None and batch_size % devices:
        raise ValueError(
            f"{what} {batch_size} does not split over the {devices} devices of --data-parallel: "
            f"give a multiple of {devices} (the global batch)."
        )
