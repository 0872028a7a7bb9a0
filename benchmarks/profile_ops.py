"""Time the dominant ops of the vision and SSL steps alone, on JAX (XLA), TensorFlow and PyTorch.

Where the `vision` / `ssl` families show one framework slower on a whole step, this
times the ops those steps spend their FLOPs in, forward and backward, at the steps'
shapes, in one process per framework (fp32, each framework's default threads):

- `dense`: the ViT-S/16 MLP matmul at batch 16, (3152, 384) @ (384, 1536);
- `attention`: the ViT-S/16 attention scores and weighted values, (16, 6, 197, 64);
- `conv_r20`: ResNet-20's stage-1 3x3 conv, 128 x 32 x 32 x 16 -> 16;
- `conv_r50`: ResNet-50's stage-1 3x3 conv, 16 x 56 x 56 x 64 -> 64;
- `conv_r18`: the CIFAR ResNet-18's stage-1 3x3 conv, 128 x 32 x 32 x 64 -> 64.

Each op is timed as "fwd" (the op) and "fwd+bwd" (the gradient of the sum of its
output w.r.t. all its inputs), median of `--repeats` blocks of `--iters` calls after a
warmup. JAX/TF use NHWC (Keras's layout); torch NCHW (its native layout).

    python -m benchmarks profile-ops --frameworks jax torch tensorflow [--ops conv_r20 dense]
    XLA_FLAGS=--xla_cpu_use_onednn=true python -m benchmarks profile-ops --frameworks jax
    python -m benchmarks profile-ops --ops dense --iters 1 --repeats 1   # smoke

Needs no Keras. Prints GFLOP/s per op (FLOPs: 2 m n k / conv 2 H W Cin Cout k^2, x3
for fwd+bwd). `--threads 1` pins every framework to one core and one thread
(`turns.thread_env`) and rates each op by process CPU time instead of wall time: on a
machine shared with other jobs, CPU seconds of a single-threaded process are close to
what the op costs alone, whereas wall time measures the load.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from . import report, turns

OPS = {
    "dense": {"kind": "dense", "m": 16 * 197, "k": 384, "n": 1536},
    "attention": {"kind": "attention", "b": 16, "h": 6, "t": 197, "d": 64},
    "conv_r20": {"kind": "conv", "b": 128, "hw": 32, "cin": 16, "cout": 16, "k": 3},
    "conv_r50": {"kind": "conv", "b": 16, "hw": 56, "cin": 64, "cout": 64, "k": 3},
    "conv_r18": {"kind": "conv", "b": 128, "hw": 32, "cin": 64, "cout": 64, "k": 3},
}


def flops(op):
    if op["kind"] == "dense":
        return 2 * op["m"] * op["k"] * op["n"]
    if op["kind"] == "attention":
        return 2 * (2 * op["b"] * op["h"] * op["t"] * op["t"] * op["d"])
    return 2 * op["b"] * op["hw"] * op["hw"] * op["cin"] * op["cout"] * op["k"] ** 2


def shapes(op, layout):
    """Input shapes of `op` in `layout` ("nhwc" / "nchw")."""
    if op["kind"] == "dense":
        return [(op["m"], op["k"]), (op["k"], op["n"])]
    if op["kind"] == "attention":
        s = (op["b"], op["h"], op["t"], op["d"])
        return [s, s, s]
    x = (op["b"], op["hw"], op["hw"], op["cin"]) if layout == "nhwc" else (op["b"], op["cin"], op["hw"], op["hw"])
    w = (op["k"], op["k"], op["cin"], op["cout"]) if layout == "nhwc" else (op["cout"], op["cin"], op["k"], op["k"])
    return [x, w]


CLOCK = {"fn": time.perf_counter}


def time_calls(fn, sync, iters, repeats):
    """Median seconds per call (wall, or process CPU with --threads 1) over `repeats` blocks."""
    fn()
    sync()
    times = []
    for _ in range(repeats):
        t0 = CLOCK["fn"]()
        for _ in range(iters):
            fn()
        sync()
        times.append((CLOCK["fn"]() - t0) / iters)
    return statistics.median(times)


def run_jax(op, iters, repeats):
    import jax
    import jax.numpy as jnp
    import numpy as np

    rng = np.random.default_rng(0)
    args = [jnp.asarray(rng.standard_normal(s, dtype=np.float32)) for s in shapes(op, "nhwc")]
    if op["kind"] == "dense":
        def f(x, w):
            return x @ w
    elif op["kind"] == "attention":
        def f(q, k, v):
            scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / 8.0  # (B, H, T, T)
            return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores, axis=-1), v)
    else:
        def f(x, w):
            return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    fwd = jax.jit(f)
    bwd = jax.jit(jax.grad(lambda *a: f(*a).sum(), argnums=tuple(range(len(args)))))
    out = {}
    for name, fn in (("fwd", fwd), ("fwd+bwd", bwd)):
        res = {}

        def call():
            res["y"] = fn(*args)

        out[name] = time_calls(call, lambda: jax.block_until_ready(res["y"]), iters, repeats)
    return out, {"jax": jax.__version__, "XLA_FLAGS": os.environ.get("XLA_FLAGS", "")}


def run_tf(op, iters, repeats):
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(0)
    args = [tf.constant(rng.standard_normal(s, dtype=np.float32)) for s in shapes(op, "nhwc")]
    if op["kind"] == "dense":
        def f(x, w):
            return tf.matmul(x, w)
    elif op["kind"] == "attention":
        def f(q, k, v):
            scores = tf.einsum("bhqd,bhkd->bhqk", q, k) / 8.0
            return tf.einsum("bhqk,bhkd->bhqd", tf.nn.softmax(scores, axis=-1), v)
    else:
        def f(x, w):
            return tf.nn.conv2d(x, w, 1, "SAME")
    fwd = tf.function(f)

    @tf.function
    def bwd(*a):
        with tf.GradientTape() as tape:
            tape.watch(a)
            y = tf.reduce_sum(f(*a))
        return tape.gradient(y, a)

    out = {}
    for name, fn in (("fwd", fwd), ("fwd+bwd", bwd)):
        res = {}

        def call():
            res["y"] = fn(*args)

        out[name] = time_calls(call, lambda: np.asarray(tf.nest.flatten(res["y"])[0]), iters, repeats)
    return out, {"tensorflow": tf.__version__}


def run_torch(op, iters, repeats):
    import numpy as np
    import torch
    from torch.nn import functional as F

    rng = np.random.default_rng(0)
    args = [torch.from_numpy(rng.standard_normal(s, dtype=np.float32)).requires_grad_()
            for s in shapes(op, "nchw")]
    if op["kind"] == "dense":
        def f(x, w):
            return x @ w
    elif op["kind"] == "attention":
        def f(q, k, v):
            return F.scaled_dot_product_attention(q, k, v)
    else:
        def f(x, w):
            return F.conv2d(x, w, padding=op["k"] // 2)

    def fwd():
        with torch.no_grad():
            f(*args)

    def bwd():
        for a in args:
            a.grad = None
        f(*args).sum().backward()

    out = {name: time_calls(fn, lambda: None, iters, repeats) for name, fn in (("fwd", fwd), ("fwd+bwd", bwd))}
    return out, {"torch": torch.__version__, "threads": torch.get_num_threads()}


def worker(framework, ops, iters, repeats, threads):
    turns.start_worker(threads)
    if threads == 1:
        CLOCK["fn"] = time.process_time
    runner = {"jax": run_jax, "tensorflow": run_tf, "torch": run_torch}[framework]
    results = {}
    for name in ops:
        times, info = runner(OPS[name], iters, repeats)
        results[name] = {mode: {"ms": t * 1e3, "gflops": flops(OPS[name]) * (1 if mode == "fwd" else 3) / t / 1e9}
                         for mode, t in times.items()}
    results["info"] = info
    print(json.dumps(results))


def add_arguments(p, add_shared):
    p.add_argument("--frameworks", nargs="+", default=["torch", "jax", "tensorflow"],
                   choices=["torch", "jax", "tensorflow"])
    p.add_argument("--ops", nargs="+", default=list(OPS), choices=list(OPS))
    p.add_argument("--iters", type=int, default=5)
    add_shared(p, ["--repeats", "--threads", "--json"])
    p.add_argument("--worker", help=argparse.SUPPRESS)


def main(args):
    if args.worker:
        worker(args.worker, args.ops, args.iters, args.repeats, args.threads)
        return
    all_results = {"loadavg_start": os.getloadavg(), "machine": report.machine_info()}
    for fw in args.frameworks:  # one process per framework, one after another
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", **turns.thread_env(args.threads))
        env["PYTHONPATH"] = os.pathsep.join([turns.ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p])
        proc = subprocess.run([sys.executable, "-m", "benchmarks", "profile-ops", "--worker", fw, "--ops", *args.ops,
                               "--iters", str(args.iters), "--repeats", str(args.repeats),
                               "--threads", str(args.threads)],
                              env=env, capture_output=True, text=True)
        if proc.returncode:
            print(f"{fw} failed:\n{proc.stderr[-2000:]}")
            continue
        all_results[fw] = json.loads(proc.stdout.strip().splitlines()[-1])
    all_results["loadavg_end"] = os.getloadavg()
    rows = []
    for name in args.ops:
        for mode in ("fwd", "fwd+bwd"):
            cells = []
            for fw in args.frameworks:
                r = all_results.get(fw, {}).get(name, {}).get(mode)
                cells.append(f"{r['ms']:.2f} ({r['gflops']:.0f})" if r else "-")
            rows.append([name, mode] + cells)
    print(report.table(["op", "mode"] + [f"{fw} ms (GFLOP/s)" for fw in args.frameworks], rows))
    clock = "process CPU time, 1 thread" if args.threads == 1 else "wall time"
    print(f"{clock}; load average {all_results['loadavg_start'][0]:.1f} -> "
          f"{all_results['loadavg_end'][0]:.1f}; XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}")
    if args.json:
        report.save(all_results, args.json)
