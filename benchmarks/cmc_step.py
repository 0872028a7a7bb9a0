"""Benchmark the CMC training step on every Keras backend against a plain PyTorch CMC.

Model (`CMC_MODELS`):

- `cmc_cifar_resnet18`: `CMC.from_preset("cmc_cifar_resnet18", num_data=50000,
  temperature=0.07, augmentation=None)`: per view a half-width CIFAR ResNet-18 (3x3 stem
  of 64, stages 32-64-128-256; L: 1 input channel, ab: 2), a linear layer to 128 and L2
  normalisation; two memory banks of 50,000 rows (CIFAR-10's training set); NCE with
  4096 negatives per image and direction, tau 0.07 (the paper's ImageNet value), one Z
  per direction; both banks updated. RGB images of 32x32, batch 128, converted to Lab
  inside the step on both sides. Against the same step in plain PyTorch
  (`torch_reference/cmc.py`). Both: SGD lr 0.03, momentum 0.9, weight decay 1e-4
  (coupled), as the authors' `train_CMC.py`.

    python benchmarks/cmc_step.py [--batch-size 128] [--steps 2] [--repeats 3]
        [--modes fit step] [--threads 1] [--json out.json] [--runs torch_reference jax]

The images are pre-made random RGB tensors in [0, 1] with their indices (x =
{"images", "index"}; the crop and flip belong to the input pipeline and are not timed on
either side, `augmentation=None`). The four processes (PyTorch reference, Keras on JAX,
TensorFlow, torch) start together and take turns round-robin (`turns.py`), as in
`ssl_step.py`, whose timing, reporting and summary (`vision_step.py`) this reuses: Keras
`fit()` epochs of N steps on NumPy arrays (default) and, with `--modes fit step`, the
bare compiled `train_step`; the reference's loop of N steps over N different batches.
Warmup dropped, median of `--repeats`. MFU = steps/s x FLOPs per step
(`cmc_step_flops`) / peak.
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

CIFAR_RESNET18_HALF = {"stage_blocks": (2, 2, 2, 2), "stage_filters": (32, 64, 128, 256), "block_type": "basic",
                       "stem": "cifar", "stem_filters": 64, "shortcut": "B", "image_size": 32}
CMC_MODELS = {
    "cmc_cifar_resnet18": {"preset": "cmc_cifar_resnet18", "backbone": CIFAR_RESNET18_HALF, "feature_dim": 128,
                           "num_negatives": 4096, "temperature": 0.07, "num_data": 50_000, "image_size": 32},
}
MODELS = tuple(CMC_MODELS)
DEFAULT_BATCH = {"cmc_cifar_resnet18": 128}
DEFAULT_STEPS = {"cmc_cifar_resnet18": 2}


def cmc_step_flops(model, batch_size):
    """FLOPs of one CMC step on B = `batch_size` images, convs and matmuls only; backward = 2 x forward.

    Per image, forward: each view's encoder (`common.resnet_forward_flops` of the
    backbone, its stem conv counted for the view's 1 or 2 input channels instead of 3)
    and its linear layer 2 D C; the scores of each direction against 1 + m bank rows,
    2 (1 + m) C, whose backward is one more 2 (1 + m) C (dL/dz only: the rows are
    constants). Encoders 3 x forward x B. The Lab conversion, BN, pooling, the
    normalisation, exp, the NCE loss, the bank updates and the optimizer are not counted.
    """
    config = CMC_MODELS[model]
    backbone, c, m = config["backbone"], config["feature_dim"], config["num_negatives"]
    full = common.resnet_forward_flops(**backbone)
    size, stem = backbone["image_size"], backbone["stem_filters"]
    width = backbone["stage_filters"][-1] * (4 if backbone["block_type"] == "bottleneck" else 1)
    encoders = 0
    for channels in (1, 2):  # L, ab
        stem_flops = common.conv2d_flops(size, size, channels, stem, 3)
        encoders += full["convs"] - full["layers"][0][1] + stem_flops + common.dense_flops(1, width, c)
    scores = 2 * 2 * common.dense_flops(1, c, 1 + m)  # two directions, forward + dL/dz
    total = batch_size * (3 * encoders + scores)
    return {"encoders_forward_per_image": encoders, "scores_per_image": scores, "batch_size": batch_size,
            "total": total,
            "description": f"B x (3 x {encoders / 1e9:.4f} both encoders fwd+bwd + scores {scores / 1e9:.4f}) "
                           f"(B = {batch_size})"}


def make_data(model, n, nchw=False):
    """(images (n, H, W, 3) uniform in [0, 1], float32; index (n,) int32 = 0..n-1), seed 0."""
    import numpy as np

    size = CMC_MODELS[model]["image_size"]
    images = np.random.default_rng(0).random((n, size, size, 3), dtype=np.float32)
    if nchw:
        images = np.ascontiguousarray(images.transpose(0, 3, 1, 2))  # (n, 3, H, W)
    return images, np.arange(n, dtype=np.int32)


# --------------------------------------------------------------------------------------
# Workers (run in a subprocess each)
# --------------------------------------------------------------------------------------
def worker_reference(args):
    import torch

    sys.path.insert(0, os.path.join(HERE, "torch_reference"))
    import cmc

    result = {"run": REFERENCE, "torch_threads": turns.torch_threads(args.threads),
              "versions": {"torch": torch.__version__}, "jit": "eager (PyTorch)"}
    torch.manual_seed(0)
    config = CMC_MODELS[args.model]
    steps, bsz = args.steps, args.batch_size
    net = cmc.CMC(config["num_data"], num_negatives=config["num_negatives"], temperature=config["temperature"],
                  feature_dim=config["feature_dim"])
    result["model"] = "plain PyTorch CMC, two half-width CIFAR ResNet-18s (torch_reference/cmc.py)"
    result["params"] = cmc.count_params(net)
    images, index = (torch.from_numpy(a) for a in make_data(args.model, steps * bsz, nchw=True))
    index = index.long()
    result["rss_after_import_mb"] = common.peak_rss_mb()
    net.train()
    step_fn, result["optimizer"] = cmc.make_step(net)
    state = {"i": 0}

    def step():
        i = state["i"] % steps
        state["i"] += 1
        state["loss"] = step_fn(images[i * bsz:(i + 1) * bsz], index[i * bsz:(i + 1) * bsz])

    loop = turns.step_block(step, steps, lambda: float(state["loss"]))
    timings = turns.run_blocks({mode: loop for mode in args.modes}, args)
    turns.store_timings(result, timings, steps)
    result["final_loss"] = float(state["loss"])
    return result


def build_keras_model(model, batch_size, steps, epochs):
    """The keras-paperzoo CMC of `model`, compiled with the authors' SGD (module docstring)."""
    from keras_paperzoo.models.cmc import CMC

    config = CMC_MODELS[model]
    trainer = CMC.from_preset(config["preset"], num_data=config["num_data"], temperature=config["temperature"],
                              num_negatives=config["num_negatives"], augmentation=None, seed=0)
    trainer.compile(batch_size=batch_size, steps_per_epoch=steps, epochs=epochs)
    description = (f"CMC.from_preset({config['preset']!r}, num_data={config['num_data']}, "
                   f"temperature={config['temperature']}, augmentation=None)")
    return trainer, description


