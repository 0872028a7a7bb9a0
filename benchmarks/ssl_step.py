"""Benchmark the self-supervised training steps (MoCo v2, SimCLR, BYOL, InvaSpread, MAE) on every Keras backend against PyTorch.

Models (`common.SSL_MODELS`):

- `moco_v2`: `MoCo.from_preset("moco_cifar_resnet18", version=2, temperature=0.2,
  projection_hidden_dim=2048, queue_size=4096, momentum=0.99, augmentation=None)`:
  the MoCo authors' CIFAR ResNet-18 (3x3 stem, no max pool) with the v2 MLP head
  (512 -> 2048 -> 128), K = 4096, tau = 0.2, 8 shuffle-BN groups, at 32x32, batch 128,
  against the same step built from lightly's MoCo pieces on torchvision's ResNet-18
  (`torch_reference/moco_cifar.py`). Both: SGD lr 0.03 x 128 / 256, momentum 0.9,
  weight decay 1e-4 added to the gradient.
- `simclr`: `SimCLR.from_preset("simclr_cifar_resnet18", augmentation=None)` (the same
  CIFAR ResNet-18; v1 head 512 -> 512 -> 128 with BN; NT-Xent over the 2N views, tau 0.5;
  both views in one encoder call), batch 128, against lightly's `SimCLRProjectionHead` and
  `NTXentLoss` on torchvision's ResNet-18 (`torch_reference/simclr_cifar.py`).
- `byol`: `BYOL.from_preset("byol_cifar_resnet18", augmentation=None)` (projector and
  predictor 512/256 -> 4096 -> 256 with BN; cosine tau from 0.996; each view through the
  online and the target network separately), batch 128, against lightly's BYOL heads,
  `update_momentum`, `cosine_schedule` and `NegativeCosineSimilarity`
  (`torch_reference/byol_cifar.py`).
  SimCLR and BYOL, both sides: LARS, momentum 0.9, eta 0.001, the papers' lr (0.3 / 0.2
  x B / 256) and weight decay (1e-6 / 1.5e-6), biases and norm parameters excluded:
  the Keras trainer's `compile()` (`keras_paperzoo.training.LARS`, warmup-cosine) and
  its plain-PyTorch twin `torch_reference/lars.py` (constant lr).
- `invaspread`: `InvaSpread.from_preset("invaspread_cifar_resnet18", augmentation=None)` (the
  same CIFAR ResNet-18; linear 512 -> 128 embedding, L2-normalised; the instance-wise softmax
  loss over the 2N views at tau 0.1, instance weights detached; both views in one encoder
  call), batch 128, against a plain PyTorch InvaSpread written from the paper, its own CIFAR
  ResNet-18 included (`torch_reference/invaspread_cifar.py`, no torchvision or lightly).
  Both: SGD lr 0.03, momentum 0.9, weight decay 5e-4 added to the gradient (the authors'
  CIFAR settings; the Keras side's step schedule, the reference's constant rate).
- `mae_vit_s16`: `MAE.from_preset("mae_vit_s16")` (ViT-S/16 encoder at 224, the paper's
  8 x 512 decoder, mask ratio 0.75, norm-pix loss, AdamW 0.9/0.95, weight decay 0.05 on
  weight matrices), batch 16, against a plain PyTorch MAE written from the paper on
  timm's ViT blocks (`torch_reference/mae.py`).

    python benchmarks/ssl_step.py [--models moco_v2 simclr byol invaspread mae_vit_s16] [--repeats 3]
        [--modes fit step] [--bn-splits 1] [--threads 1] [--json out.json]
        [--reference-python .venv-bench-ref/bin/python]

The views are pre-made random tensors (N(0, 1)): augmentation belongs to the input
pipeline and is not timed on either side (the Keras MoCo, SimCLR and BYOL get
`x=(view_a, view_b)` with `augmentation=None`; so does InvaSpread). Every model for itself: its four processes (PyTorch
reference, Keras on JAX, TensorFlow, torch) start together and take turns
round-robin (`turns.py`), as in `vision_step.py`, whose timing, reporting and
summary this script reuses: Keras `fit()` epochs of N steps on NumPy arrays
(default) and, with `--modes fit step`, the bare compiled `train_step`; the
reference's loop of N steps over N different batches. Warmup dropped, median of
`--repeats`. MFU = steps/s x FLOPs per step (`common.ssl_step_flops`) / peak.
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
MODELS = tuple(common.SSL_MODELS)

# Batch size and steps per timed block, per model: one step is ~5-30 s here.
DEFAULT_BATCH = {"moco_v2": 128, "simclr": 128, "byol": 128, "invaspread": 128, "mae_vit_s16": 16}
DEFAULT_STEPS = {"moco_v2": 2, "simclr": 2, "byol": 1, "invaspread": 2, "mae_vit_s16": 2}
TWO_VIEWS = ("moco", "simclr", "byol", "invaspread")  # families fed x = (view_a, view_b); MAE takes one image
LIGHTLY = ("moco", "simclr", "byol")  # references built from lightly's pieces


def make_views(model, n, nchw=False, count=2):
    """`count` arrays of n random images (N(0, 1), float32) of `model`'s size, seed 0."""
    import numpy as np

    size = common.SSL_MODELS[model]["image_size"]
    rng = np.random.default_rng(0)
    views = [rng.standard_normal((n, size, size, 3), dtype=np.float32) for _ in range(count)]  # (n, H, W, 3)
    if nchw:
        views = [np.ascontiguousarray(v.transpose(0, 3, 1, 2)) for v in views]  # (n, 3, H, W)
    return views


