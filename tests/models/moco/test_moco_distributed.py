"""MoCo's Shuffling BN under keras.distribution.DataParallel on 4 virtual CPU devices (JAX).

The devices exist only if XLA_FLAGS is set before JAX is imported, so the model runs
in a subprocess (tests/models/moco/distributed_moco.py) that prints its measurements;
the assertions are here. The single-device emulation is tested in test_moco.py on
every backend.
"""


import pytest

import keras

from tests.virtual_devices import JAX_ONLY, measure_on_devices

pytestmark = pytest.mark.skipif(
    keras.backend.backend() != "jax",
    reason=JAX_ONLY,
)


@pytest.fixture(scope="module")
def measured():
    results = measure_on_devices("tests.models.moco.distributed_moco")
    assert results["devices"] == results["devices_seen"] == 4
    return results


def test_keras_batch_norm_under_data_parallel_is_global(measured):
    # The measurement behind the design: one step on a batch sharded over 4 devices keeps the
    # global mean (synchronised BN), not one device's, so per-device statistics need the groups.
    assert measured["bn_moving_minus_global_mean"] < 1e-5
    assert measured["bn_moving_minus_nearest_shard_mean"] > 0.1


def test_key_shuffle_moves_samples_across_devices(measured):
    # Input: device d holds rows 4d .. 4d + 3 (the batch layout).
    assert measured["input_shard_rows"] == [list(range(4 * d, 4 * d + 4)) for d in range(4)]
    assert measured["group_means_ok"]  # outputs come back in input order, normalised by their group
    groups = sorted(map(tuple, measured["groups"]))
    on_devices = measured["permuted_device_rows"]
    assert sorted(len(g) for g in groups) == [4, 4, 4, 4]
    # The batch-norm groups are exactly what each device holds after the shuffle ...
    assert groups == sorted(map(tuple, on_devices))
    # ... and each device holds samples of at least two devices, most of them from others.
    assert all(len({row // 4 for row in rows}) >= 2 for rows in on_devices)
    moved = sum(row // 4 != device for device, rows in enumerate(on_devices) for row in rows)
    assert moved >= 8


def test_keys_pair_with_their_queries_after_the_unshuffle(measured):
    # No batch norm, lr 0, x_q = x_k: key i is query i only if the un-shuffle puts it back.
    assert measured["pairing_loss"] == pytest.approx(measured["pairing_expected_loss"], abs=1e-4)
    # The accuracy check means something only without near-ties (CI once drew weights that had them).
    assert measured["pairing_margin"] > 1e-2
    assert measured["pairing_accuracy"] == measured["pairing_expected_accuracy"] == 1.0
    assert measured["pairing_queue_error"] < 1e-5  # the queue holds the keys in batch order
    assert measured["pairing_pointer"] == (2 * 16) % measured["queue_size"]


def test_four_devices_equal_one_device_with_four_groups(measured):
    assert measured["four_device_loss"] == pytest.approx(measured["one_device_loss"], abs=1e-5)
    assert measured["four_vs_one_max_weight_error"] < 1e-5  # every weight, queue and BN statistic
    # The comparison can fail: global batch norm ends elsewhere.
    assert measured["groups_vs_global_bn_max_weight_difference"] > 1e-2
    assert abs(measured["global_bn_loss"] - measured["one_device_loss"]) > 1e-3
