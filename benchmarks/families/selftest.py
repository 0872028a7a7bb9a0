"""The harness itself, in seconds: a pure-Python step in every run's process, no framework imported.

Every run (the "reference" and each "Keras backend") times the same loop of `--batch-size`
multiply-adds per step through the real machinery: one process per run, timed blocks in
turns (`turns.py`), the reference loop and the alternating fit / bare-step turns
(`workers.run_reference_loop`), the report and the JSON payload (`report.py`). Its numbers
say nothing about any framework; it is what `tests/test_benchmarks_cli.py` runs.

    python -m benchmarks selftest --json /tmp/selftest.json
"""

from .. import turns, workers

MODELS = ("python_loop",)
BATCH = {"python_loop": 1000}
STEPS = {"python_loop": 2}
REPEATS = 2
MODES = ["fit", "step"]
ITEM = "items"


def step_flops(args):
    return {"total": 2 * args.batch_size, "description": f"2 x {args.batch_size} multiply-adds"}


def _step(rows):
    total = 0.0
    for i in range(len(rows)):
        total += rows[i] * 0.5
    return total


def _run(args, result):
    rows = [float(i) for i in range(args.steps * args.batch_size)]
    result.setdefault("model", "a Python loop of multiply-adds")
    result["params"] = 0
    return workers.run_reference_loop(result, _step, (rows,), args)


def worker_reference(args):
    return _run(args, {"run": turns.REFERENCE, "jit": "Python"})


def worker_keras(args):
    return _run(args, {"run": args.worker, "jit": "Python (no Keras imported)"})
