"""Benchmark the image-classifier training step on every Keras backend against timm / PyTorch.

Models (`common.VISION_MODELS`):

- `resnet20`: `ImageClassifier(ResNetBackbone.from_preset("resnet20_cifar"), 10)`, 32x32,
  batch 128, against a plain PyTorch CIFAR ResNet-20 (timm has none):
  `benchmarks/torch_reference/resnet_cifar.py`.
- `resnet50`: `ImageClassifier(ResNetBackbone.from_preset("resnet50"), 1000)`, 224x224,
  batch 16, against `timm.create_model("resnet50")`.
- `vit_s16`: `ImageClassifier(ViTBackbone.from_preset("vit_s16"), 1000)`, 224x224, batch 16,
  against `timm.create_model("vit_small_patch16_224", pos_drop_rate=0.1,
  proj_drop_rate=0.1)` (the Keras preset's dropout 0.1 in the same four places).

    python benchmarks/vision_step.py [--models resnet20 resnet50 vit_s16] [--repeats 3]
        [--optimizer paper|sgd] [--threads 1] [--json out.json]

Optimizers (`--optimizer`, the same type on both sides):
- `paper` (default): the Keras model's `compile()` with no arguments, i.e. the package's
  paper recipe, mirrored in PyTorch. ResNet: `ScheduledMomentumSGD(StepDecay(0.1),
  momentum=0.9, l2=1e-4)` vs `torch.optim.SGD(lr=0.1, momentum=0.9, weight_decay=1e-4)`
  (both add 1e-4 w to the gradient before the momentum). ViT: `AdamW(WarmupCosineDecay(3e-3),
  beta_2=0.999, weight_decay=0.3, global_clipnorm=1)` vs `torch.optim.AdamW(lr=3e-3,
  betas=(0.9, 0.999), eps=1e-7, weight_decay=0.3)` + `clip_grad_norm_(1.0)`. The
  PyTorch side keeps its learning rate constant (a schedule costs nothing measurable).
- `sgd`: `keras.optimizers.SGD(0.1, momentum=0.9)` vs `torch.optim.SGD(lr=0.1,
  momentum=0.9)` for every model.

Every model for itself: its four processes (PyTorch reference, Keras on JAX, TensorFlow,
torch) start together and take turns round-robin (`turns.py`), then exit, so each
process's peak RSS is one model on one framework. What is timed (as `gan_step.py`):
Keras `fit()` epochs of N steps on NumPy arrays and the bare compiled `train_step`;
the reference's loop of N steps (zero_grad, forward, cross-entropy, backward, step)
over N different batches of a preallocated NCHW tensor. Warmup dropped, median of
`--repeats`. MFU = images/s x 3 x forward FLOPs per image / peak (`common.vision_step_flops`).
"""

import argparse
import contextlib
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import common  # noqa: E402
import turns  # noqa: E402

KERAS_BACKENDS, REFERENCE, ALL_RUNS = turns.KERAS_BACKENDS, turns.REFERENCE, turns.ALL_RUNS
MODELS = tuple(common.VISION_MODELS)

# Batch size (the issue's) and steps per timed block, per model: ~5-20 s a block here.
DEFAULT_MODELS = ("resnet20", "resnet50", "vit_s16")  # vit_b16: `gpu_step.py`'s, ~4x vit_s16's cost here
DEFAULT_BATCH = {"resnet20": 128, "resnet50": 16, "vit_s16": 16, "vit_b16": 16}
DEFAULT_STEPS = {"resnet20": 5, "resnet50": 2, "vit_s16": 2, "vit_b16": 1}
TIMM_NAMES = {"resnet50": "resnet50", "vit_s16": "vit_small_patch16_224", "vit_b16": "vit_base_patch16_224"}
KERAS_PRESETS = {"resnet20": ("ResNetBackbone", "resnet20_cifar"),
                 "resnet50": ("ResNetBackbone", "resnet50"),
                 "vit_s16": ("ViTBackbone", "vit_s16"),
                 "vit_b16": ("ViTBackbone", "vit_b16")}
VIT_DROPOUT = 0.1  # ViTBackbone's default dropout_rate (the paper's)


def make_data(model, n, nchw=False):
    """n random images (N(0, 1), float32) and integer labels of `model`'s size, seed 0."""
    import numpy as np

    config = common.VISION_MODELS[model]
    size = config["image_size"]
    rng = np.random.default_rng(0)
    images = rng.standard_normal((n, size, size, 3), dtype=np.float32)  # (n, H, W, 3)
    labels = rng.integers(0, config["num_classes"], size=n).astype("int32")  # (n,)
    if nchw:
        images = np.ascontiguousarray(images.transpose(0, 3, 1, 2))  # (n, 3, H, W)
    return images, labels


