"""`python -m benchmarks ssl-table`: every self-supervised method on one small backbone, data and budget, 3 seeds.

    python -m benchmarks ssl-table --budget cpu --workers 2      # the full table (resumes: finished runs skipped)
    python -m benchmarks ssl-table --budget cpu --aggregate-only # table.md / table.json from the runs so far
    python -m benchmarks ssl-table --budget smoke                # a few updates of everything (seconds each)

Rows: random init and supervised (the shared ResNet untrained, and trained with labels for the
same updates), then MoCo v1/v2, SimCLR, BYOL, InstDisc, InvaSpread, CMC, CPC, SwAV,
DeepCluster, DenseCL, MAE, BEiT and iGPT (`methods.py`: how each is built; `runs.py`: one run
and its evaluation; `table.py`: the aggregate; `references.py`: lightly's and solo-learn's
CIFAR-10 figures beside ours). Each (row, seed) run writes its JSON under
OUTPUT/RUN_ID/runs/; the table is written after every run and at the end.

`--workers N` starts N processes, process k pinned to CPU k with one compute thread (JAX:
`--xla_cpu_multi_thread_eigen=false`), each taking the next run nobody has claimed (the
heaviest rows first, `methods.SECONDS_PER_UPDATE`), logging to $TMPDIR/ssl_table_RUN_ID_workerK.log.
Run it under `nice -n 19` on a shared machine.
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from benchmarks.ssl_table import methods

DEFAULT_OUTPUT = pathlib.Path(__file__).resolve().parents[1] / "results" / "ssl_table"
# Budgets. cpu: MNIST at 16 x 16, sized by timing one run of each method on one core (benchmarks/README.md).
BUDGETS = {
    "smoke": {"dataset": "digits", "image_size": 16, "train_images": 128, "test_images": 64, "batch_size": 64,
              "updates": 2, "probe_epochs": 1, "backbone": "tiny", "igpt_image_size": 4},
    "cpu": {"dataset": "mnist", "image_size": 16, "train_images": 4000, "test_images": 2000, "batch_size": 64,
            "updates": 2170, "probe_epochs": 100, "backbone": "tiny", "igpt_image_size": 8},
}
DEFAULT_SEEDS = (0, 1, 2)
DATA_SEED = 0  # the training and test subsets: the same for every run


def add_arguments(parser):
    parser.add_argument("--budget", default="cpu", choices=sorted(BUDGETS))
    parser.add_argument("--rows", nargs="+", default=list(methods.ROWS), choices=methods.ROWS,
                        help="rows to run (default all)")
    parser.add_argument("--seeds", nargs="+", type=int, default=list(DEFAULT_SEEDS))
    parser.add_argument("--updates", type=int, default=0, help="override the budget's updates per run")
    parser.add_argument("--backbone", choices=sorted(methods.BACKBONES), help="override the budget's ResNet")
    parser.add_argument("--workers", type=int, default=1,
                        help="processes, each pinned to one CPU with one thread (1: this process, unpinned)")
    parser.add_argument("--cpu", type=int, help=argparse_suppress())
    parser.add_argument("--output", default=str(DEFAULT_OUTPUT), help="the results folder (RUN_ID goes under it)")
    parser.add_argument("--run-id", help="the folder of this table (default: the budget's name and backend)")
    parser.add_argument("--aggregate-only", action="store_true", help="write the table from the finished runs")


def argparse_suppress():
    import argparse

    return argparse.SUPPRESS


def budget_of(args, backend):
    budget = dict(BUDGETS[args.budget], name=args.budget, seeds=list(args.seeds), backend=backend)
    if args.updates:
        budget["updates"] = args.updates
    if args.backbone:
        budget["backbone"] = args.backbone
    return budget


def run_dir_of(args, budget):
    run_id = args.run_id or "_".join([budget["name"], budget["backend"]]
                                     + ([f"u{budget['updates']}"] if args.updates else [])
                                     + ([budget["backbone"]] if args.backbone else []))
    return pathlib.Path(args.output) / run_id


def check_budget(run_dir, budget):
    """Write RUN_DIR/budget.json, or refuse in one line when the folder holds another budget's runs."""
    path = run_dir / "budget.json"
    keys = [k for k in budget if k not in ("seeds", "workers")]
    if path.exists():
        stored = json.loads(path.read_text())
        differ = [k for k in keys if stored.get(k) != budget[k]]
        if differ:
            raise SystemExit(f"ssl-table: {run_dir} holds runs of another budget ({', '.join(differ)} differ: "
                             f"{ {k: stored.get(k) for k in differ} }); pass another --run-id.")
        budget = {**stored, "seeds": sorted(set(stored.get("seeds", [])) | set(budget["seeds"])),
                  "workers": max(stored.get("workers", 1), budget.get("workers", 1))}
    run_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(budget, indent=2, sort_keys=True) + "\n")
    return budget


