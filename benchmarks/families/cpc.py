"""The CPC training step on every Keras backend vs a plain PyTorch CPC.

Models (`flops.CPC_MODELS`, mirroring keras_paperzoo/models/cpc/cpc_presets.py so that the
parent and the reference need not import Keras):

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

    python -m benchmarks cpc [--models cpc_v1_small cpc_v2_small] [--batch-size 32] [--steps 3]
        [--repeats 3] [--modes fit step] [--threads 1] [--json out.json] [--runs torch_reference jax]
    python -m benchmarks cpc --batch-size 4 --steps 1 --repeats 1    # smoke

The images are pre-made random tensors (N(0, 1): normalised images; the crop and flip
belong to the input pipeline and are not timed on either side, `augmentation=None`; v2's
colour dropping is part of the step on both sides). The four processes (PyTorch
reference, Keras on JAX, TensorFlow, torch) start together and take turns round-robin
(`turns.py`), as in the `ssl` family: Keras `fit()` epochs of N steps on NumPy arrays (default) and, with `--modes
fit step`, the bare compiled `train_step`; the reference's loop of N steps over N
different batches. Warmup dropped, median of `--repeats`. MFU = steps/s x FLOPs per step
(`flops.cpc_step_flops`) / peak.
"""

from .. import flops, turns, workers

MODELS = tuple(flops.CPC_MODELS)
DEFAULT_MODELS = ("cpc_v1_small",)
BATCH = {name: 32 for name in MODELS}
STEPS = {name: 3 for name in MODELS}


def step_flops(args):
    return flops.cpc_step_flops(args.model, args.batch_size)


def make_images(model, n, nchw=False):
    """n random normalised images (N(0, 1), float32) of `model`'s size, seed 0."""
    import numpy as np

    return workers.random_images(np.random.default_rng(0), n, flops.CPC_MODELS[model]["image_size"], nchw=nchw)


# --------------------------------------------------------------------------------------
# Workers (run in a subprocess each)
# --------------------------------------------------------------------------------------
def worker_reference(args):
    import torch

    from ..torch_reference import cpc

    result = workers.start_reference(args)
    net = cpc.CPC(cpc.CONFIGS[args.model])
    result["model"] = "plain PyTorch CPC (torch_reference/cpc.py)"
    result["params"] = cpc.count_params(net)
    images = torch.from_numpy(make_images(args.model, args.steps * args.batch_size, nchw=True))
    result["rss_after_import_mb"] = turns.peak_rss_mb()
    net.train()
    step_fn, result["optimizer"] = cpc.make_step(net, args.batch_size)
    return workers.run_reference_loop(result, step_fn, (images,), args)


def worker_keras(args):
    from keras_paperzoo.models.cpc import CPC

    result = workers.start_keras_worker(args.threads)
    steps, bsz = args.steps, args.batch_size
    model = CPC.from_preset(args.model, augmentation=None, seed=0)
    model.compile()  # Adam 2e-4
    result["model"] = f"CPC.from_preset({args.model!r}, augmentation=None)"
    workers.describe_model(result, model)
    images = make_images(args.model, steps * bsz)
    return workers.run_timed_blocks(result, model, {"x": images, "batch_size": bsz}, images[:bsz], args)