# --------------------------------------------------------------------------------------
# Workers (run in a subprocess each)
# --------------------------------------------------------------------------------------
def torch_reference_model(model):
    """(module, description) of the PyTorch reference for `model`."""
    if model == "resnet20":
        sys.path.insert(0, os.path.join(HERE, "torch_reference"))
        import resnet_cifar

        return resnet_cifar.resnet20(10), "plain PyTorch CIFAR ResNet-20 (torch_reference/resnet_cifar.py)"
    import timm

    kwargs = {}
    if model.startswith("vit"):
        kwargs = {"pos_drop_rate": VIT_DROPOUT, "proj_drop_rate": VIT_DROPOUT}
    args = ", ".join([repr(TIMM_NAMES[model])] + [f"{k}={v}" for k, v in kwargs.items()])
    return timm.create_model(TIMM_NAMES[model], **kwargs), f"timm {timm.__version__} create_model({args})"


def torch_optimizer(kind, family, params):
    """(optimizer, clip norm or None, description): the PyTorch twin of the Keras optimizer."""
    import torch

    if kind == "sgd":
        return torch.optim.SGD(params, lr=0.1, momentum=0.9), None, "SGD(lr=0.1, momentum=0.9)"
    if family == "resnet":
        return (torch.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=1e-4), None,
                "SGD(lr=0.1, momentum=0.9, weight_decay=1e-4)")
    return (torch.optim.AdamW(params, lr=3e-3, betas=(0.9, 0.999), eps=1e-7, weight_decay=0.3), 1.0,
            "AdamW(lr=3e-3, betas=(0.9, 0.999), eps=1e-7, weight_decay=0.3) + clip_grad_norm_(1.0)")


def classifier_update(net, opt, clip, images, labels, autocast=contextlib.nullcontext):
    """One PyTorch classifier step (zero_grad, forward and cross-entropy under `autocast`,
    backward, optional global-norm clipping, step); returns the detached loss."""
    import torch
    from torch.nn import functional as F

    opt.zero_grad(set_to_none=True)
    with autocast():
        loss = F.cross_entropy(net(images), labels)
    loss.backward()
    if clip:
        torch.nn.utils.clip_grad_norm_(net.parameters(), clip)
    opt.step()
    return loss.detach()


def worker_reference(args):
    import torch

    result = {"run": REFERENCE, "torch_threads": turns.torch_threads(args.threads),
              "versions": {"torch": torch.__version__}, "jit": "eager (PyTorch)"}
    torch.manual_seed(0)
    net, result["model"] = torch_reference_model(args.model)
    result["rss_after_import_mb"] = common.peak_rss_mb()
    net.train()
    result["params"] = sum(p.numel() for p in net.parameters())
    family = common.VISION_MODELS[args.model]["family"]
    opt, clip, result["optimizer"] = torch_optimizer(args.optimizer, family, net.parameters())
    steps, bsz = args.steps, args.batch_size
    images, labels = make_data(args.model, steps * bsz, nchw=True)
    x, y = torch.from_numpy(images), torch.from_numpy(labels).long()
    state = {"i": 0}

    def step():
        i = state["i"] % steps
        state["i"] += 1
        xb, yb = x[i * bsz:(i + 1) * bsz], y[i * bsz:(i + 1) * bsz]
        state["loss"] = classifier_update(net, opt, clip, xb, yb)

    loop = turns.step_block(step, steps, lambda: float(state["loss"]))
    turns.store_timings(result, turns.run_blocks({mode: loop for mode in args.modes}, args), steps)
    result["final_loss"] = float(state["loss"])
    return result


def build_keras_model(model, optimizer):
    """The keras-paperzoo classifier of `model`, compiled (see the module docstring)."""
    import keras

    from keras_paperzoo import models

    backbone_class, preset = KERAS_PRESETS[model]
    backbone = getattr(models, backbone_class).from_preset(preset)
    classifier = models.ImageClassifier(backbone, common.VISION_MODELS[model]["num_classes"])
    if optimizer == "sgd":
        classifier.compile(optimizer=keras.optimizers.SGD(0.1, momentum=0.9))
    else:
        classifier.compile()
    return classifier


