"""`python -m benchmarks`: one subcommand per family, the options every family shares, the runner.

    python -m benchmarks FAMILY [--models ...] [--runs ...] [--modes fit step] [--steps N]
        [--repeats R] [--warmup W] [--batch-size B] [--device cpu|gpu] [--threads T]
        [--sequential | --pairs] [--json out.json] [family options]
    python -m benchmarks report results/some.json     # the tables of a saved payload
    python -m benchmarks profile-lm | profile-ops ...  # the profilers
    python -m benchmarks ssl-table [--budget cpu|smoke] [--workers N]  # every SSL method, one table (ssl_table/)

The runner (`run_family`) is the same for every family: per batch of runs (by default one
per model: the reference and the Keras backends together; `--pairs`: one per Keras backend
with its own reference), start one process per run and play their timed blocks in turns
(`turns.py`), then derive and print the model's table and save the payload (`report.py`).
A family module (`families/`) only says how to build its step on each side.
"""

import argparse
import collections
import json
import os
import sys
import time

from . import profile_lm, profile_ops, report, ssl_table, turns
from .families import FAMILIES

REFERENCE, ALL_RUNS = turns.REFERENCE, turns.ALL_RUNS


# --------------------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------------------
def shared_options(spec):
    """{flag: add_argument keywords} of the options every family has, with `spec`'s defaults."""
    models, batch, steps = spec.MODELS, getattr(spec, "BATCH", {}), getattr(spec, "STEPS", {})
    return {
        "--models": dict(nargs="+", default=list(getattr(spec, "DEFAULT_MODELS", models)), choices=models),
        "--runs": dict(nargs="+", default=list(getattr(spec, "RUNS", ALL_RUNS)), choices=ALL_RUNS,
                       help="the PyTorch reference and the Keras backends to run"),
        "--modes": dict(nargs="+", default=list(getattr(spec, "MODES", ["fit"])), choices=["fit", "step"],
                        help="Keras timings: fit() epochs and/or the bare compiled train_step"),
        "--steps": dict(type=int, default=0, help=f"steps per timed block (0: per model, {steps})"),
        "--repeats": dict(type=int, default=getattr(spec, "REPEATS", 3), help="timed blocks (median reported)"),
        "--warmup": dict(type=int, default=getattr(spec, "WARMUP", 0),
                         help="untimed steps of a bare-step or reference warmup (0: one block of --steps; "
                         "a fit() warmup is one epoch)"),
        "--batch-size": dict(type=int, default=0, help=f"0: per model, {batch}"),
        "--device": dict(default=getattr(spec, "DEVICES", ("cpu",))[0], choices=getattr(spec, "DEVICES", ("cpu",)),
                         help="cpu: every process sees no accelerator (JAX_PLATFORMS=cpu)"),
        "--threads": dict(type=int, default=0,
                          help="limit every framework to this many compute threads (torch set_num_threads, "
                          "OMP/MKL/TF_NUM_INTRA/INTEROP_THREADS, XLA_FLAGS) and pin each process to that many "
                          "CPUs; 0 = each framework's default"),
        "--sequential": dict(action="store_true",
                             help="one process after another instead of taking turns round-robin"),
        "--pairs": dict(action="store_true",
                        help="one set of turns per Keras backend with its own reference process (half the "
                        "memory of four processes at once; each ratio against its own pair's reference)"),
        "--reference-python": dict(default=os.environ.get("BENCH_REFERENCE_PYTHON"),
                                   help="the interpreter of the PyTorch reference's process (its environment "
                                   "needs torch and the reference's packages: timm, "
                                   "transformers; default $BENCH_REFERENCE_PYTHON, else this one)"),
        "--run-timeout": dict(type=int, default=getattr(spec, "RUN_TIMEOUT", 0),
                              help="seconds before a run's process is killed and reported failed (0: never)"),
        "--peak-gflops": dict(type=float, default=None,
                              help=f"the MFU denominator (default per device: {report.DEFAULT_PEAK_GFLOPS})"),
        "--json": dict(help="write the payload (report.py) to this file, after every batch of runs"),
    }


def add_options(parser, spec, names=None, **defaults):
    """Add the shared options (`names`: only those) to `parser`, with `defaults` overriding."""
    for flag, kwargs in shared_options(spec).items():
        if names is not None and flag not in names:
            continue
        dest = flag[2:].replace("-", "_")
        if dest in defaults:
            kwargs = dict(kwargs, default=defaults[dest])
        parser.add_argument(flag, **kwargs)


class _NoModels:
    MODELS = ()


