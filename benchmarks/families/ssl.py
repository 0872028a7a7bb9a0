"""Self-supervised steps (MoCo v2, DenseCL, SwAV, SimCLR, BYOL, InvaSpread, MAE) on every Keras backend vs PyTorch.

Models (`flops.SSL_MODELS`):

- `moco_v2`: `MoCo.from_preset("moco_cifar_resnet18", version=2, temperature=0.2,
  projection_hidden_dim=2048, queue_size=4096, momentum=0.99, augmentation=None)`:
  the MoCo authors' CIFAR ResNet-18 (3x3 stem, no max pool) with the v2 MLP head
  (512 -> 2048 -> 128), K = 4096, tau = 0.2, 8 shuffle-BN groups, at 32x32, batch 128,
  against the same step in plain PyTorch (`torch_reference/moco_cifar.py`, Algorithm 1
  written out, on `torch_reference/cifar_resnet.py`'s ResNet-18 with split BN).
  Both: SGD lr 0.03 x 128 / 256, momentum 0.9, weight decay 1e-4 added to the gradient.
- `densecl`: `DenseCL.from_preset("densecl_resnet50", <the CIFAR ResNet-18 above>,
  projection_hidden_dim=2048, queue_size=4096, momentum=0.99, augmentation=None)`: moco_v2's
  step plus the dense head (1x1 512 -> 2048 -> 128 on the 4 x 4 map), the correspondence and
  the second queue, lambda 0.5, tau 0.2, batch 128, against the same step in plain PyTorch
  (`torch_reference/densecl_cifar.py`, the authors' `densecl.py` written out, on
  `torch_reference/cifar_resnet.py`'s ResNet-18 with split BN; no torchvision or lightly,
  so it runs in this interpreter). Both: MoCo's SGD.
- `swav`: `SwAV.from_preset("swav_cifar_resnet18", queue_length=L, augmentation=None)` (the
  same CIFAR ResNet-18, taking any size; multi-crop 2 x 32 + 6 x 14, each size through
  the backbone in one batch; projector 512 -> 2048 (BN, ReLU) -> 128, K = 3000 prototypes,
  tau 0.1; Sinkhorn eps 0.05 x 3 on the two 32-pixel crops over a queue of L = 3840
  (rounded up to a multiple of B: `flops.swav_queue_length`) past features each, which
  K <= L + B needs below batch 3000), fed `x=[8 crops]`, batch 128, against a plain
  PyTorch SwAV written from the paper (`torch_reference/swav_cifar.py`, the queue always
  read). Both: LARS lr 0.6 x B / 256, momentum 0.9, eta 0.001, weight decay 1e-6 on every
  parameter but the prototypes, every parameter adapted (`SwAV.compile()`; the reference's
  `lars.py` with `exclude_bias_and_norm=False`, constant lr), prototypes frozen for the
  first epoch (the warmup block).
- `simclr`: `SimCLR.from_preset("simclr_cifar_resnet18", augmentation=None)` (the same
  CIFAR ResNet-18; v1 head 512 -> 512 -> 128 with BN; NT-Xent over the 2N views, tau 0.5;
  both views in one encoder call), batch 128, against the same step in plain PyTorch
  (`torch_reference/simclr_cifar.py`).
- `byol`: `BYOL.from_preset("byol_cifar_resnet18", augmentation=None)` (projector and
  predictor 512/256 -> 4096 -> 256 with BN; cosine tau from 0.996; each view through the
  online and the target network separately), batch 128, against the same step in plain
  PyTorch (`torch_reference/byol_cifar.py`).
  MoCo v2, SimCLR and BYOL's references share `torch_reference/ssl_parts.py` (heads,
  momentum update, tau schedule, queue, InfoNCE, NT-Xent, BYOL loss; no torchvision or
  lightly, so they run in this interpreter).
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

    python -m benchmarks ssl [--models moco_v2 densecl swav simclr byol invaspread mae_vit_s16] [--repeats 3]
        [--modes fit step] [--bn-splits 1] [--threads 1] [--json out.json]
        [--reference-python .venv-bench-ref/bin/python]
    python -m benchmarks ssl --models invaspread --batch-size 4 --steps 1 --repeats 1   # smoke

The views are pre-made random tensors (N(0, 1)): augmentation belongs to the input
pipeline and is not timed on either side (the Keras MoCo, DenseCL, SimCLR, BYOL and
InvaSpread get `x=(view_a, view_b)` with `augmentation=None`; SwAV its 8 crops of two
sizes). Every model for itself: its four processes (PyTorch reference, Keras on JAX,
TensorFlow, torch) start together and take turns round-robin (`turns.py`), as in the
`vision` family: Keras `fit()` epochs of N steps on NumPy arrays (default) and, with
`--modes fit step`, the bare compiled `train_step`; the reference's loop of N steps over N
different batches. Warmup dropped, median of `--repeats`. MFU = steps/s x FLOPs per step
(`flops.ssl_step_flops`) / peak.
"""

