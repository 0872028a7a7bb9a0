"""The training step on one GPU in bfloat16 (ResNet-50, ViT-B/16, BERT-base, GPT-2 small) vs PyTorch.

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
model's `compile()` (the paper's) and its PyTorch twin, as the `vision` / `lm` families'.

What is timed: the compiled `train_step` on one batch already on the GPU
(`workers.bare_step`: `jax.jit(train_step, donate_argnums=0)` on JAX, Keras's eager step on
torch) and the reference's eager step on device tensors: `--warmup` steps (compilation), then
`--repeats` blocks of `--steps` steps, each ended by a device sync; the median block is reported
(`turns.time_loop`).
Host-to-device input copies are not timed on either side. Peak memory: JAX's
`peak_bytes_in_use`, torch's `max_memory_allocated`. MFU = steps/s x FLOPs per step
(`flops.vision_step_flops` / `flops.lm_step_flops`: matmuls, backward = 2 x forward) / the
card's dense bf16 peak (`--peak-gflops`, default 989,000 on `--device gpu`: H100 and H200 SXM).

One process per (model, run), one after another (a GPU is not shared; `--order runs-first`:
every model on the reference and JAX before any on Keras-torch); every result is written to
`--json` as soon as it exists, so a run cut off by a time limit keeps what finished.

    python -m benchmarks gpu [--models resnet50 vit_b16 bert_base gpt2_small]
        [--runs torch_reference jax torch] [--json gpu_step.json] [--run-timeout 240]
    python -m benchmarks report gpu_step.json      # the tables again
    python -m benchmarks gpu --device cpu --models bert_base --batch-size 2 --steps 1 --repeats 1 --warmup 1 \
        --run-timeout 0  # smoke
"""

import statistics

from .. import flops, turns, workers
from . import vision

REFERENCE = turns.REFERENCE
RUNS = (REFERENCE, "jax", "torch")  # the GPU image has no TensorFlow
MODELS = {
    "resnet50": {"kind": "vision", "batch_size": 256, "keras": ("ResNetBackbone", "resnet50"),
                 "timm": ("resnet50", {})},
    "vit_b16": {"kind": "vision", "batch_size": 128, "keras": ("ViTBackbone", "vit_b16"),
                "timm": ("vit_base_patch16_224", {"pos_drop_rate": 0.1, "proj_drop_rate": 0.1})},
    "bert_base": {"kind": "lm", "batch_size": 128, "sequence_length": 128},
    "gpt2_small": {"kind": "lm", "batch_size": 16, "sequence_length": 1024},
}
BATCH = {name: m["batch_size"] for name, m in MODELS.items()}
STEPS = {name: 10 for name in MODELS}
MODES = ["step"]
WARMUP = 3
DEVICES = ("gpu", "cpu")
RUN_TIMEOUT = 300
SEQUENTIAL = True
ITEM = "items"


def add_arguments(p):
    p.add_argument("--order", default="runs-first", choices=["runs-first", "models-first"],
                   help="runs-first: every model on the reference and JAX before any on Keras-torch")


def schedule(args):
    """One run at a time; with `--order runs-first` every model's reference and JAX runs first."""
    pairs = [(m, r) for m in args.models for r in args.runs]
    if args.order == "runs-first":
        pairs.sort(key=lambda mr: (mr[1] == "torch", args.models.index(mr[0]), args.runs.index(mr[1])))
    return [(model, [run], {}) for model, run in pairs]


def phases(run, args):
    return turns.block_phases("step", args.repeats)


def lm_config(model, args):
    config = dict(flops.LM_MODELS[model])
    config["batch_size"] = args.batch_size
    config["sequence_length"] = MODELS[model]["sequence_length"]
    return config


def heading(args):
    tokens = f" x {MODELS[args.model]['sequence_length']} tokens" if MODELS[args.model]["kind"] == "lm" else ""
    return f"batch {args.batch_size}{tokens}, bf16, the bare compiled step"


def items_per_step(args):
    return args.batch_size * MODELS[args.model].get("sequence_length", 1)


def step_flops(args):
    """FLOPs of one training step of `model` at the run's batch size."""
    if MODELS[args.model]["kind"] == "vision":
        count = flops.vision_step_flops(args.model, args.batch_size)
        count["description"] = f"3 x {count['forward_per_image'] / 1e9:.4f} GFLOP x {args.batch_size}"
        return count
    return flops.lm_step_flops(**lm_config(args.model, args))


def batch_of(args):
    """NumPy (x, y) of one batch (seed 0): NHWC images and labels, or the LM inputs of `hf_lm`."""
    import numpy as np

    from ..torch_reference import hf_lm

    model = args.model
    if MODELS[model]["kind"] == "vision":
        config = flops.VISION_MODELS[model]
        rng = np.random.default_rng(0)
        images = workers.random_images(rng, args.batch_size, config["image_size"])  # (B, H, W, 3)
        return images, rng.integers(0, config["num_classes"], size=args.batch_size).astype("int32")  # (B,)
    config = lm_config(model, args)
    if config["family"] == "bert":
        return hf_lm.bert_batches(config["batch_size"], config["sequence_length"], config["vocabulary_size"],
                                  config["masked_positions"])
    return hf_lm.gpt_batches(config["batch_size"], config["sequence_length"], config["vocabulary_size"])


