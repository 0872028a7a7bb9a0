"""Benchmark the CPC training step on every Keras backend against a plain PyTorch CPC.

Models (`CPC_MODELS`, mirroring keras_paperzoo/models/cpc/cpc_presets.py so that the parent
and the reference need not import Keras):

- `cpc_v1_small`: `CPC.from_preset("cpc_v1_small", augmentation=None)`: 16 x 16 images cut
  into a 7 x 7 grid of 4 x 4 patches at stride 2 (v1's proportions), a pre-activation
  ResNet patch encoder without normalisation (3x3 stem of 32; bottleneck blocks 16 / 32 wide,
  64 / 128 out) mean-pooled to z (128-d), the PixelCNN-style context (3 blocks of 64), W_k
  for k = 1..5 rows down, InfoNCE against all B x 49 positions of the batch.
- `cpc_v2_small`: the same grid with v2's settings: layer norm in the encoder, four
  directions, k = 3 only (A.2), targets projected to 64, predictions x 0.1, colour
  dropping per patch.

Against the same step in plain PyTorch (`torch_reference/cpc.py`; the parameter counts
match: 224,288 and 518,624). Both: Adam, lr 2e-4 (the paper's).

    python benchmarks/cpc_step.py [--models cpc_v1_small cpc_v2_small] [--batch-size 32] [--steps 3]
        [--repeats 3] [--modes fit step] [--threads 1] [--json out.json] [--runs torch_reference jax]

The images are pre-made random tensors (N(0, 1): normalised images; the crop and flip
belong to the input pipeline and are not timed on either side, `augmentation=None`; v2's
colour dropping is part of the step on both sides). The four processes (PyTorch
reference, Keras on JAX, TensorFlow, torch) start together and take turns round-robin
(`turns.py`), as in `ssl_step.py`, whose timing, reporting and summary (`vision_step.py`)
this reuses: Keras `fit()` epochs of N steps on NumPy arrays (default) and, with `--modes
fit step`, the bare compiled `train_step`; the reference's loop of N steps over N
different batches. Warmup dropped, median of `--repeats`. MFU = steps/s x FLOPs per step
(`cpc_step_flops`) / peak.
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
import vision_step  # noqa: E402

KERAS_BACKENDS, REFERENCE, ALL_RUNS = turns.KERAS_BACKENDS, turns.REFERENCE, turns.ALL_RUNS

_SMALL = {"image_size": 16, "patch": 4, "stride": 2, "stem": 32, "filters": (16, 32), "outputs": (64, 128),
          "context_blocks": 3, "context_units": 64}
CPC_MODELS = {
    "cpc_v1_small": {**_SMALL, "steps": (1, 2, 3, 4, 5), "directions": 1, "target_dim": None},
    "cpc_v2_small": {**_SMALL, "steps": (3,), "directions": 4, "target_dim": 64},
}
MODELS = tuple(CPC_MODELS)
DEFAULT_BATCH = {name: 32 for name in MODELS}
DEFAULT_STEPS = {name: 3 for name in MODELS}


def cpc_step_flops(model, batch_size):
    """FLOPs of one CPC step on B = `batch_size` images, convs and matmuls only; backward = 2 x forward.

    Forward: the patch encoder on B x rows x cols patches (every conv 2 H' W' C_out C_in
    k^2: stem, per block the projection shortcut, 1x1, 3x3 and 1x1); per direction the
    context's blocks on the grid (1x1 D -> U, 1x3, 2x1, 1x1 U -> D), the targets'
    projection (v2) and per step k the predictions W_k c (M_k = B (rows - k) cols rows of
    D -> Dt) and their scores against the N = B rows cols candidates (2 M_k N Dt).
    """
    m = CPC_MODELS[model]
    size, patch, stride = m["image_size"], m["patch"], m["stride"]
    rows = cols = (size - patch) // stride + 1
    flops, side, channels = common.conv2d_flops(patch, patch, 3, m["stem"], 3), patch, m["stem"]
    for s, (f, out) in enumerate(zip(m["filters"], m["outputs"])):
        out_side = side // 2 if s > 0 else side
        flops += common.conv2d_flops(out_side, out_side, channels, out, 1)  # shortcut (shape changes)
        flops += common.conv2d_flops(side, side, channels, f, 1)
        flops += common.conv2d_flops(out_side, out_side, f, f, 3)
        flops += common.conv2d_flops(out_side, out_side, f, out, 1)
        side, channels = out_side, out
    n = batch_size * rows * cols
    encoder = n * flops
    depth, units, width = channels, m["context_units"], m["target_dim"] or channels
    block = (common.conv2d_flops(rows, cols, depth, units, 1) + common.conv2d_flops(rows, cols, units, units, (1, 3))
             + common.conv2d_flops(rows, cols, units, units, (2, 1)) + common.conv2d_flops(rows, cols, units, depth, 1))
    per_direction = batch_size * m["context_blocks"] * block
    per_direction += common.dense_flops(n, depth, width) if m["target_dim"] else 0
    for k in m["steps"]:
        predictions = batch_size * (rows - k) * cols
        per_direction += common.dense_flops(predictions, depth, width) + common.dense_flops(predictions, width, n)
    forward = encoder + m["directions"] * per_direction
    return {"forward": forward, "encoder_forward": encoder, "total": 3 * forward,
            "description": f"3 x ({encoder / 1e9:.3f} encoder + {(forward - encoder) / 1e9:.3f} context and "
                           f"scores) GFLOP"}


def make_images(model, n, nchw=False):
    """n random normalised images (N(0, 1), float32) of `model`'s size, seed 0."""
    import numpy as np

    size = CPC_MODELS[model]["image_size"]
    images = np.random.default_rng(0).standard_normal((n, size, size, 3), dtype=np.float32)
    return np.ascontiguousarray(images.transpose(0, 3, 1, 2)) if nchw else images