import functools

from .. import flops, turns, workers

MODELS = tuple(flops.SSL_MODELS)
# Batch size and steps per timed block, per model: one step is ~5-30 s here.
BATCH = {"moco_v2": 128, "densecl": 128, "swav": 128, "simclr": 128, "byol": 128, "invaspread": 128,
         "mae_vit_s16": 16}
STEPS = {"moco_v2": 2, "densecl": 2, "swav": 1, "simclr": 2, "byol": 1, "invaspread": 2, "mae_vit_s16": 2}
TWO_VIEWS = ("moco", "densecl", "simclr", "byol", "invaspread")  # families fed x = (view_a, view_b); MAE takes one image


def add_arguments(p):
    p.add_argument("--bn-splits", type=int, default=8,
                   help="MoCo shuffle-BN groups on both sides (8: the authors' CIFAR demo)")


def step_flops(args):
    return flops.ssl_step_flops(args.model, args.batch_size)


def view_sizes(model):
    """The side of each view `model` is fed: SwAV its crops, the two-view trainers 2, MAE 1."""
    config = flops.SSL_MODELS[model]
    if config["family"] == "swav":
        return [size for size, count in zip(config["crop_sizes"], config["crop_counts"]) for _ in range(count)]
    return [config["image_size"]] * (2 if config["family"] in TWO_VIEWS else 1)


def make_views(model, n, nchw=False):
    """One array of n random images (N(0, 1), float32) per view of `model` (`view_sizes`), seed 0."""
    import numpy as np

    rng = np.random.default_rng(0)
    return [workers.random_images(rng, n, size, nchw=nchw) for size in view_sizes(model)]  # (n, H, W, 3) / NCHW


# --------------------------------------------------------------------------------------
# Workers (run in a subprocess each)
# --------------------------------------------------------------------------------------
def reference_model(model, args):
    """(module, description, parameter count, make_step) of the PyTorch reference for `model`."""
    config = flops.SSL_MODELS[model]
    family = config["family"]
    if family == "moco":
        from ..torch_reference import moco_cifar

        net = moco_cifar.MoCoV2(queue_size=config["queue_size"], temperature=config["temperature"],
                                momentum=config["momentum"], hidden_dim=config["hidden_dim"],
                                projection_dim=config["projection_dim"], bn_splits=args.bn_splits)
        return (net, f"plain PyTorch MoCo v2 and CIFAR ResNet-18, SplitBatchNorm({args.bn_splits}) "
                f"(torch_reference/moco_cifar.py)", moco_cifar.parameters(net), moco_cifar.make_step)
    if family == "densecl":
        from ..torch_reference import densecl_cifar

        net = densecl_cifar.DenseCL(queue_size=config["queue_size"], temperature=config["temperature"],
                                    momentum=config["momentum"], hidden_dim=config["hidden_dim"],
                                    projection_dim=config["projection_dim"], bn_splits=args.bn_splits)
        return (net, f"plain PyTorch DenseCL and CIFAR ResNet-18, SplitBatchNorm({args.bn_splits}) "
                f"(torch_reference/densecl_cifar.py)",
                densecl_cifar.parameters(net), densecl_cifar.make_step)
    if family == "swav":
        from ..torch_reference import swav_cifar

        net = swav_cifar.SwAV(projection_dims=config["projection_dims"], num_prototypes=config["num_prototypes"],
                              temperature=config["temperature"], epsilon=config["epsilon"],
                              sinkhorn_iterations=config["sinkhorn_iterations"],
                              crops_for_assign=config["crops_for_assign"],
                              queue_length=flops.swav_queue_length(args.batch_size, config["queue_length"]))
        make_step = functools.partial(swav_cifar.make_step, freeze_steps=args.steps)  # Keras: one epoch = one block
        return (net, "plain PyTorch SwAV and CIFAR ResNet-18 (torch_reference/swav_cifar.py)",
                swav_cifar.parameters(net), make_step)
    if family == "simclr":
        from ..torch_reference import simclr_cifar

        net = simclr_cifar.SimCLR(hidden_dim=config["projection_dims"][0],
                                  projection_dim=config["projection_dims"][-1], temperature=config["temperature"])
        return (net, "plain PyTorch SimCLR and CIFAR ResNet-18 (torch_reference/simclr_cifar.py)",
                simclr_cifar.parameters(net), simclr_cifar.make_step)
    if family == "invaspread":
        from ..torch_reference import invaspread_cifar

        net = invaspread_cifar.InvaSpread(embedding_dim=config["embedding_dim"], temperature=config["temperature"])
        return (net, "plain PyTorch InvaSpread and CIFAR ResNet-18 (torch_reference/invaspread_cifar.py)",
                invaspread_cifar.count_params(net), invaspread_cifar.make_step)
    if family == "byol":
        from ..torch_reference import byol_cifar

        net = byol_cifar.BYOL(hidden_dim=config["projection_dims"][0], projection_dim=config["projection_dims"][-1],
                              tau_base=config["tau_base"], total_steps=args.steps * (args.repeats + 1))
        return (net, "plain PyTorch BYOL and CIFAR ResNet-18 (torch_reference/byol_cifar.py)",
                byol_cifar.parameters(net), byol_cifar.make_step)
    import timm

    from ..torch_reference import mae

    net = mae.MAE(image_size=config["image_size"], patch_size=config["patch_size"],
                  dim=config["hidden_dim"], depth=config["num_layers"], heads=config["num_heads"],
                  decoder_dim=config["decoder_dim"], decoder_depth=config["decoder_depth"],
                  decoder_heads=config["decoder_heads"], mask_ratio=config["mask_ratio"])
    return (net, f"plain PyTorch MAE on timm {timm.__version__} Blocks (torch_reference/mae.py)",
            mae.count_params(net), mae.make_step)


