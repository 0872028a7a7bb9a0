"""MoCo's Shuffling BN under keras.distribution.DataParallel on 4 virtual CPU devices (JAX).

The devices exist only if XLA_FLAGS is set before JAX is imported, so the model runs
in a subprocess (tests/models/moco/distributed_moco.py) that prints its measurements;
the assertions are here. The single-device emulation is tested in test_moco.py on
every backend.
"""

import json
import os
import pathlib
import subprocess
import sys

import pytest

import keras

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(
    keras.backend.backend() != "jax",
    reason="multi-device test: keras.distribution.DataParallel over virtual CPU devices "
    "(XLA_FLAGS=--xla_force_host_platform_device_count) is JAX-only",
)


@pytest.fixture(scope="module")
def measured():
    env = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="3",
               XLA_FLAGS="--xla_force_host_platform_device_count=4",
               PYTHONPATH=os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-m", "tests.models.moco.distributed_moco"], cwd=REPO_ROOT, env=env,
                         capture_output=True, text=True, timeout=600)
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULTS ")]
    assert run.returncode == 0 and lines, f"subprocess failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    results = json.loads(lines[-1][len("RESULTS "):])
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
