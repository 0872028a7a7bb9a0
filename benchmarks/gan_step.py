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
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import common  # noqa: E402

KERAS_BACKENDS = ("jax", "tensorflow", "torch")
REFERENCE = "torch_reference"
ALL_RUNS = (REFERENCE,) + KERAS_BACKENDS


# --------------------------------------------------------------------------------------
# Workers (run in a subprocess each)
# --------------------------------------------------------------------------------------
MARK = "@@gan_step"


def phases(run, args):
    """The timed blocks of one run, in order: every run has a fit warmup and repeats."""
    names = ["fit:warmup"] + [f"fit:{i}" for i in range(args.repeats)]
    if run != REFERENCE and "step" in args.modes:
        names += ["step:warmup"] + [f"step:{i}" for i in range(args.repeats)]
    if run != REFERENCE and "fit" not in args.modes:
        names = names[args.repeats + 1:]
    return names


def wait_turn(phase):
    """Block until the parent says it is this process's turn for `phase`."""
    line = sys.stdin.readline()
    if line.strip() != f"go {phase}":
        raise RuntimeError(f"expected 'go {phase}' from the parent, got {line!r}")


def end_turn(phase):
    sys.stdout.write(f"{MARK} done {phase}\n")
    sys.stdout.flush()


def _time_loop(step, steps, repeats, sync, name):
    """N warmup steps, then `repeats` timed blocks of `steps` steps, each on its turn."""
    wait_turn(f"{name}:warmup")
    with common.Stopwatch() as warm:
        for _ in range(steps):
            step()
        sync()
    end_turn(f"{name}:warmup")
    walls, cpus = [], []
    for i in range(repeats):
        wait_turn(f"{name}:{i}")
        with common.Stopwatch() as sw:
            for _ in range(steps):
                step()
            sync()
        end_turn(f"{name}:{i}")
        walls.append(sw.wall)
        cpus.append(sw.cpu)
    return warm.wall, walls, cpus


def _rates(walls, cpus, steps):
    return {
        "steps_per_s": common.summarize([steps / w for w in walls]),
        "cpu_util": common.summarize([c / w for c, w in zip(cpus, walls)]),
        "wall_s": walls,
    }


def _torch_threads(args):
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    return torch.get_num_threads()


