"""Shuffling BN (He et al. 2020, MoCo Sec. 3.3) on one device or under `keras.distribution`.

The authors train on 8 GPUs; batch norm there normalises each GPU's share of the
batch, and the batch of keys is shuffled across the GPUs before the key encoder
(and un-shuffled after), so that a query and its positive key are never
normalised with the same statistics (a leak the model would exploit).

Here the batch is split into `groups` contiguous groups that go through the
encoder one at a time, so that batch norm sees each group's statistics: one
group per GPU. The groups, not the devices, decide the statistics:

- One device: the groups emulate the GPUs (the authors' CIFAR demo does the same
  with its `SplitBatchNorm`).
- `keras.distribution.DataParallel` on JAX with D devices: the batch is sharded
  along its first axis, but Keras's `BatchNormalization` then normalises over the
  *global* batch (measured with 4 devices: the moving mean after one step is the
  mean of all 16 samples, not of a device's 4), i.e. synchronised BN, with which
  the leak and its fix do not exist. With `groups` a multiple of D each group
  lies on one device, as on the authors' GPUs. The key permutation is a `take`
  over the global batch, which XLA turns into the exchange between devices; the
  permuted batch is laid out along the batch axis again (the distribution's data
  layout), so each device normalises samples that came from the others.

The result is therefore the same on one device and on D devices, for the same
permutation (tested to 1e-5 with 4 virtual CPU devices).

Cost, not correctness: XLA partitions the per-group encoder calls of a sharded
batch with collectives of its own (the compiled step of a conv + BN encoder on 4
devices holds 5 all-to-all, 5 all-reduce and 12 collective-permutes even without
the shuffle, 3 all-gathers more with it), so the statistics are the per-GPU ones
but the traffic is more than the paper's single exchange of keys. Computing each
group strictly on its device needs `jax.shard_map`, a backend branch.
"""

import keras
from keras import ops


def batch_sharded(x):
    """`x` laid out along its first axis by the current `keras.distribution` (if one is set)."""
    distribution = keras.distribution.distribution()
    if distribution is None:
        return x
    return keras.distribution.distribute_tensor(x, distribution.get_data_layout(tuple(x.shape)))


def grouped_call(encoder, images, groups, training=True, shuffle_seed=None):
    """`encoder(images)` with batch norm over `groups` groups, optionally shuffled (Shuffling BN).

    Args:
        encoder: a Keras model or layer applied to a batch.
        images: (B, ...) batch; B divisible by `groups`.
        groups: G >= 1, the number of batch-norm groups (the paper's GPUs).
        training: passed to `encoder`.
        shuffle_seed: None (the groups in the given order: MoCo's queries) or a
            `keras.random.SeedGenerator` (a random permutation of the batch
            before the encoder and its inverse after: MoCo's keys).

    Returns:
        (B, ...) outputs in the order of `images`; an encoder with several outputs
        (a dict or list of (B, ...) tensors, DenseCL's) gives them in the same
        structure, each concatenated and un-shuffled alike.

    Example:

    ```python
    seed = keras.random.SeedGenerator(0)
    keys = grouped_call(key_encoder, x_k, groups=8, shuffle_seed=seed)  # (B, C)
    ```
    """
    if groups == 1:
        return encoder(images, training=training)  # one group: a permutation would change nothing
    order = None
    if shuffle_seed is not None:
        order = keras.random.shuffle(ops.arange(ops.shape(images)[0]), seed=shuffle_seed)  # (B,)
        images = batch_sharded(ops.take(images, order, axis=0))  # across devices under a distribution
    parts = ops.split(images, groups, axis=0)  # G x (B / G, ...)
    per_group = [encoder(part, training=training) for part in parts]
    outputs = keras.tree.map_structure(lambda *xs: ops.concatenate(xs, axis=0), *per_group)  # (B, ...) each
    if order is not None:
        inverse = ops.argsort(order)  # back to the batch order
        outputs = keras.tree.map_structure(lambda x: batch_sharded(ops.take(x, inverse, axis=0)), outputs)
    return outputs