def worker_keras(args):
    import keras_bench

    result = keras_bench.start_keras_worker(args.threads)
    model = build_keras_model(args.model, args.optimizer)
    result["model"] = f"ImageClassifier({KERAS_PRESETS[args.model][0]}.from_preset({KERAS_PRESETS[args.model][1]!r}))"
    keras_bench.describe_model(result, model)
    bsz = args.batch_size
    images, labels = make_data(args.model, args.steps * bsz)
    fit_kwargs = {"x": images, "y": labels, "batch_size": bsz}
    return keras_bench.run_timed_blocks(result, model, fit_kwargs, (images[:bsz], labels[:bsz]), args)


# --------------------------------------------------------------------------------------
# Parent
# --------------------------------------------------------------------------------------
def make_worker(run, model, args, tmp):
    flags = ["--models", model, "--steps", str(args.steps), "--repeats", str(args.repeats),
             "--batch-size", str(args.batch_size), "--optimizer", args.optimizer]
    return turns.worker_process(__file__, run, args, flags, turns.phases(run, args), tmp)


def model_args(args, model):
    """`args` with this model's batch size and steps filled in."""
    margs = argparse.Namespace(**vars(args))
    margs.model = model
    margs.batch_size = args.batch_size or DEFAULT_BATCH[model]
    margs.steps = args.steps or DEFAULT_STEPS[model]
    return margs


def rate_fmt(x):
    return turns.fmt(x, ".2f" if isinstance(x, (int, float)) and x < 10 else ".1f")


def report(model, results, margs, peak_gflops, flops=None):
    """Print this model's table; add images/s, ratios and MFU to `results`.

    "vs ref" divides by the reference's rate in the same kind of turn: Keras fit() by
    the reference loop timed in the fit turns, the bare step by the reference loop
    timed in the step turns (fit and step turns alternate). `flops`: the step's count
    (a dict with "total" and "description"); default `common.vision_step_flops`.
    """
    flops = flops or common.vision_step_flops(model, margs.batch_size)
    peak = peak_gflops * 1e9
    b = margs.batch_size
    ref = results.get(REFERENCE, {})
    ref_rates = {mode: ref.get(mode, {}).get("steps_per_s", {}).get("median") for mode in ("fit", "step")}
    rows = []
    for run in margs.runs:
        r = results.get(run, {})
        name = "keras/" + run if run != REFERENCE else "reference (PyTorch)"
        if "error" in r:
            rows.append((name, "FAILED: " + r["error"][:60]) + ("-",) * 9)
            continue
        for mode, prefix in (("fit", ""), ("step", "bare_")):
            stats = r.get(mode, {}).get("steps_per_s", {})
            rate = stats.get("median")
            r[f"{prefix}images_per_s"] = rate * b if rate else None
            r[f"{prefix}mfu"] = rate * flops["total"] / peak if rate else None
            r[f"{prefix}ratio_to_reference"] = rate / ref_rates[mode] if rate and ref_rates[mode] else None
        fit = r.get("fit", {}).get("steps_per_s", {})
        util = r.get("fit", {}).get("cpu_util", {}).get("median")
        rows.append((
            name,
            r.get("jit", "-"),
            rate_fmt(r["images_per_s"]),
            f"{rate_fmt(fit.get('min', 0) * b)}-{rate_fmt(fit.get('max', 0) * b)}",
            turns.fmt(r["ratio_to_reference"], ".2f"),
            rate_fmt(r["bare_images_per_s"]),
            turns.fmt(r["bare_ratio_to_reference"], ".2f"),
            turns.fmt(r.get("peak_rss_mb"), ".0f"),
            turns.fmt(r["mfu"] * 100 if r["mfu"] else None, ".1f"),
            turns.fmt(util, ".2f"),
            " -> ".join(turns.fmt(x, ".1f") for x in r.get("loadavg_1min", [])),
        ))
    header = ("backend", "jit setting", "images/s", "min-max", "vs ref", "bare images/s",
              "bare vs ref", "peak RSS MB", "MFU %", "CPU util", "load avg")
    print(f"\n### {model}: batch {b}, {margs.steps} steps x {margs.repeats} repeats, "
          f"optimizer {margs.optimizer!r}, "
          + (f"--threads {margs.threads}" if margs.threads else "framework default threads"))
    print(turns.table(header, rows))
    how = flops.get("description") or f"3 x {flops['forward_per_image'] / 1e9:.4f} GFLOP x {b}"
    print(f"FLOPs per step: {how} = {flops['total'] / 1e9:.2f} GFLOP (convs/matmuls, bwd = 2 x "
          f"fwd); MFU of the fit() rate vs {peak_gflops:.0f} GFLOP/s. Reference 'bare' = its loop "
          "in the step turns.")
    for run in margs.runs:
        r = results.get(run, {})
        extra = [r.get("model", ""), r.get("optimizer", ""), f"{r.get('params', 0):,} trainable params"]
        if "torch_threads" in r:
            extra.append(f"torch threads {r['torch_threads']}")
        if "warmup_s" in r:
            extra.append(f"warmup {r['warmup_s']:.1f}s")
        if "rss_after_import_mb" in r:
            extra.append(f"RSS after imports {r['rss_after_import_mb']:.0f} MB")
        if "subprocess_s" in r:
            extra.append(f"process {r['subprocess_s']:.0f}s")
        print(f"  {run}: " + "; ".join(e for e in extra if e))
    return flops