def time_steps(result, step, sync, args):
    """`--warmup` steps, then `--repeats` blocks of `--steps` steps in the turns of `phases`; the rates
    and the seconds per step (all and median) go to `result`."""
    warm, walls, cpus = turns.time_loop(step, args.steps, args.repeats, sync, "step", warmup_steps=args.warmup)
    per_step = [w / args.steps for w in walls]
    result.update({"warmup_s": warm, "step": turns.rates(walls, cpus, args.steps), "s_per_step": per_step,
                   "median_s_per_step": statistics.median(per_step)})


# --------------------------------------------------------------------------------------
# Workers (one subprocess each)
# --------------------------------------------------------------------------------------
def worker_reference(args):
    import torch

    from ..torch_reference import hf_lm

    device = "cuda" if args.device == "gpu" else "cpu"
    if args.device == "gpu" and not torch.cuda.is_available():
        raise RuntimeError("torch sees no GPU")
    result = workers.start_reference(args)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    def autocast():
        return torch.autocast(device, torch.bfloat16)

    x, y = batch_of(args)
    model = args.model
    if MODELS[model]["kind"] == "vision":
        import timm

        name, kwargs = MODELS[model]["timm"]
        net = timm.create_model(name, **kwargs).to(device).train()
        memory_format = torch.channels_last if model == "resnet50" else torch.contiguous_format
        net = net.to(memory_format=memory_format)
        result["model"] = f"timm {timm.__version__} create_model({name!r}, {kwargs})"
        family = flops.VISION_MODELS[model]["family"]
        opt, clip, result["optimizer"] = vision.torch_optimizer("paper", family, net.parameters())
        images = torch.from_numpy(x.transpose(0, 3, 1, 2).copy()).to(device, memory_format=memory_format)
        labels = torch.from_numpy(y).long().to(device)
        state = {}

        def step():
            state["loss"] = vision.classifier_update(net, opt, clip, images, labels, autocast)
    else:
        import transformers

        result["versions"]["transformers"] = transformers.__version__
        config = lm_config(model, args)
        net = hf_lm.build(**config).to(device)
        result["model"] = hf_lm.describe(net)
        make = hf_lm.make_bert_step if config["family"] == "bert" else hf_lm.make_gpt_step
        step_fn, result["optimizer"] = make(net, autocast=autocast)

        def to_device(tree):
            return {k: v.to(device) for k, v in tree.items()} if isinstance(tree, dict) else tree.to(device)

        xs, ys = to_device(hf_lm.to_torch(x)), to_device(hf_lm.to_torch(y))
        state = {}

        def step():
            state["loss"] = step_fn(xs, ys)

    result["params"] = sum(p.numel() for p in net.parameters() if p.requires_grad)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
        result["device_name"] = torch.cuda.get_device_name()
    time_steps(result, step, lambda: float(state["loss"]), args)
    result["final_loss"] = float(state["loss"])
    if device == "cuda":
        result["peak_memory_gb"] = torch.cuda.max_memory_allocated() / 2**30
    result["precision"] = "float32 parameters, torch.autocast(bfloat16)"
    return result


def worker_keras(args):
    import keras
    import numpy as np

    from keras_paperzoo import models

    result = workers.keras_info(args.threads)
    backend, model = result["run"], args.model
    if backend == "jax":
        import jax

        result["device_name"] = str(jax.devices()[0].device_kind)
        if args.device == "gpu" and jax.devices()[0].platform != "gpu":
            raise RuntimeError(f"JAX sees no GPU: {jax.devices()}")
    elif backend == "torch" and args.device == "gpu":
        import torch

        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no GPU")
        result["device_name"] = torch.cuda.get_device_name()
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    np.random.seed(0)
    if MODELS[model]["kind"] == "vision":
        backbone_class, preset = MODELS[model]["keras"]
        backbone = getattr(models, backbone_class).from_preset(preset)
        net = models.ImageClassifier(backbone, flops.VISION_MODELS[model]["num_classes"])
        result["model"] = f"ImageClassifier({backbone_class}.from_preset({preset!r}))"
    elif lm_config(model, args)["family"] == "bert":
        net = models.BertPretrainer(models.BertBackbone.from_preset("bert_base"))
        result["model"] = "BertPretrainer(BertBackbone.from_preset('bert_base'))"
    else:
        net = models.GPTCausalLM(models.GPTBackbone.from_preset("gpt2_small"))
        result["model"] = "GPTCausalLM(GPTBackbone.from_preset('gpt2_small'))"
    net.compile()
    workers.describe_model(result, net)
    data = keras.tree.map_structure(keras.ops.convert_to_tensor, batch_of(args))  # on the device
    step, sync = workers.bare_step(net, data)
    if backend == "torch" and args.device == "gpu":
        torch.cuda.reset_peak_memory_stats()
    time_steps(result, step, sync, args)
    result["final_loss"] = float(keras.ops.convert_to_numpy(step.out["logs"]["loss"]))
    variable_dtypes = sorted({v.dtype for v in net.variables})
    result["precision"] = f"policy mixed_bfloat16, variables {', '.join(variable_dtypes)}"
    if backend == "jax" and args.device == "gpu":
        stats = jax.devices()[0].memory_stats() or {}
        result["peak_memory_gb"] = stats.get("peak_bytes_in_use", 0) / 2**30
    elif backend == "torch" and args.device == "gpu":
        result["peak_memory_gb"] = torch.cuda.max_memory_allocated() / 2**30
    return result
