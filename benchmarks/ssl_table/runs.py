"""One (row, seed) run of the table: build, evaluate at initialisation, train, evaluate; its JSON record.

Each run writes RUN_DIR/runs/<row>_seed<seed>.json (atomically, when it is done), so a command
started again skips the finished ones, and several processes fill one table: a process claims a
run by creating RUN_DIR/runs/<row>_seed<seed>.claim (O_EXCL, holding its pid); a claim whose
process is gone is taken over.

The evaluation (the same for every row, on features computed once from the un-augmented test
and training images): kNN top-1 (k = 200, cosine, exp(s / 0.1) votes: InstDisc's protocol, as
lightly's benchmark) and the linear probe top-1 (MAE's protocol, He et al. 2022, App. A.2: a
batch norm without affine parameters, then one linear layer, SGD momentum 0.9 at
0.1 x batch / 256, `probe_epochs` epochs, /10 at 60 % and 80 %; the batch norm lets one rate
suit every encoder, ResNet or ViT).
"""

import datetime
import json
import os
import pathlib
import platform
import time

from benchmarks.ssl_table import methods


def run_name(row, seed):
    return f"{row}_seed{seed}"


def result_path(run_dir, row, seed):
    return pathlib.Path(run_dir) / "runs" / f"{run_name(row, seed)}.json"


def write_json(path, value):
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps(value, indent=2, sort_keys=True) + "\n")
    os.replace(partial, path)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def claim(run_dir, row, seed):
    """True when this process may run (row, seed): not finished, and not claimed by a live process."""
    if result_path(run_dir, row, seed).exists():
        return False
    path = result_path(run_dir, row, seed).with_suffix(".claim")
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            try:
                pid = int(path.read_text() or 0)
            except (OSError, ValueError):
                pid = 0
            if pid and _alive(pid):
                return False
            path.unlink(missing_ok=True)  # its process is gone: take the run over
            continue
        with os.fdopen(fd, "w") as f:
            f.write(str(os.getpid()))
        return True
    return False


def release(run_dir, row, seed):
    result_path(run_dir, row, seed).with_suffix(".claim").unlink(missing_ok=True)


def evaluate(train_features, y_train, test_features, y_test, probe_epochs, seed):
    """{"knn_percent", "probe_percent"} of frozen features (module docstring)."""
    import keras

    from keras_paperzoo.evaluation import knn_accuracy, linear_probe

    knn = knn_accuracy(train_features, y_train, test_features, y_test, k=min(200, len(y_train)))
    batch = min(256, len(y_train))
    identity = keras.Sequential([keras.Input((train_features.shape[1],)), keras.layers.Identity()])
    probe = linear_probe(identity, (train_features, y_train), (test_features, y_test), epochs=probe_epochs,
                         batch_size=batch, learning_rate=0.1 * batch / 256, batch_norm=True, seed=seed)
    return {"knn_percent": round(100 * float(knn), 2), "probe_percent": round(100 * float(probe["accuracy"]), 2)}


def versions():
    import keras

    out = {"python": platform.python_version(), "keras": keras.__version__}
    backend = keras.backend.backend()
    try:
        module = {"jax": "jax", "tensorflow": "tensorflow", "torch": "torch"}[backend]
        out[module] = __import__(module).__version__
    except (KeyError, ImportError):
        pass
    try:
        import keras_paperzoo

        out["keras_paperzoo"] = getattr(keras_paperzoo, "__version__", "dev")
    except ImportError:
        pass
    return out


def run_one(row, seed, data, budget):
    """Train and evaluate row `row` at `seed` on `data`; the record (module docstring)."""
    import gc

    import keras

    keras.backend.clear_session()  # a worker runs many rows: drop the last one's models and compiled functions
    gc.collect()
    wall0, cpu0 = time.perf_counter(), time.process_time()
    x_train, y_train, x_test, y_test = data
    prepared = methods.prepare(row, data, budget, seed)

    def measure():
        start = time.perf_counter()
        result = evaluate(prepared.features(x_train), y_train, prepared.features(x_test), y_test,
                          budget["probe_epochs"], seed)
        return result, time.perf_counter() - start

    at_init, init_seconds = measure()
    train_start = time.perf_counter()
    trained = prepared.train()
    train_seconds = time.perf_counter() - train_start
    final, eval_seconds = measure() if row != methods.RANDOM_INIT else (at_init, 0.0)
    return {
        "row": row, "label": methods.LABELS[row], "seed": seed, "encoder": methods.encoder_of(row),
        "knn_percent": final["knn_percent"], "probe_percent": final["probe_percent"],
        "knn_percent_at_init": at_init["knn_percent"], "probe_percent_at_init": at_init["probe_percent"],
        "updates": trained["updates"], "final_loss": trained["final_loss"],
        **{k: v for k, v in trained.items() if k not in ("updates", "final_loss")},
        "encoder_parameters": prepared.parameters,
        "minutes": round((time.perf_counter() - wall0) / 60, 2),
        "cpu_minutes": round((time.process_time() - cpu0) / 60, 2),
        "train_minutes": round(train_seconds / 60, 2),
        "evaluation_minutes": round((init_seconds + eval_seconds) / 60, 2),
        "loadavg_end": [round(v, 2) for v in os.getloadavg()],
        "budget": budget, "backend": keras.backend.backend(), "device": "cpu",
        "cpus": sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "date": datetime.datetime.now().isoformat(timespec="seconds"), "versions": versions(),
    }