# --------------------------------------------------------------------------------------
# Workers (run in a subprocess each)
# --------------------------------------------------------------------------------------
def worker_reference(args):
    import torch

    sys.path.insert(0, os.path.join(HERE, "torch_reference"))
    result = {"run": REFERENCE, "torch_threads": turns.torch_threads(args.threads),
              "versions": {"torch": torch.__version__}, "jit": "eager (PyTorch)"}
    torch.manual_seed(0)
    steps, bsz = args.steps, args.batch_size
    config = common.SSL_MODELS[args.model]
    family = config["family"]
    if family in LIGHTLY:
        import lightly

        name = {"moco": "MoCo", "simclr": "SimCLR", "byol": "BYOL"}[family]
        pieces = f"lightly {lightly.__version__} {name} pieces on torchvision ResNet-18 (CIFAR stem)"
    if family == "moco":
        import moco_cifar

        net = moco_cifar.MoCoV2(queue_size=config["queue_size"], temperature=config["temperature"],
                                momentum=config["momentum"], hidden_dim=config["hidden_dim"],
                                projection_dim=config["projection_dim"], bn_splits=args.bn_splits)
        result["model"] = f"{pieces}, SplitBatchNorm({args.bn_splits}) (torch_reference/moco_cifar.py)"
        result["params"] = moco_cifar.count_params(net.backbone) + moco_cifar.count_params(net.head)
        make_step = moco_cifar.make_step
    elif family == "simclr":
        import simclr_cifar

        net = simclr_cifar.SimCLR(hidden_dim=config["projection_dims"][0],
                                  projection_dim=config["projection_dims"][-1], temperature=config["temperature"])
        result["model"] = f"{pieces} (torch_reference/simclr_cifar.py)"
        result["params"] = simclr_cifar.count_params(net)
        make_step = simclr_cifar.make_step
    elif family == "invaspread":
        import invaspread_cifar

        net = invaspread_cifar.InvaSpread(embedding_dim=config["embedding_dim"], temperature=config["temperature"])
        result["model"] = "plain PyTorch InvaSpread and CIFAR ResNet-18 (torch_reference/invaspread_cifar.py)"
        result["params"] = invaspread_cifar.count_params(net)
        make_step = invaspread_cifar.make_step
    elif family == "byol":
        import byol_cifar

        net = byol_cifar.BYOL(hidden_dim=config["projection_dims"][0], projection_dim=config["projection_dims"][-1],
                              tau_base=config["tau_base"], total_steps=steps * (args.repeats + 1))
        result["model"] = f"{pieces} (torch_reference/byol_cifar.py)"
        result["params"] = byol_cifar.count_params(net)
        make_step = byol_cifar.make_step
    else:
        import mae
        import timm

        net = mae.MAE(image_size=config["image_size"], patch_size=config["patch_size"],
                      dim=config["hidden_dim"], depth=config["num_layers"], heads=config["num_heads"],
                      decoder_dim=config["decoder_dim"], decoder_depth=config["decoder_depth"],
                      decoder_heads=config["decoder_heads"], mask_ratio=config["mask_ratio"])
        result["model"] = f"plain PyTorch MAE on timm {timm.__version__} Blocks (torch_reference/mae.py)"
        result["params"] = mae.count_params(net)
        make_step = mae.make_step
    views = [torch.from_numpy(v) for v in make_views(args.model, steps * bsz, nchw=True,
                                                    count=2 if family in TWO_VIEWS else 1)]
    result["rss_after_import_mb"] = common.peak_rss_mb()
    net.train()
    step_fn, result["optimizer"] = make_step(net, bsz)
    state = {"i": 0}

    def step():
        i = state["i"] % steps
        state["i"] += 1
        state["loss"] = step_fn(*[v[i * bsz:(i + 1) * bsz] for v in views])

    loop = turns.step_block(step, steps, lambda: float(state["loss"]))
    timings = turns.run_blocks({mode: loop for mode in args.modes}, args)
    turns.store_timings(result, timings, steps)
    result["final_loss"] = float(state["loss"])
    return result