def thread_env(threads):
    """Environment limiting every framework's compute threads to `threads` (0: none)."""
    if not threads:
        return {}
    n = str(threads)
    env = {"OMP_NUM_THREADS": n, "MKL_NUM_THREADS": n,
           "TF_NUM_INTRAOP_THREADS": n, "TF_NUM_INTEROP_THREADS": n}
    if threads == 1:
        env["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"
                            " intra_op_parallelism_threads=1").strip()
    else:
        env["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                            + f" intra_op_parallelism_threads={threads}").strip()
    return env


def worker_reference(args):
    import numpy as np
    import torch

    sys.path.insert(0, os.path.join(HERE, "torch_reference"))
    import gan_mnist

    result = {"run": REFERENCE, "rss_after_import_mb": common.peak_rss_mb()}
    result["torch_threads"] = _torch_threads(args)
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

    warm, walls, cpus = _time_loop(step, args.steps, args.repeats,
                                   lambda: float(out["d_loss"]), "fit")
    result["warmup_s"] = warm
    result["step"] = _rates(walls, cpus, args.steps)
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


def _jit_description(backend, gan):
    if backend == "tensorflow":
        xla = "XLA" if gan.jit_compile else "no XLA"
        return f"tf.function, jit_compile={gan.jit_compile} ({xla})"
    if backend == "jax":
        return "jax.jit (XLA)" if gan.jit_compile else "un-jitted"
    return "torch.compile" if gan.jit_compile else "eager"


def worker_keras(args):
    import numpy as np

    import keras

    backend = keras.backend.backend()
    result = {"run": backend, "rss_after_import_mb": None}
    if backend == "torch":
        result["torch_threads"] = _torch_threads(args)
    from keras_paperzoo.models import GAN

    result["rss_after_import_mb"] = common.peak_rss_mb()
    versions = {"keras": keras.__version__}
    if backend == "jax":
        import jax

        versions["jax"] = jax.__version__
    elif backend == "tensorflow":
        import tensorflow as tf

        versions["tensorflow"] = tf.__version__
        result["tf_threads"] = {
            "intra_op": tf.config.threading.get_intra_op_parallelism_threads(),
            "inter_op": tf.config.threading.get_inter_op_parallelism_threads(),
        }
    else:
        import torch

        versions["torch"] = torch.__version__
    result["versions"] = versions

    # Not keras.utils.set_random_seed: it imports TensorFlow whenever TF is installed
    # (to seed tf.data), adding ~450 MB to the RSS of the JAX and torch processes.
    np.random.seed(0)
    if backend == "torch":
        import torch

        torch.manual_seed(0)
    gan = GAN.from_preset(args.preset, seed=0)
    compile_kwargs = {}
    if args.jit_compile != "auto":
        compile_kwargs["jit_compile"] = args.jit_compile == "true"
    if args.steps_per_execution != 1:
        compile_kwargs["steps_per_execution"] = args.steps_per_execution
    gan.compile(**compile_kwargs)
    result["jit"] = _jit_description(backend, gan)
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

    # ---- fit ---------------------------------------------------------------------
    if "fit" in args.modes:
        # One fit() call (one epoch of N steps) per timed block, not one fit() of R+1
        # epochs with turns taken between epochs: inside a single fit(), TensorFlow's
        # tf.data pipeline (autotune) slows the next epochs 2-4x whenever other
        # processes used the CPU between epochs (README), which the turn-taking causes.
        walls, cpus, history = [], [], None
        for phase in ["fit:warmup"] + [f"fit:{i}" for i in range(repeats)]:
            wait_turn(phase)
            with common.Stopwatch() as sw:
                history = gan.fit(images, batch_size=bsz, epochs=1, shuffle=False, verbose=0)
                sync_model()
            end_turn(phase)
            walls.append(sw.wall)
            cpus.append(sw.cpu)
        result["warmup_s"] = walls[0]
        result["fit"] = _rates(walls[1:], cpus[1:], steps)
        result["final_losses"] = {k: float(v[-1]) for k, v in history.history.items()}

    # ---- bare compiled train_step ------------------------------------------------
    if "step" in args.modes:
        batch = images[:bsz]
        if backend == "tensorflow":
            import tensorflow as tf

            fn = tf.function(gan.train_step, jit_compile=bool(gan.jit_compile),
                             reduce_retracing=True)
            x = tf.constant(batch)
            out = {}

            def step():
                out["logs"] = fn(x)

            def sync():
                keras.ops.convert_to_numpy(out["logs"]["d_loss"])

        elif backend == "jax":
            import jax

            fn = jax.jit(gan.train_step, donate_argnums=0) if gan.jit_compile else gan.train_step
            x = jax.numpy.asarray(batch)
            holder = {"state": (
                [v.value for v in gan.trainable_variables],
                [v.value for v in gan.non_trainable_variables],
                [v.value for v in gan.optimizer.variables],
                [v.value for v in gan.metrics_variables],
            )}
            # Copy, so donation does not delete the model's own buffers.
            holder["state"] = jax.tree_util.tree_map(lambda a: a.copy(), holder["state"])

            def step():
                holder["logs"], holder["state"] = fn(holder["state"], x)

            def sync():
                jax.block_until_ready(holder["state"])

        else:
            import torch

            x = torch.as_tensor(batch)
            out = {}

            def step():
                out["logs"] = gan.train_step(x)

            def sync():
                float(out["logs"]["d_loss"])

        warm, walls, cpus = _time_loop(step, steps, repeats, sync, "step")
        result["step_warmup_s"] = warm
        result["step"] = _rates(walls, cpus, steps)
    return result


def run_worker(args):
    t0 = time.perf_counter()
    load0 = common.loadavg()
    cpus = None
    if args.threads and hasattr(os, "sched_setaffinity"):
        # XLA's CPU runtime (JAX) keeps a thread per core whatever XLA_FLAGS say, so
        # --threads also pins the process to that many CPUs, before any framework loads.
        cpus = sorted(os.sched_getaffinity(0))[: args.threads]
        os.sched_setaffinity(0, cpus)
    result = worker_reference(args) if args.worker == REFERENCE else worker_keras(args)
    result["cpu_affinity"] = cpus
    result["peak_rss_mb"] = common.peak_rss_mb()
    result["loadavg_1min"] = [load0, common.loadavg()]
    result["process_s"] = time.perf_counter() - t0
    with open(args.result_file, "w") as f:
        json.dump(result, f)


# --------------------------------------------------------------------------------------
# Parent
# --------------------------------------------------------------------------------------
class Worker:
    """One benchmark subprocess, driven turn by turn over its stdin/stdout."""

    def __init__(self, run, args, tmp):
        self.run = run
        self.result_file = os.path.join(tmp, f"{run}.json")
        self.stderr_path = os.path.join(tmp, f"{run}.stderr")
        self.phases = phases(run, args)
        self.error = None
        env = dict(os.environ)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        if run != REFERENCE:
            env["KERAS_BACKEND"] = run
        env.update(thread_env(args.threads))
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", run,
               "--result-file", self.result_file, "--steps", str(args.steps),
               "--repeats", str(args.repeats), "--batch-size", str(args.batch_size),
               "--jit-compile", args.jit_compile,
               "--steps-per-execution", str(args.steps_per_execution),
               "--threads", str(args.threads), "--preset", args.preset,
               "--modes", *args.modes]
        self.t0 = time.perf_counter()
        self.stderr = open(self.stderr_path, "w")
        self.proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, text=True)

    def take_turn(self, phase):
        if self.error:
            return
        try:
            self.proc.stdin.write(f"go {phase}\n")
            self.proc.stdin.flush()
            while True:
                line = self.proc.stdout.readline()
                if not line:
                    raise RuntimeError("worker exited")
                if line.startswith(MARK):
                    if line.split()[-1] != phase:
                        raise RuntimeError(f"out of step: {line!r} for {phase}")
                    return
        except (BrokenPipeError, RuntimeError) as exc:
            self.error = str(exc)

    def finish(self):
        if not self.error:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
        self.proc.stdout.read()
        code = self.proc.wait()
        self.stderr.close()
        if code != 0 or self.error:
            with open(self.stderr_path) as f:
                tail = f.read()[-3000:]
            sys.stderr.write(f"--- {self.run} failed ({self.error or code}) ---\n{tail}\n")
            return {"run": self.run, "error": f"{self.error or ''} exit code {code}".strip(),
                    "stderr_tail": tail}
        with open(self.result_file) as f:
            result = json.load(f)
        result["subprocess_s"] = time.perf_counter() - self.t0
        return result


