"""Benchmark the GAN training step (Goodfellow et al. 2014, MNIST) on every Keras backend.

Runs `GAN.from_preset("gan_mnist")` with `compile()`'s defaults (the paper's two
momentum SGDs) on random MNIST-shaped data, one subprocess per Keras backend (with
`KERAS_BACKEND` set) plus one for a plain eager PyTorch implementation of the same
networks and step (`benchmarks/torch_reference/gan_mnist.py`), and prints:
steps/s, images/s, the ratio to the PyTorch reference, peak RSS and model-FLOP
utilisation (MFU).

    python benchmarks/gan_step.py [--steps N] [--repeats R] [--batch-size 100] [--json out.json]

What is timed (see benchmarks/README.md):

- Keras "fit": `gan.fit(x, batch_size=B, epochs=1, shuffle=False, verbose=0)` on a
  NumPy array of N * B images (one epoch = N steps), called R + 1 times; each call
  is timed (wall and process CPU) up to a synchronisation on the model's weights.
  The first call (tracing / XLA compilation) is the warmup and is dropped; the
  headline is the median over the other R calls. fit()'s per-call setup (data
  adapter, callbacks, JAX state sync) is included, as in any training epoch.
- Keras "bare step": the backend's compiled `train_step` called in a Python loop on
  one batch already converted to a backend tensor (no `fit`, no data adapter, no
  callbacks): `tf.function(train_step, jit_compile=gan.jit_compile)` on TensorFlow,
  `jax.jit(train_step, donate_argnums=0)` on JAX (as Keras's own), `train_step` on
  torch. N warmup steps, then R repeats of N steps.
- PyTorch reference: N warmup steps, then R repeats of N steps.

All subprocesses are started together and then take turns: the parent lets one
process run one timed block (one warmup, one fit() call or one block of N bare steps)
while the others wait on a pipe, round-robin (the order rotates every round). So
every backend is timed under the same background load, which on a shared 2-core
machine drifts by minutes; warmups and imports are never overlapped with a timed block.

MFU = (analytic matmul FLOPs per step x steps/s) / peak (default 250 GFLOP/s); the
FLOP count is `common.gan_step_flops` and is printed with the table.
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import common  # noqa: E402
import turns  # noqa: E402

KERAS_BACKENDS, REFERENCE, ALL_RUNS = turns.KERAS_BACKENDS, turns.REFERENCE, turns.ALL_RUNS


# --------------------------------------------------------------------------------------
# Workers (run in a subprocess each)
# --------------------------------------------------------------------------------------
def phases(run, args):
    """The timed blocks of one run, in order: every run has a fit warmup and repeats."""
    names = ["fit:warmup"] + [f"fit:{i}" for i in range(args.repeats)]
    if run != REFERENCE and "step" in args.modes:
        names += ["step:warmup"] + [f"step:{i}" for i in range(args.repeats)]
    if run != REFERENCE and "fit" not in args.modes:
        names = names[args.repeats + 1:]
    return names


def worker_reference(args):
    import numpy as np
    import torch

    sys.path.insert(0, os.path.join(HERE, "torch_reference"))
    import gan_mnist

    result = {"run": REFERENCE, "rss_after_import_mb": common.peak_rss_mb()}
    result["torch_threads"] = turns.torch_threads(args.threads)
    result["versions"] = {"torch": torch.__version__}
    result["jit"] = "eager (plain PyTorch)"
    dims = common.PRESET_DIMS[args.preset]
    trainer = gan_mnist.GANStep(seed=0, latent_dim=dims["latent_dim"], g_hidden=dims["g_hidden"],
                                d_units=dims["d_units"], pieces=dims["pieces"])
    result["params"] = {"generator": gan_mnist.count_params(trainer.G),
                        "discriminator": gan_mnist.count_params(trainer.D)}
    rng = np.random.default_rng(0)
    batch = torch.from_numpy(rng.random((args.batch_size, 28, 28, 1), dtype=np.float32))
    out = {}

    def step():
        out.update(trainer.step(batch))

    warm, walls, cpus = turns.time_loop(step, args.steps, args.repeats,
                                   lambda: float(out["d_loss"]), "fit")
    result["warmup_s"] = warm
    result["step"] = turns.rates(walls, cpus, args.steps)
    result["fit"] = result["step"]  # the reference has no fit(); its loop is the step loop
    result["final_losses"] = {k: float(v) for k, v in out.items()}

    # The machine's matmul rate right now (1024^3, fp32), for context under load.
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    for _ in range(3):
        a @ b
    with common.Stopwatch() as sw:
        for _ in range(20):
            a @ b
    result["measured_matmul_gflops"] = 20 * 2 * 1024**3 / sw.wall / 1e9
    return result


def worker_keras(args):
    import numpy as np

    import keras

    import keras_bench

    result = keras_bench.keras_info(args.threads)
    backend = result["run"]
    from keras_paperzoo.models import GAN

    result["rss_after_import_mb"] = common.peak_rss_mb()
    keras_bench.seed(0)
    gan = GAN.from_preset(args.preset, seed=0)
    compile_kwargs = {}
    if args.jit_compile != "auto":
        compile_kwargs["jit_compile"] = args.jit_compile == "true"
    if args.steps_per_execution != 1:
        compile_kwargs["steps_per_execution"] = args.steps_per_execution
    gan.compile(**compile_kwargs)
    result["jit"] = keras_bench.jit_description(backend, gan)
    result["jit_compile"] = bool(gan.jit_compile)
    result["steps_per_execution"] = gan.steps_per_execution
    result["params"] = {"generator": gan.generator.count_params(),
                        "discriminator": gan.discriminator.count_params()}
    expected = common.gan_param_counts(**common.PRESET_DIMS[args.preset])
    if (result["params"]["generator"], result["params"]["discriminator"]) != expected:
        raise RuntimeError(f"preset {args.preset}: parameter counts {result['params']} differ "
                           f"from benchmarks/common.py's PRESET_DIMS ({expected}); the FLOP "
                           "count would be wrong")

    rng = np.random.default_rng(0)
    steps, repeats, bsz = args.steps, args.repeats, args.batch_size
    images = rng.random((steps * bsz, 28, 28, 1), dtype=np.float32)

    def sync_model():
        # Wait for every dispatched step (JAX is asynchronous).
        for v in (gan.generator.weights[-1], gan.discriminator.weights[-1]):
            keras.ops.convert_to_numpy(v)

    if "fit" in args.modes:
        warm, walls, cpus, history = keras_bench.timed_fits(
            gan, {"x": images, "batch_size": bsz}, repeats, sync_model)
        result["warmup_s"] = warm
        result["fit"] = turns.rates(walls, cpus, steps)
        result["final_losses"] = {k: float(v[-1]) for k, v in history.history.items()}

    # ---- bare compiled train_step ------------------------------------------------
    if "step" in args.modes:
        step, sync = keras_bench.bare_step(gan, images[:bsz])
        warm, walls, cpus = turns.time_loop(step, steps, repeats, sync, "step")
        result["step_warmup_s"] = warm
        result["step"] = turns.rates(walls, cpus, steps)
    return result


# --------------------------------------------------------------------------------------
# Parent
# --------------------------------------------------------------------------------------
def make_worker(run, args, tmp):
    """The subprocess of one run (a Keras backend or the reference)."""
    flags = ["--steps", str(args.steps), "--repeats", str(args.repeats), "--batch-size", str(args.batch_size),
             "--jit-compile", args.jit_compile, "--steps-per-execution", str(args.steps_per_execution),
             "--preset", args.preset]
    return turns.worker_process(__file__, run, args, flags, phases(run, args), tmp)


def run_all(args, log):
    """Every run, timed blocks in rotating round-robin (or one run after another with
    `--sequential`: no other process of the benchmark runs between its epochs)."""
    return turns.run_turns(args.runs, lambda run, tmp: make_worker(run, args, tmp), log,
                           sequential=args.sequential)


def report(results, flops, args):
    peak = args.peak_gflops * 1e9
    ref = results.get(REFERENCE, {})
    ref_rate = ref.get("fit", {}).get("steps_per_s", {}).get("median")
    rows = []
    for run in args.runs:
        r = results.get(run, {})
        if "error" in r:
            rows.append((run, "FAILED: " + r["error"]) + ("-",) * 9)
            continue
        fit = r.get("fit", {}).get("steps_per_s", {})
        bare = r.get("step", {}).get("steps_per_s", {})
        rate = fit.get("median")
        r["images_per_s"] = rate * args.batch_size if rate else None
        r["mfu"] = rate * flops["total"] / peak if rate else None
        r["ratio_to_reference"] = rate / ref_rate if rate and ref_rate else None
        util = r.get("fit", {}).get("cpu_util", {}).get("median")
        rows.append((
            "keras/" + run if run != REFERENCE else "pytorch reference",
            r.get("jit", "-"),
            turns.fmt(rate, ".2f"),
            f"{turns.fmt(fit.get('min'), '.2f')}-{turns.fmt(fit.get('max'), '.2f')}",
            turns.fmt(r["images_per_s"], ".0f"),
            turns.fmt(r["ratio_to_reference"], ".2f"),
            turns.fmt(bare.get("median") if run != REFERENCE else None, ".2f"),
            turns.fmt(r.get("peak_rss_mb"), ".0f"),
            turns.fmt(r["mfu"] * 100 if r["mfu"] else None, ".1f"),
            turns.fmt(util, ".2f"),
            " -> ".join(turns.fmt(x, ".1f") for x in r.get("loadavg_1min", [])),
        ))
    header = ("backend", "jit setting", "steps/s", "min-max", "images/s", "vs torch",
              "bare step/s", "peak RSS MB", "MFU %", "CPU util", "load avg start -> end")
    print(turns.table(header, rows))
    print()
    threads = f"--threads {args.threads}" if args.threads else "framework default threads"
    print(f"preset {args.preset}, batch {args.batch_size}, {threads}, "
          f"{os.cpu_count()} CPUs; 'vs torch' = steps/s / PyTorch reference steps/s.")
    print(f"steps/s: median over {args.repeats} repeats of {args.steps} steps (batch "
          f"{args.batch_size}) after warmup; Keras = timed fit() calls of N steps, 'bare step/s' = "
          "compiled train_step in a Python loop. CPU util = process CPU s / wall s.")
    print(f"FLOPs per step (matmuls only, fwd 2mnk, bwd 2x fwd): D update "
          f"{flops['d_update'] / 1e9:.3f} G + G update {flops['g_update'] / 1e9:.3f} G = "
          f"{flops['total'] / 1e9:.3f} GFLOP (minimal backward: "
          f"{flops['total_minimal'] / 1e9:.3f} GFLOP); MFU vs {args.peak_gflops:.0f} GFLOP/s.")
    if ref.get("measured_matmul_gflops"):
        print(f"torch 1024^3 fp32 matmul measured during the reference run: "
              f"{ref['measured_matmul_gflops']:.0f} GFLOP/s "
              f"({ref.get('torch_threads')} threads).")
    for run in args.runs:
        r = results.get(run, {})
        extra = []
        if "torch_threads" in r:
            extra.append(f"torch.get_num_threads()={r['torch_threads']}")
        if "tf_threads" in r:
            extra.append(f"tf intra/inter op threads={r['tf_threads']['intra_op']}/"
                         f"{r['tf_threads']['inter_op']} (0 = auto)")
        if "steps_per_execution" in r:
            extra.append(f"steps_per_execution={r['steps_per_execution']}")
        if "warmup_s" in r:
            extra.append(f"warmup {r['warmup_s']:.1f}s")
        if "rss_after_import_mb" in r:
            extra.append(f"RSS after imports {r['rss_after_import_mb']:.0f} MB")
        if "subprocess_s" in r:
            extra.append(f"process {r['subprocess_s']:.0f}s")
        spread = r.get("fit", {}).get("steps_per_s", {}).get("spread")
        if spread is not None:
            extra.append(f"spread (max-min)/median {spread * 100:.0f}%")
        print(f"  {run}: " + "; ".join(extra))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20, help="steps per timed repeat (and warmup)")
    p.add_argument("--repeats", type=int, default=5, help="timed repeats (median reported)")
    p.add_argument("--batch-size", type=int, default=100)
    p.add_argument("--preset", default="gan_mnist", choices=sorted(common.PRESET_DIMS),
                   help="GAN preset (gan_mnist_small: tiny networks, i.e. the per-step "
                   "framework overhead)")
    p.add_argument("--json", help="write all results to this JSON file")
    p.add_argument("--runs", nargs="+", default=list(ALL_RUNS), choices=ALL_RUNS,
                   help="which runs (default: the reference and the three backends)")
    p.add_argument("--modes", nargs="+", default=["fit", "step"], choices=["fit", "step"],
                   help="Keras timings: fit() epochs and/or the bare compiled train_step")
    p.add_argument("--jit-compile", default="auto", choices=["auto", "true", "false"],
                   help="passed to GAN.compile (auto = Keras's default)")
    p.add_argument("--steps-per-execution", type=int, default=1,
                   help="passed to GAN.compile (not allowed >1 on torch)")
    p.add_argument("--threads", type=int, default=0,
                   help="limit every framework to this many compute threads (torch "
                   "set_num_threads, OMP/MKL/TF_NUM_INTRA/INTEROP_THREADS, XLA_FLAGS) and "
                   "pin each process to that many CPUs; 0 = each framework's default")
    p.add_argument("--sequential", action="store_true",
                   help="run the backends one after another instead of interleaving "
                   "their timed blocks (see README: TF fit and tf.data autotune)")
    p.add_argument("--peak-gflops", type=float, default=common.DEFAULT_PEAK_GFLOPS)
    p.add_argument("--worker", choices=ALL_RUNS, help=argparse.SUPPRESS)
    p.add_argument("--result-file", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        turns.run_worker(args, worker_reference, worker_keras)
        return
    flops = common.gan_step_flops(batch_size=args.batch_size,
                                  **common.PRESET_DIMS[args.preset])
    t0 = time.perf_counter()

    def log(message):
        print(f"[{time.perf_counter() - t0:5.0f}s] {message}", flush=True)

    schedule = "one after another" if args.sequential else "turns taken round-robin"
    log(f"starting {', '.join(args.runs)} ({args.steps} steps x {args.repeats} repeats, "
        f"batch {args.batch_size}; {schedule})")
    results = run_all(args, log)
    log("done\n")
    report(results, flops, args)
    if args.json:
        payload = {
            "date": time.strftime("%Y-%m-%d %H:%M:%S"),
            "machine": common.machine_info(),
            "settings": {k: v for k, v in vars(args).items()
                         if k not in ("worker", "result_file", "json")},
            "flops_per_step": flops,
            "results": results,
        }
        with open(args.json, "w") as f:
            json.dump(payload, f, indent=2)
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
