"""Benchmark the training step on one GPU in bfloat16: keras-paperzoo against the PyTorch references.

Models (batch sizes for one 80 GB card; `--batch-size` changes them):

- `resnet50`: `ImageClassifier(ResNetBackbone.from_preset("resnet50"), 1000)`, 224x224, batch
  256, against `timm.create_model("resnet50")` (channels-last memory, as timm trains it on GPUs).
- `vit_b16`: `ImageClassifier(ViTBackbone.from_preset("vit_b16"), 1000)`, 224x224, batch 128,
  against `timm.create_model("vit_base_patch16_224", pos_drop_rate=0.1, proj_drop_rate=0.1)`.
- `bert_base`: `BertPretrainer(BertBackbone.from_preset("bert_base"))`, batch 128 x 128 tokens,
  20 masked positions, against transformers' `BertForPreTraining` (`torch_reference/hf_lm.py`).
- `gpt2_small`: `GPTCausalLM(GPTBackbone.from_preset("gpt2_small"))`, batch 16 x 1024 tokens,
  against transformers' `GPT2LMHeadModel`.

Precision: the Keras side runs under `keras.mixed_precision.set_global_policy("mixed_bfloat16")`
(bf16 compute, float32 variables); the references keep float32 parameters and run their forward
pass and loss under `torch.autocast("cuda", torch.bfloat16)`: the same recipe. Optimizers: each
model's `compile()` (the paper's) and its PyTorch twin, as `vision_step.py` / `lm_step.py`.

What is timed: the compiled `train_step` on one batch already on the GPU
(`keras_bench.bare_step`: `jax.jit(train_step, donate_argnums=0)` on JAX, Keras's eager step on
torch) and the reference's eager step on device tensors: `--warmup` steps (compilation), then
`--repeats` blocks of `--steps` steps, each ended by a device sync; the median block is reported.
Host-to-device input copies are not timed on either side. Peak memory: JAX's
`peak_bytes_in_use`, torch's `max_memory_allocated`. MFU = steps/s x FLOPs per step
(`common.vision_step_flops` / `common.lm_step_flops`: matmuls, backward = 2 x forward) / the
card's dense bf16 peak (`--peak-tflops`, default 989: H100 and H200 SXM).

One process per (model, run), one after another (a GPU is not shared); every result is appended
to `--json` as soon as it exists, so a run cut off by a time limit keeps what finished.

    python benchmarks/gpu_step.py [--models resnet50 vit_b16 bert_base gpt2_small]
        [--runs torch_reference jax torch] [--json gpu_step.json] [--run-timeout 240]
    python benchmarks/gpu_step.py --from-json gpu_step.json      # the tables again
    python benchmarks/gpu_step.py --device cpu --batch-size 2 --steps 1 --repeats 1 --warmup 1  # smoke
"""

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "torch_reference"))

import common  # noqa: E402

REFERENCE = "torch_reference"
RUNS = (REFERENCE, "jax", "torch")
MODELS = {
    "resnet50": {"kind": "vision", "batch_size": 256, "keras": ("ResNetBackbone", "resnet50"),
                 "timm": ("resnet50", {})},
    "vit_b16": {"kind": "vision", "batch_size": 128, "keras": ("ViTBackbone", "vit_b16"),
                "timm": ("vit_base_patch16_224", {"pos_drop_rate": 0.1, "proj_drop_rate": 0.1})},
    "bert_base": {"kind": "lm", "batch_size": 128, "sequence_length": 128},
    "gpt2_small": {"kind": "lm", "batch_size": 16, "sequence_length": 1024},
}
DEFAULT_PEAK_TFLOPS = 989.0  # H100 / H200 SXM, dense bf16 tensor cores


def lm_config(model, args):
    config = dict(common.LM_MODELS[model])
    config["batch_size"] = args.batch_size or MODELS[model]["batch_size"]
    config["sequence_length"] = MODELS[model]["sequence_length"]
    return config


def step_flops(model, args):
    """FLOPs of one training step of `model` at the run's batch size."""
    if MODELS[model]["kind"] == "vision":
        return common.vision_step_flops(model, args.batch_size or MODELS[model]["batch_size"])["total"]
    return common.lm_step_flops(**lm_config(model, args))["total"]


