"""SimCLR under keras.distribution.DataParallel on 4 virtual CPU devices (JAX): the global batch.

NT-Xent's negatives and batch norm's statistics must span the global batch (SimCLR Sec. 3,
"global BN"), so 4 devices give the loss and weights of one device. The devices exist only
if XLA_FLAGS is set before JAX is imported, so this file, run as a module in a subprocess
(`python -m tests.models.simclr.test_simclr_distributed`), trains and prints its measurements
as one JSON line; the tests below check them.
"""

import json

import numpy as np
import pytest

import keras

from tests.virtual_devices import JAX_ONLY, measure_on_devices
BATCH, DEVICES = 16, 4

pytestmark = pytest.mark.skipif(
    keras.backend.backend() != "jax",
    reason=JAX_ONLY,
)


@pytest.fixture(scope="module")
def measured():
    results = measure_on_devices("tests.models.simclr.test_simclr_distributed")
    assert results["devices_seen"] == results["mesh_devices"] == DEVICES
    assert results["batch_shards"] == DEVICES  # the batch really was split over the devices
    return results


def test_four_devices_equal_one_device(measured):
    for one, four in zip(measured["one_device_losses"], measured["four_device_losses"]):
        assert four == pytest.approx(one, abs=1e-5)
    assert measured["four_vs_one_max_weight_error"] < 1e-5  # every weight, BN statistic and LARS momentum
    assert measured["weights_moved"] > 1e-3  # (two steps did train)


def test_the_comparison_can_fail(measured):
    # What per-device negatives (each device's 4 images, 6 negatives per view) would have logged at the
    # first step. (Keras's batch norm under DataParallel is global: tests/models/moco measures it.)
    first = measured["one_device_losses"][0]
    assert measured["first_loss_recomputed"] == pytest.approx(first, abs=1e-5)
    assert abs(measured["per_device_negatives_loss"] - first) > 0.1


# --- the subprocess ------------------------------------------------------------------------------


def _measure():
    import jax

    from keras_paperzoo.models.simclr import SimCLR
    from tests.models.simclr.test_simclr import _backbone, _nt_xent

    rng = np.random.default_rng(0)
    view_a, view_b = (rng.random((2 * BATCH, 8, 8, 3)).astype("float32") for _ in range(2))

    def model(initial=None):
        keras.utils.set_random_seed(0)
        simclr = SimCLR(_backbone(), temperature=0.5, projection_dims=[8, 8], augmentation=None, seed=0)
        if initial is not None:
            simclr.set_weights(initial)
        return simclr

    def train(distributed, initial):
        distribution = keras.distribution.DataParallel(devices=keras.distribution.list_devices())
        if distributed:
            keras.distribution.set_distribution(distribution)
        simclr = model(initial)
        simclr.compile(batch_size=BATCH, steps_per_epoch=2, epochs=1)  # the paper's LARS
        losses = []
        record = keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: losses.append(logs["loss"]))
        simclr.fit((view_a, view_b), batch_size=BATCH, epochs=1, shuffle=False, verbose=0, callbacks=[record])
        keras.distribution.set_distribution(None)
        state = [np.asarray(keras.ops.convert_to_numpy(v)) for v in simclr.weights + simclr.optimizer.variables]
        # Keras logs the running mean over the epoch's steps: the per-step losses from it.
        per_step = [losses[0]] + [(i + 1) * losses[i] - i * losses[i - 1] for i in range(1, len(losses))]
        return per_step, state, distribution

    initial = model().get_weights()
    one_losses, one, _ = train(False, initial)
    four_losses, four, distribution = train(True, initial)

    # The first step's loss, recomputed, then as per-device negatives would have it.
    reference = model(initial)
    x_a, x_b = view_a[:BATCH], view_b[:BATCH]
    z = np.asarray(keras.ops.convert_to_numpy(reference.forward_pass((x_a, x_b), training=True)["z"]))
    shard = BATCH // DEVICES
    local = np.mean([_nt_xent(z[:BATCH][d * shard:(d + 1) * shard], z[BATCH:][d * shard:(d + 1) * shard], 0.5)
                     for d in range(DEVICES)])
    # How fit lays a batch out under the distribution: split over the devices along the batch axis.
    batch = jax.device_put(x_a, distribution.get_data_layout(x_a.shape).backend_layout)
    return {
        "devices_seen": len(jax.devices()),
        "mesh_devices": int(np.prod(distribution.device_mesh.shape)),
        "batch_shards": len({tuple(s.index[0].indices(BATCH)) for s in batch.addressable_shards}),
        "one_device_losses": one_losses,
        "four_device_losses": four_losses,
        "four_vs_one_max_weight_error": float(max(np.abs(a - b).max() for a, b in zip(one, four))),
        "weights_moved": float(max(np.abs(a - np.asarray(b)).max() for a, b in zip(one, initial))),
        "first_loss_recomputed": _nt_xent(z[:BATCH], z[BATCH:], 0.5),
        "per_device_negatives_loss": float(local),
    }


if __name__ == "__main__":
    print("RESULTS " + json.dumps(_measure()))