# --------------------------------------------------------------------------------------
# Workers (run in a subprocess each)
# --------------------------------------------------------------------------------------
def worker_reference(args):
    import torch

    sys.path.insert(0, os.path.join(HERE, "torch_reference"))
    import cpc

    result = {"run": REFERENCE, "torch_threads": turns.torch_threads(args.threads),
              "versions": {"torch": torch.__version__}, "jit": "eager (PyTorch)"}
    torch.manual_seed(0)
    steps, bsz = args.steps, args.batch_size
    net = cpc.CPC(cpc.CONFIGS[args.model])
    result["model"] = "plain PyTorch CPC (torch_reference/cpc.py)"
    result["params"] = cpc.count_params(net)
    images = torch.from_numpy(make_images(args.model, steps * bsz, nchw=True))
    result["rss_after_import_mb"] = common.peak_rss_mb()
    net.train()
    step_fn, result["optimizer"] = cpc.make_step(net, bsz)
    state = {"i": 0}

    def step():
        i = state["i"] % steps
        state["i"] += 1
        state["loss"] = step_fn(images[i * bsz:(i + 1) * bsz])

    loop = turns.step_block(step, steps, lambda: float(state["loss"]))
    timings = turns.run_blocks({mode: loop for mode in args.modes}, args)
    turns.store_timings(result, timings, steps)
    result["final_loss"] = float(state["loss"])
    return result


def worker_keras(args):
    import keras_bench

    from keras_paperzoo.models.cpc import CPC

    result = keras_bench.start_keras_worker(args.threads)
    steps, bsz = args.steps, args.batch_size
    model = CPC.from_preset(args.model, augmentation=None, seed=0)
    model.compile()  # Adam 2e-4
    result["model"] = f"CPC.from_preset({args.model!r}, augmentation=None)"
    keras_bench.describe_model(result, model)
    images = make_images(args.model, steps * bsz)
    return keras_bench.run_timed_blocks(result, model, {"x": images, "batch_size": bsz}, images[:bsz], args)


# --------------------------------------------------------------------------------------
# Parent
# --------------------------------------------------------------------------------------
def make_worker(run, model, args, tmp):
    flags = ["--models", model, "--steps", str(args.steps), "--repeats", str(args.repeats),
             "--batch-size", str(args.batch_size)]
    return turns.worker_process(__file__, run, args, flags, turns.phases(run, args), tmp)


