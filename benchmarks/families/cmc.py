"""The CMC training step on every Keras backend vs a plain PyTorch CMC.

Model (`flops.CMC_MODELS`):

- `cmc_cifar_resnet18`: `CMC.from_preset("cmc_cifar_resnet18", num_data=50000,
  temperature=0.07, augmentation=None)`: per view a half-width CIFAR ResNet-18 (3x3 stem
  of 64, stages 32-64-128-256; L: 1 input channel, ab: 2), a linear layer to 128 and L2
  normalisation; two memory banks of 50,000 rows (CIFAR-10's training set); NCE with
  4096 negatives per image and direction, tau 0.07 (the paper's ImageNet value), one Z
  per direction; both banks updated. RGB images of 32x32, batch 128, converted to Lab
  inside the step on both sides. Against the same step in plain PyTorch
  (`torch_reference/cmc.py`). Both: SGD lr 0.03, momentum 0.9, weight decay 1e-4
  (coupled), as the authors' `train_CMC.py`.

    python -m benchmarks cmc [--batch-size 128] [--steps 2] [--repeats 3]
        [--modes fit step] [--threads 1] [--json out.json] [--runs torch_reference jax]
    python -m benchmarks cmc --batch-size 4 --steps 1 --repeats 1    # smoke

The images are pre-made random RGB tensors in [0, 1] with their indices (x =
{"images", "index"}; the crop and flip belong to the input pipeline and are not timed on
either side, `augmentation=None`). The four processes (PyTorch reference, Keras on JAX,
TensorFlow, torch) start together and take turns round-robin (`turns.py`), as in the
`ssl` family: Keras
`fit()` epochs of N steps on NumPy arrays (default) and, with `--modes fit step`, the
bare compiled `train_step`; the reference's loop of N steps over N different batches.
Warmup dropped, median of `--repeats`. MFU = steps/s x FLOPs per step
(`flops.cmc_step_flops`) / peak.
"""

from .. import flops, turns, workers

MODELS = tuple(flops.CMC_MODELS)
BATCH = {"cmc_cifar_resnet18": 128}
STEPS = {"cmc_cifar_resnet18": 2}


def step_flops(args):
    return flops.cmc_step_flops(args.model, args.batch_size)


def make_data(model, n, nchw=False):
    """(images (n, H, W, 3) uniform in [0, 1], float32; index (n,) int32 = 0..n-1), seed 0."""
    import numpy as np

    rng = np.random.default_rng(0)
    images = workers.random_images(rng, n, flops.CMC_MODELS[model]["image_size"], nchw=nchw, uniform=True)
    return images, np.arange(n, dtype=np.int32)


# --------------------------------------------------------------------------------------
# Workers (run in a subprocess each)
# --------------------------------------------------------------------------------------
def worker_reference(args):
    import torch

    from ..torch_reference import cmc

    result = workers.start_reference(args)
    config = flops.CMC_MODELS[args.model]
    net = cmc.CMC(config["num_data"], num_negatives=config["num_negatives"], temperature=config["temperature"],
                  feature_dim=config["feature_dim"])
    result["model"] = "plain PyTorch CMC, two half-width CIFAR ResNet-18s (torch_reference/cmc.py)"
    result["params"] = cmc.count_params(net)
    images, index = make_data(args.model, args.steps * args.batch_size, nchw=True)
    batches = (torch.from_numpy(images), torch.from_numpy(index).long())
    result["rss_after_import_mb"] = turns.peak_rss_mb()
    net.train()
    step_fn, result["optimizer"] = cmc.make_step(net)
    return workers.run_reference_loop(result, step_fn, batches, args)


def build_keras_model(model, batch_size, steps, epochs):
    """The keras-paperzoo CMC of `model`, compiled with the authors' SGD (module docstring)."""
    from keras_paperzoo.models.cmc import CMC

    config = flops.CMC_MODELS[model]
    trainer = CMC.from_preset(config["preset"], num_data=config["num_data"], temperature=config["temperature"],
                              num_negatives=config["num_negatives"], augmentation=None, seed=0)
    trainer.compile(batch_size=batch_size, steps_per_epoch=steps, epochs=epochs)
    description = (f"CMC.from_preset({config['preset']!r}, num_data={config['num_data']}, "
                   f"temperature={config['temperature']}, augmentation=None)")
    return trainer, description


def worker_keras(args):
    result = workers.start_keras_worker(args.threads)
    steps, bsz = args.steps, args.batch_size
    model, result["model"] = build_keras_model(args.model, bsz, steps, args.repeats + 1)
    workers.describe_model(result, model)
    images, index = make_data(args.model, steps * bsz)
    x = {"images": images, "index": index}
    first_batch = ({"images": images[:bsz], "index": index[:bsz]},)
    return workers.run_timed_blocks(result, model, {"x": x, "batch_size": bsz}, first_batch, args)