def build_keras_model(model, batch_size, steps, epochs, bn_splits):
    """The keras-paperzoo trainer of `model`, compiled with its paper recipe (module docstring)."""
    config = common.SSL_MODELS[model]
    if config["family"] == "moco":
        from keras_paperzoo.models.moco.moco import MoCo

        trainer = MoCo.from_preset(
            "moco_cifar_resnet18", version=2, temperature=config["temperature"],
            projection_hidden_dim=config["hidden_dim"], projection_dim=config["projection_dim"],
            queue_size=config["queue_size"], momentum=config["momentum"], shuffle_bn_splits=bn_splits,
            augmentation=None, seed=0)
        description = (f"MoCo.from_preset('moco_cifar_resnet18', version=2, temperature={config['temperature']}, "
                       f"projection_hidden_dim={config['hidden_dim']}, queue_size={config['queue_size']}, "
                       f"momentum={config['momentum']}, shuffle_bn_splits={bn_splits}, augmentation=None)")
    elif config["family"] in ("simclr", "byol", "invaspread"):
        from keras_paperzoo.models.byol.byol import BYOL
        from keras_paperzoo.models.invaspread.invaspread import InvaSpread
        from keras_paperzoo.models.simclr.simclr import SimCLR

        trainer_class = {"simclr": SimCLR, "byol": BYOL, "invaspread": InvaSpread}[config["family"]]
        trainer = trainer_class.from_preset(config["preset"], augmentation=None, seed=0)
        description = f"{trainer_class.__name__}.from_preset({config['preset']!r}, augmentation=None)"
    else:
        from keras_paperzoo.models.mae.mae import MAE

        trainer = MAE.from_preset("mae_vit_s16", seed=0)
        description = "MAE.from_preset('mae_vit_s16')"
    trainer.compile(batch_size=batch_size, steps_per_epoch=steps, epochs=epochs)
    return trainer, description


def worker_keras(args):
    import keras_bench

    result = keras_bench.start_keras_worker(args.threads)
    steps, bsz = args.steps, args.batch_size
    model, result["model"] = build_keras_model(args.model, bsz, steps, args.repeats + 1, args.bn_splits)
    keras_bench.describe_model(result, model)
    two_views = common.SSL_MODELS[args.model]["family"] in TWO_VIEWS
    views = make_views(args.model, steps * bsz, count=2 if two_views else 1)
    x = views if two_views else views[0]  # MoCo, SimCLR, BYOL, InvaSpread: x = [view_a, view_b]
    first_batch = (tuple(v[:bsz] for v in views),) if two_views else views[0][:bsz]
    return keras_bench.run_timed_blocks(result, model, {"x": x, "batch_size": bsz}, first_batch, args)


# --------------------------------------------------------------------------------------
# Parent
# --------------------------------------------------------------------------------------
def make_worker(run, model, args, tmp):
    flags = ["--models", model, "--steps", str(args.steps), "--repeats", str(args.repeats),
             "--batch-size", str(args.batch_size), "--bn-splits", str(args.bn_splits)]
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
    p.add_argument("--steps", type=int, default=0,
                   help=f"steps per timed block (0: per model, {DEFAULT_STEPS})")
    p.add_argument("--repeats", type=int, default=3, help="timed blocks (median reported)")
    p.add_argument("--batch-size", type=int, default=0, help=f"0: per model, {DEFAULT_BATCH}")
    p.add_argument("--bn-splits", type=int, default=8,
                   help="MoCo shuffle-BN groups on both sides (8: the authors' CIFAR demo)")
    p.add_argument("--threads", type=int, default=0,
                   help="limit every framework to this many threads and CPUs (see gan_step.py)")
    p.add_argument("--sequential", action="store_true", help="one process after another")
    p.add_argument("--reference-python", default=os.environ.get("BENCH_REFERENCE_PYTHON"),
                   help="the interpreter of the PyTorch reference's process (its environment needs torch, "
                   "torchvision, lightly, timm; default $BENCH_REFERENCE_PYTHON, else this one)")
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
               "settings": {k: v for k, v in vars(args).items()
                            if k not in ("worker", "result_file", "json")},
               "loadavg_start": os.getloadavg(), "models": {}}
    for model in args.models:
        margs = model_args(args, model)
        load0 = os.getloadavg()
        log(f"{model}: {', '.join(args.runs)} (batch {margs.batch_size}, {margs.steps} steps x "
            f"{margs.repeats} repeats, load {load0[0]:.1f})")
        results = turns.run_turns(args.runs, lambda run, tmp: make_worker(run, model, margs, tmp),
                                  log, sequential=args.sequential)
        flops = common.ssl_step_flops(model, margs.batch_size)
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
