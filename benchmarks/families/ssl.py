"""Self-supervised steps (MoCo v2, SimCLR, BYOL, InvaSpread, MAE) on every Keras backend vs PyTorch.

Models (`flops.SSL_MODELS`):

- `moco_v2`: `MoCo.from_preset("moco_cifar_resnet18", version=2, temperature=0.2,
  projection_hidden_dim=2048, queue_size=4096, momentum=0.99, augmentation=None)`:
  the MoCo authors' CIFAR ResNet-18 (3x3 stem, no max pool) with the v2 MLP head
  (512 -> 2048 -> 128), K = 4096, tau = 0.2, 8 shuffle-BN groups, at 32x32, batch 128,
  against the same step built from lightly's MoCo pieces on torchvision's ResNet-18
  (`torch_reference/moco_cifar.py`). Both: SGD lr 0.03 x 128 / 256, momentum 0.9,
  weight decay 1e-4 added to the gradient.
- `densecl`: `DenseCL.from_preset("densecl_resnet50", <the CIFAR ResNet-18 above>,
  projection_hidden_dim=2048, queue_size=4096, momentum=0.99, augmentation=None)`: moco_v2's
  step plus the dense head (1x1 512 -> 2048 -> 128 on the 4 x 4 map), the correspondence and
  the second queue, lambda 0.5, tau 0.2, batch 128, against the same step in plain PyTorch
  (`torch_reference/densecl_cifar.py`, the authors' `densecl.py` written out; lightly's
  momentum and shuffle helpers). Both: MoCo's SGD.
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

    python -m benchmarks ssl [--models moco_v2 simclr byol invaspread mae_vit_s16] [--repeats 3]
        [--modes fit step] [--bn-splits 1] [--threads 1] [--json out.json]
        [--reference-python .venv-bench-ref/bin/python]
    python -m benchmarks ssl --models invaspread --batch-size 4 --steps 1 --repeats 1   # smoke

The views are pre-made random tensors (N(0, 1)): augmentation belongs to the input
pipeline and is not timed on either side (the Keras MoCo, SimCLR and BYOL get
`x=(view_a, view_b)` with `augmentation=None`; so does InvaSpread). Every model for itself: its four processes (PyTorch
reference, Keras on JAX, TensorFlow, torch) start together and take turns
round-robin (`turns.py`), as in the `vision` family: Keras `fit()` epochs of N steps on NumPy arrays
(default) and, with `--modes fit step`, the bare compiled `train_step`; the
reference's loop of N steps over N different batches. Warmup dropped, median of
`--repeats`. MFU = steps/s x FLOPs per step (`flops.ssl_step_flops`) / peak.
"""

from .. import flops, turns, workers

MODELS = tuple(flops.SSL_MODELS)
# Batch size and steps per timed block, per model: one step is ~5-30 s here.
BATCH = {"moco_v2": 128, "densecl": 128, "simclr": 128, "byol": 128, "invaspread": 128, "mae_vit_s16": 16}
STEPS = {"moco_v2": 2, "densecl": 2, "simclr": 2, "byol": 1, "invaspread": 2, "mae_vit_s16": 2}
TWO_VIEWS = ("moco", "densecl", "simclr", "byol", "invaspread")  # families fed x = (view_a, view_b); MAE takes one image
LIGHTLY = ("moco", "simclr", "byol")  # references built from lightly's pieces


def add_arguments(p):
    p.add_argument("--bn-splits", type=int, default=8,
                   help="MoCo shuffle-BN groups on both sides (8: the authors' CIFAR demo)")


def step_flops(args):
    return flops.ssl_step_flops(args.model, args.batch_size)


def make_views(model, n, nchw=False, count=2):
    """`count` arrays of n random images (N(0, 1), float32) of `model`'s size, seed 0."""
    import numpy as np

    size = flops.SSL_MODELS[model]["image_size"]
    rng = np.random.default_rng(0)
    return [workers.random_images(rng, n, size, nchw=nchw) for _ in range(count)]  # (n, H, W, 3) / (n, 3, H, W)