def worker_keras(args):
    import keras_bench

    result = keras_bench.start_keras_worker(args.threads)
    steps, bsz = args.steps, args.batch_size
    model, result["model"] = build_keras_model(args.model, bsz, steps, args.repeats + 1)
    keras_bench.describe_model(result, model)
    images, index = make_data(args.model, steps * bsz)
    x = {"images": images, "index": index}
    first_batch = ({"images": images[:bsz], "index": index[:bsz]},)
    return keras_bench.run_timed_blocks(result, model, {"x": x, "batch_size": bsz}, first_batch, args)


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
    p.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    p.add_argument("--runs", nargs="+", default=list(ALL_RUNS), choices=ALL_RUNS)
    p.add_argument("--modes", nargs="+", default=["fit"], choices=["fit", "step"],
                   help="Keras timings: fit() epochs and/or the bare compiled train_step")
    p.add_argument("--steps", type=int, default=0, help=f"steps per timed block (0: per model, {DEFAULT_STEPS})")
    p.add_argument("--repeats", type=int, default=3, help="timed blocks (median reported)")
    p.add_argument("--batch-size", type=int, default=0, help=f"0: per model, {DEFAULT_BATCH}")
    p.add_argument("--threads", type=int, default=0,
                   help="limit every framework to this many threads and CPUs (see gan_step.py)")
    p.add_argument("--sequential", action="store_true", help="one process after another")
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
        flops = cmc_step_flops(model, margs.batch_size)
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