def batch_of(model, args):
    """NumPy (x, y) of one batch (seed 0): NHWC images and labels, or the LM inputs of `hf_lm`."""
    import numpy as np

    import hf_lm

    if MODELS[model]["kind"] == "vision":
        config = common.VISION_MODELS[model]
        n, size = args.batch_size or MODELS[model]["batch_size"], config["image_size"]
        rng = np.random.default_rng(0)
        images = rng.standard_normal((n, size, size, 3), dtype=np.float32)  # (B, H, W, 3)
        return images, rng.integers(0, config["num_classes"], size=n).astype("int32")  # (B,)
    config = lm_config(model, args)
    if config["family"] == "bert":
        return hf_lm.bert_batches(config["batch_size"], config["sequence_length"], config["vocabulary_size"],
                                  config["masked_positions"])
    return hf_lm.gpt_batches(config["batch_size"], config["sequence_length"], config["vocabulary_size"])


def time_blocks(step, sync, args):
    """Median and all seconds per step over `args.repeats` blocks of `args.steps`, after the warmup."""
    t0 = time.perf_counter()
    for _ in range(args.warmup):
        step()
    sync()
    warmup_s = time.perf_counter() - t0
    per_step = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        for _ in range(args.steps):
            step()
        sync()
        per_step.append((time.perf_counter() - t0) / args.steps)
    return {"warmup_s": warmup_s, "s_per_step": per_step, "median_s_per_step": statistics.median(per_step)}


# --------------------------------------------------------------------------------------
# Workers (one subprocess each)
# --------------------------------------------------------------------------------------
def worker_reference(model, args):
    import torch

    import hf_lm

    device = "cuda" if args.device == "gpu" else "cpu"
    if args.device == "gpu" and not torch.cuda.is_available():
        raise RuntimeError("torch sees no GPU")
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    result = {"versions": {"torch": torch.__version__}}

    def autocast():
        return torch.autocast(device, torch.bfloat16)

    x, y = batch_of(model, args)
    if MODELS[model]["kind"] == "vision":
        import timm

        import vision_step

        name, kwargs = MODELS[model]["timm"]
        net = timm.create_model(name, **kwargs).to(device).train()
        memory_format = torch.channels_last if model == "resnet50" else torch.contiguous_format
        net = net.to(memory_format=memory_format)
        result["model"] = f"timm {timm.__version__} create_model({name!r}, {kwargs})"
        family = common.VISION_MODELS[model]["family"]
        opt, clip, result["optimizer"] = vision_step.torch_optimizer("paper", family, net.parameters())
        images = torch.from_numpy(x.transpose(0, 3, 1, 2).copy()).to(device, memory_format=memory_format)
        labels = torch.from_numpy(y).long().to(device)
        state = {}

        def step():
            state["loss"] = vision_step.classifier_update(net, opt, clip, images, labels, autocast)
    else:
        import transformers

        result["versions"]["transformers"] = transformers.__version__
        config = lm_config(model, args)
        net = hf_lm.build(**config).to(device)
        result["model"] = hf_lm.describe(net)
        make = hf_lm.make_bert_step if config["family"] == "bert" else hf_lm.make_gpt_step
        step_fn, result["optimizer"] = make(net, autocast=autocast)
        to_device = (lambda t: t.to(device))
        xs = {k: to_device(v) for k, v in hf_lm.to_torch(x).items()} if isinstance(x, dict) else to_device(
            hf_lm.to_torch(x))
        ys = {k: to_device(v) for k, v in hf_lm.to_torch(y).items()} if isinstance(y, dict) else to_device(
            hf_lm.to_torch(y))
        state = {}

        def step():
            state["loss"] = step_fn(xs, ys)

    result["params"] = sum(p.numel() for p in net.parameters() if p.requires_grad)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
        result["device_name"] = torch.cuda.get_device_name()
    result.update(time_blocks(step, lambda: float(state["loss"]), args))
    result["final_loss"] = float(state["loss"])
    if device == "cuda":
        result["peak_memory_gb"] = torch.cuda.max_memory_allocated() / 2**30
    result["precision"] = "float32 parameters, torch.autocast(bfloat16)"
    return result