def summary(all_results, models):
    """The fastest Keras timing of each model against the reference in the same turns."""
    rows = []
    for model in models:
        res = all_results[model]["results"]
        ref = res.get(REFERENCE, {})
        best = None
        for run in KERAS_BACKENDS:
            for prefix, label in (("", "fit"), ("bare_", "bare step")):
                ratio = res.get(run, {}).get(f"{prefix}ratio_to_reference")
                if ratio and (best is None or ratio > best[0]):
                    ref_rate = ref.get(f"{prefix}images_per_s")
                    best = (ratio, f"keras/{run} ({label})", res[run][f"{prefix}images_per_s"], ref_rate)
        if best is None:
            rows.append((model, "-", "-", "-", "-"))
            continue
        rows.append((model, best[1], rate_fmt(best[2]), rate_fmt(best[3]), turns.fmt(best[0], ".2f")))
    print("\n### Fastest Keras backend vs the reference (same turns)\n")
    print(turns.table(("model", "fastest Keras", "images/s", "reference images/s", "ratio"), rows))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS), choices=MODELS)
    p.add_argument("--runs", nargs="+", default=list(ALL_RUNS), choices=ALL_RUNS)
    p.add_argument("--modes", nargs="+", default=["fit", "step"], choices=["fit", "step"],
                   help="Keras timings: fit() epochs and/or the bare compiled train_step")
    p.add_argument("--steps", type=int, default=0,
                   help=f"steps per timed block (0: per model, {DEFAULT_STEPS})")
    p.add_argument("--repeats", type=int, default=3, help="timed blocks (median reported)")
    p.add_argument("--batch-size", type=int, default=0, help=f"0: per model, {DEFAULT_BATCH}")
    p.add_argument("--optimizer", default="paper", choices=["paper", "sgd"],
                   help="paper: Keras compile()'s default recipe mirrored in PyTorch; "
                   "sgd: SGD(0.1, momentum 0.9) on both sides")
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
        margs = model_args(args, args.models[0])
        turns.run_worker(margs, worker_reference, worker_keras)
        return
    if args.from_json:
        with open(args.from_json) as f:
            payload = json.load(f)
        saved = argparse.Namespace(**payload["settings"])
        for model, entry in payload["models"].items():
            margs = model_args(saved, model)
            margs.batch_size, margs.steps = entry["batch_size"], entry["steps"]
            report(model, entry["results"], margs, saved.peak_gflops)
        summary(payload["models"], list(payload["models"]))
        print(f"\n{payload['date']}; 1-min load average {payload['loadavg_start'][0]:.1f} -> "
              f"{payload['loadavg_end'][0]:.1f}; {payload['wall_s']:.0f} s in all.")
        return
    t0 = time.perf_counter()

    def log(message):
        print(f"[{time.perf_counter() - t0:5.0f}s] {message}", flush=True)

    payload = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": common.machine_info(),
               "settings": {k: v for k, v in vars(args).items()
                            if k not in ("worker", "result_file", "json")},
               "loadavg_start": os.getloadavg(), "models": {}}
    for model in args.models:
        margs = model_args(args, model)
        log(f"{model}: {', '.join(args.runs)} (batch {margs.batch_size}, {margs.steps} steps x "
            f"{margs.repeats} repeats, load {common.loadavg():.1f})")
        results = turns.run_turns(args.runs, lambda run, tmp: make_worker(run, model, margs, tmp),
                                  log, sequential=args.sequential)
        flops = report(model, results, margs, args.peak_gflops)
        payload["models"][model] = {"batch_size": margs.batch_size, "steps": margs.steps,
                                    "flops_per_step": flops, "results": results}
    log("done")
    payload["loadavg_end"] = os.getloadavg()
    payload["wall_s"] = time.perf_counter() - t0
    summary(payload["models"], args.models)
    print(f"\n1-min load average {payload['loadavg_start'][0]:.1f} -> {payload['loadavg_end'][0]:.1f}; "
          f"{payload['wall_s']:.0f} s in all.")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(payload, f, indent=2)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
