"""Every trainer under `keras.distribution.DataParallel` on 4 virtual CPU devices (issue 19, part 3).

On JAX, `DataParallel` splits each batch over the devices and compiles the step for the
global batch, so what the papers compute over the whole batch stays global: batch-norm
statistics, the contrastive negatives (SimCLR, InvaSpread, CPC), the memory-bank and queue
writes (InstDisc, CMC, MoCo). Per trainer (`tests/trainer_zoo.py`), two steps of batch 8 from the
same weights give, on 4 devices, the per-step losses and every variable (weights, BN
statistics, optimizer slots, queues, banks, EMA copies) of one device. MoCo's shuffled BN
(per-device statistics, on purpose) has its own test in tests/models/moco; SimCLR's and MoCo's
tests also show that per-device negatives or statistics would give other numbers.

The devices exist only if XLA_FLAGS is set before JAX is imported, so the measuring runs in
a subprocess (`python -m tests.training.test_data_parallel NAME ...`), the trainers in two
halves of about 3 minutes each (most of it compiling), printing one JSON line.
"""

import json
import sys

import numpy as np
import pytest

import keras

from tests.trainer_zoo import TRAINERS
from tests.virtual_devices import measure_on_devices

DEVICES = 4

pytestmark = pytest.mark.skipif(
    keras.backend.backend() != "jax",
    reason="multi-device test: DataParallel over virtual CPU devices (XLA_FLAGS) is JAX-only; "
    "Keras 3 has no data-parallel fit on TensorFlow or torch (docs/accelerators.md)",
)


# Two halves of about 3 minutes each (compiling dominates), so that the suite's two workers share them: these ten,
# and the rest of the zoo (a new paper's trainers join the second).
FIRST_HALF = ("beit", "bert", "cmc", "gpt", "instdisc", "resnet", "simclr", "swav", "visual_tokenizer", "vit")
HALVES = (tuple(sorted(set(TRAINERS) - set(FIRST_HALF))), FIRST_HALF)


def _measured(names):
    return measure_on_devices("tests.training.test_data_parallel", *names, devices=DEVICES, timeout=1500)


def _problems(name, result):
    """What is wrong with one trainer's measurement (an empty list when 4 devices equal 1)."""
    if "error" in result:
        return [result["error"]]
    problems = []
    if not result["devices"] == result["batch_shards"] == DEVICES:
        problems.append(f"the batch was split over {result['batch_shards']} of {result['devices']} devices")
    if result["steps"] != 2:
        problems.append(f"{result['steps']} steps logged, not 2")
    for key, (one, four) in result["losses"].items():
        if not np.allclose(four, one, rtol=1e-4, atol=1e-5):
            problems.append(f"{key} per step: 1 device {one}, 4 devices {four}")
    worst = result["worst_variable"]
    if not worst["error"] < 1e-4:
        problems.append(f"{worst['path']} differs by {worst['error']}")
    if not result["moved"] > 0:
        problems.append("no gradient reached the optimizer (its slots are still 0)")
    return [f"{name}: {problem}" for problem in problems]


def test_the_halves_hold_every_trainer():
    assert sorted(name for half in HALVES for name in half) == sorted(TRAINERS)


@pytest.mark.slow(reason="ten trainers compiled on one and on four devices in a child process: 2-4 minutes")
@pytest.mark.parametrize("names", HALVES, ids=("half1", "half2"))
def test_every_trainer_on_four_devices_gives_the_losses_and_state_of_one(names):
    measured = _measured(names)
    assert sorted(measured) == sorted(names)
    problems = [p for name in names for p in _problems(name, measured[name])]
    assert not problems, "\n".join(problems)


def test_the_check_can_fail():
    # What a per-device mistake looks like to `_problems`: a loss off in the 4th digit, a weight off by 1e-3.
    good = {"devices": 4, "batch_shards": 4, "steps": 2, "losses": {"loss": [[2.0, 1.5], [2.0, 1.5]]},
            "worst_variable": {"path": "w", "error": 0.0}, "moved": 0.1}
    assert _problems("x", good) == []
    assert _problems("x", {**good, "losses": {"loss": [[2.0, 1.5], [2.0, 1.5004]]}})
    assert _problems("x", {**good, "worst_variable": {"path": "bn/moving_mean", "error": 1e-3}})
    assert _problems("x", {**good, "batch_shards": 1})


# --- the subprocess ------------------------------------------------------------------------------

BATCH = 8


def _train(name, distribution):
    keras.distribution.set_distribution(distribution)
    try:
        keras.utils.set_random_seed(0)
        model, x, y, batch_size = TRAINERS[name]()
        model.compile()
        losses = {}

        def record(batch, logs=None):
            for key, value in logs.items():
                if "loss" in key:
                    losses.setdefault(key, []).append(float(value))

        model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0,
                  callbacks=[keras.callbacks.LambdaCallback(on_train_batch_end=record)])
        # In order (a second model's optimizer gets a numbered name, so paths differ).
        state = [(v.path, np.array(keras.ops.convert_to_numpy(v))) for v in model.variables + model.optimizer.variables]
    finally:
        keras.distribution.set_distribution(None)
    # The optimizer slots (momenta, Adam moments) are 0 until a gradient arrives.
    slots = [np.abs(np.asarray(keras.ops.convert_to_numpy(v), "float64")).max(initial=0.0)
             for v in model.optimizer.variables if "float" in v.dtype and "learning_rate" not in v.path]
    return losses, state, x, float(max(slots, default=0.0))


def _measure(name):
    import jax

    one_logs, one, _, moved = _train(name, None)
    distribution = keras.distribution.DataParallel(devices=keras.distribution.list_devices())
    four_logs, four, x, _ = _train(name, distribution)
    first = x if not isinstance(x, dict) else next(iter(x.values()))
    batch = jax.device_put(np.asarray(first)[:BATCH], distribution.get_data_layout((BATCH, *np.shape(first)[1:])).backend_layout)
    assert [path.split("/")[-1] for path, _ in one] == [path.split("/")[-1] for path, _ in four]
    # Relative to the variable's scale where that is above 1 (InstDisc's normaliser Z is ~1e3).
    errors = {path: float(np.max(np.abs(a.astype("float64") - b.astype("float64")), initial=0.0)
                          / max(1.0, float(np.max(np.abs(a.astype("float64")), initial=0.0))))
              for (path, a), (_, b) in zip(one, four) if np.issubdtype(a.dtype, np.number)}
    worst = max(errors, key=errors.get)
    return {
        "devices": len(jax.devices()),
        "batch_shards": len({tuple(s.index[0].indices(BATCH)) for s in batch.addressable_shards}),
        "steps": len(next(iter(one_logs.values()))),
        # Keras logs running means: the per-step values differ from each other, which is what is compared.
        "losses": {k: (one_logs[k], four_logs[k]) for k in one_logs},
        "worst_variable": {"path": worst, "error": errors[worst]},
        "moved": moved,  # the largest optimizer slot: gradients reached the optimizer
        "paths_compared": len(errors),
    }


if __name__ == "__main__":
    import traceback

    results = {}
    for name in sys.argv[1:]:
        try:
            results[name] = _measure(name)
        except Exception:  # reported per trainer by the test
            results[name] = {"error": traceback.format_exc(limit=-3)}
    print("RESULTS " + json.dumps(results))
