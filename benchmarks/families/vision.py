"""Image classifiers (ResNet-20/50, ViT-S/16) on every Keras backend against timm / PyTorch.

Models (`flops.VISION_MODELS`):

- `resnet20`: `ImageClassifier(ResNetBackbone.from_preset("resnet20_cifar"), 10)`, 32x32,
  batch 128, against a plain PyTorch CIFAR ResNet-20 (timm has none):
  `benchmarks/torch_reference/resnet_cifar.py`.
- `resnet50`: `ImageClassifier(ResNetBackbone.from_preset("resnet50"), 1000)`, 224x224,
  batch 16, against `timm.create_model("resnet50")`.
- `vit_s16`: `ImageClassifier(ViTBackbone.from_preset("vit_s16"), 1000)`, 224x224, batch 16,
  against `timm.create_model("vit_small_patch16_224", pos_drop_rate=0.1,
  proj_drop_rate=0.1)` (the Keras preset's dropout 0.1 in the same four places).

    python -m benchmarks vision [--models resnet20 resnet50 vit_s16] [--repeats 3]
        [--optimizer paper|sgd] [--threads 1] [--json out.json]
    python -m benchmarks vision --models resnet20 --batch-size 4 --steps 1 --repeats 1  # smoke

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
process's peak RSS is one model on one framework. What is timed (as the `gan` family's):
Keras `fit()` epochs of N steps on NumPy arrays and the bare compiled `train_step`;
the reference's loop of N steps (zero_grad, forward, cross-entropy, backward, step)
over N different batches of a preallocated NCHW tensor. Warmup dropped, median of
`--repeats`. MFU = images/s x 3 x forward FLOPs per image / peak (`flops.vision_step_flops`).
"""

import contextlib

from .. import flops, turns, workers

MODELS = tuple(flops.VISION_MODELS)
# Batch size (the issue's) and steps per timed block, per model: ~5-20 s a block here.
DEFAULT_MODELS = ("resnet20", "resnet50", "vit_s16")  # vit_b16: the `gpu` family's, ~4x vit_s16's cost here
BATCH = {"resnet20": 128, "resnet50": 16, "vit_s16": 16, "vit_b16": 16}
STEPS = {"resnet20": 5, "resnet50": 2, "vit_s16": 2, "vit_b16": 1}
MODES = ["fit", "step"]
TIMM_NAMES = {"resnet50": "resnet50", "vit_s16": "vit_small_patch16_224", "vit_b16": "vit_base_patch16_224"}
KERAS_PRESETS = {"resnet20": ("ResNetBackbone", "resnet20_cifar"),
                 "resnet50": ("ResNetBackbone", "resnet50"),
                 "vit_s16": ("ViTBackbone", "vit_s16"),
                 "vit_b16": ("ViTBackbone", "vit_b16")}
VIT_DROPOUT = 0.1  # ViTBackbone's default dropout_rate (the paper's)


def add_arguments(p):
    p.add_argument("--optimizer", default="paper", choices=["paper", "sgd"],
                   help="paper: Keras compile()'s default recipe mirrored in PyTorch; "
                   "sgd: SGD(0.1, momentum 0.9) on both sides")


def heading(args):
    return f"batch {args.batch_size}, optimizer {args.optimizer!r}"


def step_flops(args):
    count = flops.vision_step_flops(args.model, args.batch_size)
    count["description"] = f"3 x {count['forward_per_image'] / 1e9:.4f} GFLOP x {args.batch_size}"
    return count


def make_data(model, n, nchw=False):
    """n random images (N(0, 1), float32) and integer labels of `model`'s size, seed 0."""
    import numpy as np

    config = flops.VISION_MODELS[model]
    rng = np.random.default_rng(0)
    images = workers.random_images(rng, n, config["image_size"], nchw=nchw)  # (n, H, W, 3) or (n, 3, H, W)
    labels = rng.integers(0, config["num_classes"], size=n).astype("int32")  # (n,)
    return images, labels


# --------------------------------------------------------------------------------------
# Workers (run in a subprocess each)
# --------------------------------------------------------------------------------------
def torch_reference_model(model):
    """(module, description) of the PyTorch reference for `model`."""
    if model == "resnet20":
        from ..torch_reference import resnet_cifar

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

    result = workers.start_reference(args)
    net, result["model"] = torch_reference_model(args.model)
    result["rss_after_import_mb"] = turns.peak_rss_mb()
    net.train()
    result["params"] = sum(p.numel() for p in net.parameters())
    family = flops.VISION_MODELS[args.model]["family"]
    opt, clip, result["optimizer"] = torch_optimizer(args.optimizer, family, net.parameters())
    images, labels = make_data(args.model, args.steps * args.batch_size, nchw=True)
    batches = (torch.from_numpy(images), torch.from_numpy(labels).long())
    return workers.run_reference_loop(result, lambda x, y: classifier_update(net, opt, clip, x, y), batches, args)


def build_keras_model(model, optimizer):
    """The keras-paperzoo classifier of `model`, compiled (see the module docstring)."""
    import keras

    from keras_paperzoo import models

    backbone_class, preset = KERAS_PRESETS[model]
    backbone = getattr(models, backbone_class).from_preset(preset)
    classifier = models.ImageClassifier(backbone, flops.VISION_MODELS[model]["num_classes"])
    if optimizer == "sgd":
        classifier.compile(optimizer=keras.optimizers.SGD(0.1, momentum=0.9))
    else:
        classifier.compile()
    return classifier


def worker_keras(args):
    result = workers.start_keras_worker(args.threads)
    model = build_keras_model(args.model, args.optimizer)
    result["model"] = f"ImageClassifier({KERAS_PRESETS[args.model][0]}.from_preset({KERAS_PRESETS[args.model][1]!r}))"
    workers.describe_model(result, model)
    bsz = args.batch_size
    images, labels = make_data(args.model, args.steps * bsz)
    fit_kwargs = {"x": images, "y": labels, "batch_size": bsz}
    return workers.run_timed_blocks(result, model, fit_kwargs, (images[:bsz], labels[:bsz]), args)