def load_data(budget):
    from keras_paperzoo.reproductions import common

    return common.load_images(budget["dataset"], budget["train_images"], budget["test_images"], DATA_SEED,
                              budget["image_size"], "rgb")


def work(args, run_dir, budget):
    """Run every unclaimed (row, seed) of the table in this process, the table after each; the number that failed.

    A run that raises leaves RUN_DIR/runs/ROW_seedS.error (its traceback) and the others go on; it is
    tried again by the next invocation.
    """
    import traceback

    from benchmarks.ssl_table import runs, table

    data = load_data(budget)
    failed = 0
    rows = sorted(args.rows, key=lambda row: -methods.SECONDS_PER_UPDATE.get(row, 0.0))  # heaviest first
    for seed in args.seeds:
        for row in rows:
            if not runs.claim(run_dir, row, seed):
                continue
            try:
                start = time.perf_counter()
                print(f"[ssl-table] {row} seed {seed}: start (load {os.getloadavg()[0]:.1f})", flush=True)
                error = runs.result_path(run_dir, row, seed).with_suffix(".error")
                try:
                    record = runs.run_one(row, seed, data, budget)
                except Exception:  # noqa: BLE001  (recorded; the table goes on without this run)
                    error.write_text(traceback.format_exc())
                    print(f"[ssl-table] {row} seed {seed}: FAILED, see {error}", flush=True)
                    failed += 1
                    continue
                error.unlink(missing_ok=True)
                runs.write_json(runs.result_path(run_dir, row, seed), record)
                print(f"[ssl-table] {row} seed {seed}: kNN {record['knn_percent']} (init "
                      f"{record['knn_percent_at_init']}), probe {record['probe_percent']}, "
                      f"{(time.perf_counter() - start) / 60:.1f} min", flush=True)
            finally:
                runs.release(run_dir, row, seed)
            table.aggregate(run_dir)
    return failed


def spawn_workers(args, argv, run_dir):
    """`--workers N`: N children of this command, child k pinned to CPU k with one thread; wait for them."""
    from benchmarks.turns import thread_env

    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(args.workers))
    children = []
    for k in range(args.workers):
        cmd = [sys.executable, "-m", "benchmarks", "ssl-table", *argv, "--workers", "1", "--cpu",
               str(cpus[k % len(cpus)])]
        log_path = pathlib.Path(tempfile.gettempdir()) / f"ssl_table_{run_dir.name}_worker{k}.log"
        log = open(log_path, "a")
        children.append((subprocess.Popen(cmd, env={**os.environ, **thread_env(1)}, stdout=log,
                                          stderr=subprocess.STDOUT), log))
        print(f"[ssl-table] worker {k}: pid {children[-1][0].pid}, cpu {cpus[k % len(cpus)]}, log {log_path}",
              flush=True)
    failed = 0
    for child, log in children:
        failed |= child.wait() != 0
        log.close()
    return failed


def _without_workers(argv):
    out, skip = [], False
    for item in argv:
        if skip:
            skip = False
            continue
        if item in ("--workers", "--cpu"):
            skip = True
            continue
        if item.startswith(("--workers=", "--cpu=")):
            continue
        out.append(item)
    return out


def main(args, argv=()):
    if args.cpu is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.cpu})  # before any framework loads (benchmarks/turns.py, start_worker)
    os.environ.setdefault("KERAS_BACKEND", "jax")
    backend = os.environ["KERAS_BACKEND"]
    budget = budget_of(args, backend)
    budget["workers"] = args.workers
    run_dir = run_dir_of(args, budget)
    from benchmarks.ssl_table import table

    if args.aggregate_only:
        table.aggregate(run_dir)
        print((run_dir / "table.md").read_text())
        return 0
    check_budget(run_dir, budget)
    if args.workers > 1:
        failed = spawn_workers(args, _without_workers(list(argv)), run_dir)
    else:
        failed = work(args, run_dir, budget)
    table.aggregate(run_dir)
    print((run_dir / "table.md").read_text())
    print(f"[ssl-table] {run_dir}")
    return int(bool(failed))