def build_parser():
    p = argparse.ArgumentParser(
        prog="python -m benchmarks", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="keras-paperzoo's training steps against PyTorch references, every framework in its own "
        "process, timed in turns. See benchmarks/README.md.")
    sub = p.add_subparsers(dest="family", required=True, metavar="FAMILY")
    for name, spec in FAMILIES.items():
        sp = sub.add_parser(name, help=spec.__doc__.splitlines()[0], description=spec.__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
        add_options(sp, spec)
        if hasattr(spec, "add_arguments"):
            spec.add_arguments(sp)
        sp.add_argument("--worker", choices=ALL_RUNS, help=argparse.SUPPRESS)
        sp.add_argument("--settings", help=argparse.SUPPRESS)
        sp.add_argument("--result-file", help=argparse.SUPPRESS)
    sp = sub.add_parser("report", help="print the tables of payloads written by --json (old scripts' too)")
    sp.add_argument("files", nargs="+")
    for name, tool in (("profile-lm", profile_lm), ("profile-ops", profile_ops)):
        sp = sub.add_parser(name, help=tool.__doc__.splitlines()[0], description=tool.__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
        tool.add_arguments(sp, lambda parser, names, **d: add_options(parser, _NoModels, names, **d))
    sp = sub.add_parser("ssl-table", help=ssl_table.__doc__.splitlines()[0], description=ssl_table.__doc__,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    ssl_table.add_arguments(sp)
    return p


# --------------------------------------------------------------------------------------
# The runner
# --------------------------------------------------------------------------------------
def model_settings(spec, args, model):
    """`args` with this model's batch size, steps and MFU peak filled in (what its workers receive)."""
    margs = argparse.Namespace(**vars(args))
    margs.model = model
    margs.batch_size = args.batch_size or spec.BATCH[model]
    margs.steps = args.steps or spec.STEPS[model]
    margs.peak_gflops = args.peak_gflops or report.DEFAULT_PEAK_GFLOPS[args.device]
    if hasattr(spec, "configure"):
        spec.configure(margs)
    return margs


def schedule(spec, args):
    """[(model, runs, {run: name in the results})]: the batches of runs that take turns together."""
    if hasattr(spec, "schedule"):
        return spec.schedule(args)
    if not args.pairs:
        return [(model, list(args.runs), {}) for model in args.models]
    return [(model, [REFERENCE, run], {REFERENCE: f"{REFERENCE}@{run}"})
            for model in args.models for run in args.runs if run != REFERENCE]


def new_entry(spec, margs):
    threads = f"--threads {margs.threads}" if margs.threads else "framework default threads"
    warmup = f", warmup {margs.warmup} steps" if margs.warmup else ""
    heading = (f"{spec.heading(margs) if hasattr(spec, 'heading') else f'batch {margs.batch_size}'}, "
               f"{margs.steps} steps x {margs.repeats} repeats{warmup}, {threads}, device {margs.device}")
    return {"heading": heading, "batch_size": margs.batch_size, "steps": margs.steps, "repeats": margs.repeats,
            "modes": list(margs.modes), "item": getattr(spec, "ITEM", "images"),
            "items_per_step": spec.items_per_step(margs) if hasattr(spec, "items_per_step") else margs.batch_size,
            "flops_per_step": spec.step_flops(margs), "loadavg_start": os.getloadavg(), "results": {}}


def run_family(spec, args):
    """Run every batch of `schedule`, print each model's table when its last batch is done; the payload."""
    args.peak_gflops = args.peak_gflops or report.DEFAULT_PEAK_GFLOPS[args.device]
    payload = report.new_payload(spec.NAME, args)
    phases = getattr(spec, "phases", turns.phases)
    batches = schedule(spec, args)
    left = collections.Counter(model for model, _, _ in batches)
    t0 = time.perf_counter()

    def log(message):
        print(f"[{time.perf_counter() - t0:5.0f}s] {message}", flush=True)

    for model, runs, names in batches:
        margs = model_settings(spec, args, model)
        if model not in payload["models"]:
            payload["models"][model] = new_entry(spec, margs)
        entry = payload["models"][model]
        log(f"{model}: {', '.join(runs)} ({entry['heading']}; load {turns.loadavg():.1f})")
        results = turns.run_turns(
            runs, lambda run, tmp: turns.worker_process(spec.NAME, run, margs, phases(run, margs), tmp),
            log, sequential=args.sequential or getattr(spec, "SEQUENTIAL", False))
        for run, result in results.items():
            entry["results"][names.get(run, run)] = result
        report.derive(entry, args.peak_gflops)
        for run in results:
            r = entry["results"][names.get(run, run)]
            log(f"{model} {names.get(run, run)}: "
                + (r["error"][:200] if "error" in r else f"{report.rate_fmt(r['steps_per_s'])} steps/s"))
        left[model] -= 1
        entry["loadavg_end"] = os.getloadavg()
        if not left[model]:
            print(report.model_table(model, entry, args.peak_gflops), flush=True)
        payload["loadavg_end"], payload["wall_s"] = os.getloadavg(), time.perf_counter() - t0
        if args.json:
            report.save(payload, args.json)
    log("done")
    print(report.summary(payload))
    print(report.load_line(payload))
    if args.json:
        print(f"wrote {args.json}")
    return payload


def run_worker(spec, args):
    """The worker side of `python -m benchmarks FAMILY --worker RUN --settings JSON --result-file F`."""
    wargs = argparse.Namespace(**json.loads(args.settings))
    wargs.worker, wargs.result_file = args.worker, args.result_file
    turns.run_worker(wargs, spec.worker_reference, spec.worker_keras)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    if args.family == "ssl-table":
        return ssl_table.main(args, argv[argv.index("ssl-table") + 1:])
    if args.family == "report":
        failed = 0
        for path in args.files:
            print(f"## {path}")
            try:
                print(report.render(report.load(path)))
            except (ValueError, KeyError) as error:
                print(f"cannot read it: {error}")
                failed = 1
        return failed
    if args.family in ("profile-lm", "profile-ops"):
        return (profile_lm if args.family == "profile-lm" else profile_ops).main(args) or 0
    spec = FAMILIES[args.family]
    if args.worker:
        run_worker(spec, args)
        return 0
    run_family(spec, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