def worker_keras(model, args):
    import keras
    import numpy as np

    import keras_bench
    from keras_paperzoo import models

    backend = keras.backend.backend()
    result = {"versions": {"keras": keras.__version__}}
    if backend == "jax":
        import jax

        result["versions"]["jax"] = jax.__version__
        result["device_name"] = str(jax.devices()[0].device_kind)
        if args.device == "gpu" and jax.devices()[0].platform != "gpu":
            raise RuntimeError(f"JAX sees no GPU: {jax.devices()}")
    else:
        import torch

        result["versions"]["torch"] = torch.__version__
        if args.device == "gpu":
            if not torch.cuda.is_available():
                raise RuntimeError("torch sees no GPU")
            result["device_name"] = torch.cuda.get_device_name()
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    np.random.seed(0)
    if MODELS[model]["kind"] == "vision":
        backbone_class, preset = MODELS[model]["keras"]
        backbone = getattr(models, backbone_class).from_preset(preset)
        net = models.ImageClassifier(backbone, common.VISION_MODELS[model]["num_classes"])
        result["model"] = f"ImageClassifier({backbone_class}.from_preset({preset!r}))"
    elif lm_config(model, args)["family"] == "bert":
        net = models.BertPretrainer(models.BertBackbone.from_preset("bert_base"))
        result["model"] = "BertPretrainer(BertBackbone.from_preset('bert_base'))"
    else:
        net = models.GPTCausalLM(models.GPTBackbone.from_preset("gpt2_small"))
        result["model"] = "GPTCausalLM(GPTBackbone.from_preset('gpt2_small'))"
    net.compile()
    result["jit"] = keras_bench.jit_description(backend, net)
    result["optimizer"] = keras_bench.describe_optimizer(net.optimizer)
    result["params"] = int(sum(np.prod(v.shape) for v in net.trainable_variables))
    data = keras.tree.map_structure(keras.ops.convert_to_tensor, batch_of(model, args))  # on the device
    step, sync = keras_bench.bare_step(net, data)
    if backend == "torch" and args.device == "gpu":
        import torch

        torch.cuda.reset_peak_memory_stats()
    result.update(time_blocks(step, sync, args))
    result["final_loss"] = float(keras.ops.convert_to_numpy(step.out["logs"]["loss"]))
    variable_dtypes = sorted({v.dtype for v in net.variables})
    result["precision"] = f"policy mixed_bfloat16, variables {', '.join(variable_dtypes)}"
    if backend == "jax" and args.device == "gpu":
        stats = jax.devices()[0].memory_stats() or {}
        result["peak_memory_gb"] = stats.get("peak_bytes_in_use", 0) / 2**30
    elif backend == "torch" and args.device == "gpu":
        result["peak_memory_gb"] = torch.cuda.max_memory_allocated() / 2**30
    return result


def worker(run, model, args):
    result = {"run": run, "model_name": model}
    try:
        result.update(worker_reference(model, args) if run == REFERENCE else worker_keras(model, args))
    except Exception as error:  # the parent reports it and goes on with the next run
        result["error"] = f"{type(error).__name__}: {error}"[:500]
    return result