# --------------------------------------------------------------------------------------
# Workers (run in a subprocess each)
# --------------------------------------------------------------------------------------
def reference_model(model, args):
    """(module, description, parameter count, make_step) of the PyTorch reference for `model`."""
    config = flops.SSL_MODELS[model]
    family = config["family"]
    if family in LIGHTLY:
        import lightly

        name = {"moco": "MoCo", "simclr": "SimCLR", "byol": "BYOL"}[family]
        pieces = f"lightly {lightly.__version__} {name} pieces on torchvision ResNet-18 (CIFAR stem)"
    if family == "moco":
        from ..torch_reference import moco_cifar

        net = moco_cifar.MoCoV2(queue_size=config["queue_size"], temperature=config["temperature"],
                                momentum=config["momentum"], hidden_dim=config["hidden_dim"],
                                projection_dim=config["projection_dim"], bn_splits=args.bn_splits)
        return (net, f"{pieces}, SplitBatchNorm({args.bn_splits}) (torch_reference/moco_cifar.py)",
                moco_cifar.count_params(net.backbone) + moco_cifar.count_params(net.head), moco_cifar.make_step)
    if family == "densecl":
        from ..torch_reference import densecl_cifar

        net = densecl_cifar.DenseCL(queue_size=config["queue_size"], temperature=config["temperature"],
                                    momentum=config["momentum"], hidden_dim=config["hidden_dim"],
                                    projection_dim=config["projection_dim"], bn_splits=args.bn_splits)
        return (net, f"plain PyTorch DenseCL (lightly update_momentum / batch_shuffle), torchvision ResNet-18 "
                f"(CIFAR stem), SplitBatchNorm({args.bn_splits}) (torch_reference/densecl_cifar.py)",
                densecl_cifar.parameters(net), densecl_cifar.make_step)
    if family == "simclr":
        from ..torch_reference import simclr_cifar

        net = simclr_cifar.SimCLR(hidden_dim=config["projection_dims"][0],
                                  projection_dim=config["projection_dims"][-1], temperature=config["temperature"])
        return (net, f"{pieces} (torch_reference/simclr_cifar.py)", simclr_cifar.count_params(net),
                simclr_cifar.make_step)
    if family == "invaspread":
        from ..torch_reference import invaspread_cifar

        net = invaspread_cifar.InvaSpread(embedding_dim=config["embedding_dim"], temperature=config["temperature"])
        return (net, "plain PyTorch InvaSpread and CIFAR ResNet-18 (torch_reference/invaspread_cifar.py)",
                invaspread_cifar.count_params(net), invaspread_cifar.make_step)
    if family == "byol":
        from ..torch_reference import byol_cifar

        net = byol_cifar.BYOL(hidden_dim=config["projection_dims"][0], projection_dim=config["projection_dims"][-1],
                              tau_base=config["tau_base"], total_steps=args.steps * (args.repeats + 1))
        return net, f"{pieces} (torch_reference/byol_cifar.py)", byol_cifar.count_params(net), byol_cifar.make_step
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
    two_views = flops.SSL_MODELS[args.model]["family"] in TWO_VIEWS
    views = [torch.from_numpy(v) for v in make_views(args.model, args.steps * args.batch_size, nchw=True,
                                                    count=2 if two_views else 1)]
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
    two_views = flops.SSL_MODELS[args.model]["family"] in TWO_VIEWS
    views = make_views(args.model, steps * bsz, count=2 if two_views else 1)
    x = views if two_views else views[0]  # MoCo, SimCLR, BYOL, InvaSpread: x = [view_a, view_b]
    first_batch = (tuple(v[:bsz] for v in views),) if two_views else views[0][:bsz]
    return workers.run_timed_blocks(result, model, {"x": x, "batch_size": bsz}, first_batch, args)