def model_args(args, model):
    """`args` with this model's batch size and steps filled in."""
    margs = argparse.Namespace(**vars(args))
    margs.model = model
    margs.batch_size = args.batch_size or DEFAULT_BATCH[model]
    margs.steps = args.steps or DEFAULT_STEPS[model]
    margs.optimizer = "paper"  # for vision_step.report's heading
    return margs


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="+", default=["cpc_v1_small"], choices=MODELS)
    p.add_argument("--runs", nargs="+", default=list(ALL_RUNS), choices=ALL_RUNS)
    p.add_argument("--modes", nargs="+", default=["fit"], choices=["fit", "step"],
                   help="Keras timings: fit() epochs and/or the bare compiled train_step")
    p.add_argument("--steps", type=int, default=0, help=f"steps per timed block (0: per model, {DEFAULT_STEPS})")
    p.add_argument("--repeats", type=int, default=3, help="timed blocks (median reported)")
    p.add_argument("--batch-size", type=int, default=0, help=f"0: per model, {DEFAULT_BATCH}")
    p.add_argument("--threads", type=int, default=0,
                   help="limit every framework to this many threads and CPUs (see gan_step.py)")
    p.add_argument("--sequential", action="store_true", help="one process after another")
    p.add_argument("--reference-python", default=os.environ.get("BENCH_REFERENCE_PYTHON"),
                   help="the interpreter of the PyTorch reference's process (default $BENCH_REFERENCE_PYTHON, "
                   "else this one)")
    p.add_argument("--peak-gflops", type=float, default=common.DEFAULT_PEAK_GFLOPS)
    p.add_argument("--json", help="write all results to this JSON file")
    p.add_argument("--from-json", help="print the tables of a results JSON written by --json")
    p.add_argument("--worker", choices=ALL_RUNS, help=argparse.SUPPRESS)
    p.add_argument("--result-file", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        turns.run_worker(model_args(args, args.models[0]), worker_reference, worker_keras)
        return
    if args.from_json:
        with open(args.from_json) as f:
            payload = json.load(f)
        saved = argparse.Namespace(**payload["settings"])
        for model, entry in payload["models"].items():
            margs = model_args(saved, model)
            margs.batch_size, margs.steps = entry["batch_size"], entry["steps"]
            vision_step.report(model, entry["results"], margs, saved.peak_gflops, entry["flops_per_step"])
        vision_step.summary(payload["models"], list(payload["models"]))
        turns.print_load(payload)
        return
    t0 = time.perf_counter()

    def log(message):
        print(f"[{time.perf_counter() - t0:5.0f}s] {message}", flush=True)

    payload = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": common.machine_info(),
               "settings": {k: v for k, v in vars(args).items() if k not in ("worker", "result_file", "json")},
               "loadavg_start": os.getloadavg(), "models": {}}
    for model in args.models:
        margs = model_args(args, model)
        load0 = os.getloadavg()
        log(f"{model}: {', '.join(args.runs)} (batch {margs.batch_size}, {margs.steps} steps x "
            f"{margs.repeats} repeats, load {load0[0]:.1f})")
        results = turns.run_turns(args.runs, lambda run, tmp: make_worker(run, model, margs, tmp),
                                  log, sequential=args.sequential)
        flops = cpc_step_flops(model, margs.batch_size)
        vision_step.report(model, results, margs, args.peak_gflops, flops)
        payload["models"][model] = {"batch_size": margs.batch_size, "steps": margs.steps,
                                    "flops_per_step": flops, "results": results,
                                    "loadavg_start": load0, "loadavg_end": os.getloadavg()}
        payload["loadavg_end"] = os.getloadavg()
        payload["wall_s"] = time.perf_counter() - t0
        if args.json:  # after every model: a stopped run keeps what it measured
            with open(args.json, "w") as f:
                json.dump(payload, f, indent=2)
    log("done")
    vision_step.summary(payload["models"], args.models)
    turns.print_load(payload)
    if args.json:
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