def run_all(args, log):
    """Start every run, then give them their timed blocks in rotating round-robin.

    With `--sequential`, one run at a time instead (each starts after the previous
    one has exited): no other process of the benchmark runs between its epochs.
    """
    if args.sequential:
        results = {}
        with tempfile.TemporaryDirectory() as tmp:
            for run in args.runs:
                worker = Worker(run, args, tmp)
                log(f"{run}: " + ", ".join(worker.phases))
                for phase in worker.phases:
                    worker.take_turn(phase)
                results[run] = worker.finish()
        return results
    with tempfile.TemporaryDirectory() as tmp:
        workers = [Worker(run, args, tmp) for run in args.runs]
        order = []
        for worker in workers:
            for phase in worker.phases:
                if phase not in order:
                    order.append(phase)
        # fit phases of all runs first, then step phases
        order.sort(key=lambda p: (p.split(":")[0] != "fit",))
        for k, phase in enumerate(order):
            turn = [w for w in workers if phase in w.phases]
            if turn:
                shift = k % len(turn)
                turn = turn[shift:] + turn[:shift]
            log(f"{phase}: " + ", ".join(w.run for w in turn))
            for worker in turn:
                worker.take_turn(phase)
        return {w.run: w.finish() for w in workers}


def _fmt(x, spec):
    return format(x, spec) if isinstance(x, (int, float)) else "-"


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
            _fmt(rate, ".2f"),
            f"{_fmt(fit.get('min'), '.2f')}-{_fmt(fit.get('max'), '.2f')}",
            _fmt(r["images_per_s"], ".0f"),
            _fmt(r["ratio_to_reference"], ".2f"),
            _fmt(bare.get("median") if run != REFERENCE else None, ".2f"),
            _fmt(r.get("peak_rss_mb"), ".0f"),
            _fmt(r["mfu"] * 100 if r["mfu"] else None, ".1f"),
            _fmt(util, ".2f"),
            " -> ".join(_fmt(x, ".1f") for x in r.get("loadavg_1min", [])),
        ))
    header = ("backend", "jit setting", "steps/s", "min-max", "images/s", "vs torch",
              "bare step/s", "peak RSS MB", "MFU %", "CPU util", "load avg start -> end")
    widths = [max(len(str(row[i])) for row in rows + [header]) for i in range(len(header))]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " |")
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
        run_worker(args)
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
