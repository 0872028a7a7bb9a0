"""MoCo under keras.distribution.DataParallel with 4 virtual CPU devices: measurements as JSON.

Run by test_moco_distributed.py in a subprocess with KERAS_BACKEND=jax and
XLA_FLAGS=--xla_force_host_platform_device_count=4 (the flag must be set before
JAX is imported, hence the subprocess); prints one JSON line that the test checks.
"""

import json

import numpy as np

import jax
import keras
from keras import ops

from keras_paperzoo.training.shuffle_bn import batch_sharded, grouped_call
from tests.models.moco.test_moco import _moco, _np, _views

BATCH, DEVICES = 16, 4


def _data_parallel():
    return keras.distribution.DataParallel(devices=keras.distribution.list_devices())


def keras_batch_norm_is_global():
    """One step of a lone BatchNormalization (momentum 0) on a sharded batch: whose mean does it keep?"""
    keras.distribution.set_distribution(_data_parallel())
    inputs = keras.Input((3,))
    bn = keras.layers.BatchNormalization(momentum=0.0)
    model = keras.Model(inputs, bn(inputs))
    model.compile(optimizer="sgd", loss="mse")
    rng = np.random.default_rng(0)
    x = (rng.normal(size=(BATCH, 3)) + np.repeat(np.arange(DEVICES), BATCH // DEVICES)[:, None]).astype("float32")
    model.fit(x, np.zeros_like(x), batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
    keras.distribution.set_distribution(None)
    moving = _np(bn.moving_mean)
    shard_means = x.reshape(DEVICES, -1, 3).mean(axis=1)  # (D, 3): what per-device BN would keep
    return {
        "bn_moving_minus_global_mean": float(np.abs(moving - x.mean(axis=0)).max()),
        "bn_moving_minus_nearest_shard_mean": float(np.abs(moving - shard_means).max(axis=1).min()),
    }


def shuffle_crosses_devices():
    """Groups of the shuffled key batch: who is in each, and which device holds them."""
    keras.distribution.set_distribution(distribution := _data_parallel())
    x = np.arange(BATCH, dtype="float32")[:, None] ** 1.5  # distinct values: group means identify groups
    x_sharded = batch_sharded(ops.convert_to_tensor(x))
    shard_rows = [sorted(int(i) for i in np.rint(np.asarray(s.data)[:, 0] ** (1 / 1.5))) for s in
                  sorted(x_sharded.addressable_shards, key=lambda s: s.device.id)]

    def centre(part, training=True):  # (B / G, 1): each sample minus its group's mean
        return part - ops.mean(part, axis=0, keepdims=True)

    out = _np(grouped_call(centre, x_sharded, DEVICES, shuffle_seed=keras.random.SeedGenerator(3)))
    group_mean = np.round(x - out, 4)[:, 0]  # (B,) the mean each sample was normalised with, in input order
    groups = [np.flatnonzero(group_mean == m).tolist() for m in np.unique(group_mean)]
    group_means_ok = all(abs(x[g].mean() - group_mean[g[0]]) < 1e-3 for g in groups)
    # The permuted batch as the key encoder sees it: laid out over the devices again.
    order = keras.random.shuffle(ops.arange(BATCH), seed=keras.random.SeedGenerator(3))
    permuted = batch_sharded(ops.take(x_sharded, order, axis=0))
    device_rows = [sorted(int(i) for i in np.rint(np.asarray(s.data)[:, 0] ** (1 / 1.5))) for s in
                   sorted(permuted.addressable_shards, key=lambda s: s.device.id)]
    keras.distribution.set_distribution(None)
    return {
        "devices": len(distribution.device_mesh.devices.flatten()),
        "input_shard_rows": shard_rows,
        "groups": groups,
        "group_means_ok": bool(group_means_ok),
        "permuted_device_rows": device_rows,
    }


def pairing_after_unshuffle():
    """No batch norm, lr 0, x_q = x_k: q_i = k_i exactly if key i comes back to row i."""
    keras.utils.set_random_seed(0)
    keras.distribution.set_distribution(_data_parallel())
    # A linear backbone, a linear head and one colour per image: distinct features, no near-ties. (With
    # ReLUs, pooled pixel noise gives nearly parallel or all-zero features and argmax ties; CI drew them.)
    linear = keras.Sequential([keras.Input((8, 8, 3)), keras.layers.Conv2D(8, 3, strides=2, name="conv")], name="linear")
    moco = _moco(linear, shuffle_bn_splits=DEVICES, augmentation=None, momentum=0.9, version=1)
    colours = np.random.default_rng(1).normal(size=(2 * BATCH, 1, 1, 3)).astype("float32")
    view = colours + 0.1 * _views(2 * BATCH, seed=1)[0]
    queue0 = _np(moco.queue)
    moco.compile(optimizer=keras.optimizers.SGD(0.0))
    history = moco.fit([view, view], batch_size=BATCH, epochs=1, shuffle=False, verbose=0).history
    keras.distribution.set_distribution(None)
    features = _np(moco.query_encoder(view, training=False))  # (2B, C) = q = k: lr 0, equal encoders
    # Expected, in NumPy: logits [q.k+ | q.queue] / tau, the queue holding step 0's keys at step 1.
    losses, hits, margins, queue = [], [], [], queue0.copy()
    for step in range(2):
        q = features[step * BATCH:(step + 1) * BATCH]
        logits = np.concatenate([np.sum(q * q, axis=1, keepdims=True), q @ queue.T], axis=1) / moco.temperature
        log_z = np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1)) + logits.max(1)
        losses.append(float(np.mean(log_z - logits[:, 0])))
        hits.append(float(np.mean(np.argmax(logits, axis=1) == 0)))
        margins.append(float(np.min(logits[:, 0] - logits[:, 1:].max(axis=1))))
        queue[step * BATCH:(step + 1) * BATCH] = q
    return {
        "pairing_loss": history["loss"][0],
        "pairing_expected_loss": float(np.mean(losses)),
        "pairing_accuracy": history["contrastive_accuracy"][0],
        "pairing_expected_accuracy": float(np.mean(hits)),
        "pairing_margin": min(margins),  # positive logit minus the best negative, the smallest over queries
        "pairing_queue_error": float(np.abs(_np(moco.queue) - queue).max()),
        "pairing_pointer": int(_np(moco.queue_pointer)),
        "queue_size": moco.queue_size,
    }


def devices_equal_groups():
    """A BN backbone trained 2 steps on 4 devices vs on 1 device with 4 groups (same initial state)."""

    def train(splits, distributed, initial=None):
        if distributed:
            keras.distribution.set_distribution(_data_parallel())
        keras.utils.set_random_seed(0)
        moco = _moco(shuffle_bn_splits=splits, momentum=0.9, queue_size=64)  # default augmentation
        initial = initial or moco.get_weights()
        moco.set_weights(initial)  # queue, encoders and SeedGenerator states (views, permutation)
        moco.compile(optimizer=keras.optimizers.SGD(0.1, momentum=0.9))
        images = _views(2 * BATCH, seed=2)[0]
        history = moco.fit(images, batch_size=BATCH, epochs=1, shuffle=False, verbose=0).history
        keras.distribution.set_distribution(None)
        state = [_np(w) for w in moco.weights]
        return history["loss"][0], state, initial

    one_loss, one, initial = train(DEVICES, distributed=False)
    four_loss, four, _ = train(DEVICES, distributed=True, initial=initial)
    global_loss, global_bn, _ = train(1, distributed=False, initial=initial)
    return {
        "one_device_loss": one_loss,
        "four_device_loss": four_loss,
        "four_vs_one_max_weight_error": float(max(np.abs(a - b).max() for a, b in zip(one, four))),
        "global_bn_loss": global_loss,
        "groups_vs_global_bn_max_weight_difference": float(max(np.abs(a - b).max() for a, b in zip(one, global_bn))),
        "devices_seen": len(jax.devices()),
    }


if __name__ == "__main__":
    results = {}
    for measure in (keras_batch_norm_is_global, shuffle_crosses_devices, pairing_after_unshuffle,
                    devices_equal_groups):
        results.update(measure())
    print("RESULTS " + json.dumps(results))