# --------------------------------------------------------------------------------------
# Parent
# --------------------------------------------------------------------------------------
def spawn(run, model, args):
    """Run one worker in a subprocess (KERAS_BACKEND set); its result dict."""
    env = dict(os.environ)
    if run != REFERENCE:
        env["KERAS_BACKEND"] = run
    if run == "jax" and args.device == "cpu":
        env["JAX_PLATFORMS"] = "cpu"
    flags = ["--worker", run, "--models", model, "--device", args.device, "--steps", str(args.steps),
             "--repeats", str(args.repeats), "--warmup", str(args.warmup), "--batch-size", str(args.batch_size)]
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, __file__] + flags, env=env, capture_output=True, text=True,
                              timeout=args.run_timeout)
    except subprocess.TimeoutExpired:
        return {"run": run, "model_name": model, "error": f"timed out after {args.run_timeout} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if not lines:
        return {"run": run, "model_name": model,
                "error": f"exit {done.returncode}: {done.stderr.strip()[-400:]}"}
    result = json.loads(lines[-1][len("RESULT "):])
    result["process_s"] = time.perf_counter() - start
    return result


def derived(result, model, args, peak_tflops):
    """Add steps/s, items/s (images or tokens) and MFU to a worker's result."""
    if "error" in result:
        return result
    batch = args.batch_size or MODELS[model]["batch_size"]
    items = batch * MODELS[model].get("sequence_length", 1)
    rate = 1.0 / result["median_s_per_step"]
    result["steps_per_s"] = rate
    result["items_per_s"] = rate * items
    result["step_tflop"] = step_flops(model, args) / 1e12
    result["mfu"] = rate * result["step_tflop"] / peak_tflops
    return result


def table(results, peak_tflops):
    """Markdown tables: each run, then the fastest Keras backend against the reference."""
    lines = ["| model | run | device | ms/step | items/s | vs reference | MFU % | peak GB | warmup s | loss |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    best = []
    for model in dict.fromkeys(r["model_name"] for r in results):
        rows = [r for r in results if r["model_name"] == model]
        ref = next((r for r in rows if r["run"] == REFERENCE and "steps_per_s" in r), None)
        for r in rows:
            name = "PyTorch reference" if r["run"] == REFERENCE else f"keras/{r['run']}"
            if "error" in r:
                lines.append(f"| {model} | {name} | - | FAILED: {r['error'][:90]} | | | | | | |")
                continue
            ratio = r["steps_per_s"] / ref["steps_per_s"] if ref else None
            r["ratio_to_reference"] = ratio
            loss = f"{r['final_loss']:.3f}" if "final_loss" in r else "-"
            lines.append(
                f"| {model} | {name} | {r.get('device_name', 'cpu')} | {1000 * r['median_s_per_step']:.1f} | "
                f"{r['items_per_s']:,.0f} | {'-' if ratio is None else f'{ratio:.2f}'} | {100 * r['mfu']:.1f} | "
                f"{r.get('peak_memory_gb', float('nan')):.1f} | {r['warmup_s']:.0f} | {loss} |")
        keras_rows = [r for r in rows if r["run"] != REFERENCE and "steps_per_s" in r]
        if keras_rows and ref:
            top = max(keras_rows, key=lambda r: r["steps_per_s"])
            best.append(f"| {model} | keras/{top['run']} | {top['steps_per_s'] / ref['steps_per_s']:.2f} | "
                        f"{100 * top['mfu']:.1f} | {100 * ref['mfu']:.1f} |")
    lines += ["", f"Fastest Keras backend vs the PyTorch reference (MFU against {peak_tflops:.0f} TFLOP/s):", "",
              "| model | fastest Keras | ratio | its MFU % | reference MFU % |", "|---|---|---|---|---|"] + best
    return "\n".join(lines)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    p.add_argument("--runs", nargs="+", default=list(RUNS), choices=RUNS)
    p.add_argument("--device", default="gpu", choices=["gpu", "cpu"], help="cpu: a smoke run of the machinery")
    p.add_argument("--batch-size", type=int, default=0, help="0: each model's (see the docstring)")
    p.add_argument("--steps", type=int, default=10, help="steps per timed block")
    p.add_argument("--repeats", type=int, default=3, help="timed blocks (median reported)")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps first (compilation)")
    p.add_argument("--run-timeout", type=int, default=300, help="seconds before a run is abandoned")
    p.add_argument("--peak-tflops", type=float, default=DEFAULT_PEAK_TFLOPS)
    p.add_argument("--order", default="runs-first", choices=["runs-first", "models-first"],
                   help="runs-first: every model on the reference and JAX before any on Keras-torch")
    p.add_argument("--json", help="append every result to this JSON file as it comes")
    p.add_argument("--from-json", help="print the tables of a results JSON written by --json")
    p.add_argument("--worker", choices=RUNS, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        print("RESULT " + json.dumps(worker(args.worker, args.models[0], args)), flush=True)
        return 0
    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        print(table(saved["results"], saved["peak_tflops"]))
        return 0
    pairs = [(m, r) for m in args.models for r in args.runs]
    if args.order == "runs-first":  # the reference and JAX for every model, then Keras-torch
        pairs.sort(key=lambda mr: (mr[1] == "torch", args.models.index(mr[0]), args.runs.index(mr[1])))
    saved = {"machine": common.machine_info(), "peak_tflops": args.peak_tflops, "args": vars(args), "results": []}
    for model, run in pairs:
        result = derived(spawn(run, model, args), model, args, args.peak_tflops)
        saved["results"].append(result)
        shown = result.get("error") or f"{1000 * result['median_s_per_step']:.1f} ms/step, MFU {100 * result['mfu']:.1f} %"
        print(f"{model} {run}: {shown}", flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(saved, f, indent=1)
    print(table(saved["results"], args.peak_tflops))
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