def worker_reference(args):
    import torch

    result = workers.start_reference(args)
    net, result["model"], result["params"], make_step = reference_model(args.model, args)
    views = [torch.from_numpy(v) for v in make_views(args.model, args.steps * args.batch_size, nchw=True)]
    result["rss_after_import_mb"] = turns.peak_rss_mb()
    net.train()
    step_fn, result["optimizer"] = make_step(net, args.batch_size)
    return workers.run_reference_loop(result, step_fn, views, args)


def build_keras_model(model, batch_size, steps, epochs, bn_splits):
    """The keras-paperzoo trainer of `model`, compiled with its paper recipe (module docstring)."""
    config = flops.SSL_MODELS[model]
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
    elif config["family"] == "densecl":
        from keras_paperzoo.models.densecl.densecl import DenseCL
        from keras_paperzoo.models.moco.moco_presets import MOCO_PRESETS
        from keras_paperzoo.models.resnet.resnet_backbone import ResNetBackbone

        spec = MOCO_PRESETS["moco_cifar_resnet18"]["backbone"]  # the CIFAR ResNet-18 of moco_v2 above
        trainer = DenseCL.from_preset(
            "densecl_resnet50", backbone=ResNetBackbone.from_preset(spec["preset"], **spec["overrides"]),
            projection_hidden_dim=config["hidden_dim"],
            projection_dim=config["projection_dim"], queue_size=config["queue_size"], momentum=config["momentum"],
            shuffle_bn_splits=bn_splits, augmentation=None, seed=0)
        description = (f"DenseCL.from_preset('densecl_resnet50', <moco_cifar_resnet18's backbone>, "
                       f"projection_hidden_dim={config['hidden_dim']}, queue_size={config['queue_size']}, "
                       f"momentum={config['momentum']}, shuffle_bn_splits={bn_splits}, augmentation=None)")
    elif config["family"] == "swav":
        from keras_paperzoo.models.swav.swav import SwAV

        queue = flops.swav_queue_length(batch_size, config["queue_length"])
        trainer = SwAV.from_preset(config["preset"], queue_length=queue, augmentation=None, seed=0)
        description = f"SwAV.from_preset({config['preset']!r}, queue_length={queue}, augmentation=None)"
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
    result = workers.start_keras_worker(args.threads)
    steps, bsz = args.steps, args.batch_size
    model, result["model"] = build_keras_model(args.model, bsz, steps, args.repeats + 1, args.bn_splits)
    workers.describe_model(result, model)
    views = make_views(args.model, steps * bsz)
    several = len(views) > 1  # MoCo, DenseCL, SimCLR, BYOL, InvaSpread: x = [view_a, view_b]; SwAV: its 8 crops
    x = views if several else views[0]
    first_batch = (tuple(v[:bsz] for v in views),) if several else views[0][:bsz]
    return workers.run_timed_blocks(result, model, {"x": x, "batch_size": bsz}, first_batch, args)
