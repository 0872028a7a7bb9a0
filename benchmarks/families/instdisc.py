"""The InstDisc training step on every Keras backend vs plain PyTorch.

The model: `InstDisc.from_preset("instdisc_resnet20_cifar", num_data=n, num_negatives=m,
augmentation=None)`: the ResNet paper's CIFAR ResNet-20 (0.27M parameters), a linear
64 -> 128 layer and L2 normalisation, a memory bank of n = 50,000 rows (CIFAR-10's
training set) x 128, m = 4096 noise rows per image, tau = 0.07, bank momentum 0.5,
NCE with Z fixed from the first batch; `compile()`'s SGD (lr 0.03 x B / 256, momentum
0.9, coupled weight decay 1e-4). Against the same step in plain PyTorch
(`torch_reference/instdisc.py`: the same ResNet-20 from `torch_reference/resnet_cifar.py`,
the bank as a buffer, autograd through the gathered scores, the bank written after
the optimizer step).

    python -m benchmarks instdisc [--batch-size 128] [--steps 2] [--repeats 3]
        [--num-data 50000] [--num-negatives 4096] [--modes fit step] [--threads 1] [--json out.json]
    python -m benchmarks instdisc --batch-size 4 --steps 1 --repeats 1 --num-data 64   # smoke

The images are pre-made random tensors (N(0, 1)) with their indices 0 .. N-1: the
augmentation belongs to the input pipeline and is not timed on either side. Its four
processes (the PyTorch reference, Keras on JAX, TensorFlow, torch) start together and
take turns round-robin (`turns.py`), as in the `vision` family: Keras `fit()` epochs of N
steps on a dict of NumPy arrays
{"images", "index"} (default) and, with `--modes fit step`, the bare compiled
`train_step`; the reference's loop of N steps over N different batches. Warmup
dropped, median of `--repeats`. FLOPs: `flops.instdisc_step_flops` (convs, the linear layer
and the scores; the bank's gather is memory traffic, not counted).
"""

from .. import flops, turns, workers

MODELS = ("instdisc_resnet20",)
BATCH = {"instdisc_resnet20": 128}
STEPS = {"instdisc_resnet20": 2}
IMAGE_SIZE = 32


def add_arguments(p):
    p.add_argument("--num-data", type=int, default=50_000, help="the memory bank's rows (CIFAR-10's 50,000)")
    p.add_argument("--num-negatives", type=int, default=4096, help="noise rows per image (the paper's 4096)")


def heading(args):
    return (f"batch {args.batch_size}, bank {args.num_data} x {flops.INSTDISC_FEATURE_DIM}, "
            f"m = {args.num_negatives}")


def step_flops(args):
    return flops.instdisc_step_flops(args.batch_size, args.num_negatives)


def make_data(n, num_data, nchw=False):
    """n random images (N(0, 1), float32, seed 0) and their indices 0 .. n-1 (< num_data)."""
    import numpy as np

    images = workers.random_images(np.random.default_rng(0), n, IMAGE_SIZE, nchw=nchw)
    return images, (np.arange(n) % num_data).astype("int32")


# --------------------------------------------------------------------------------------
# Workers (run in a subprocess each)
# --------------------------------------------------------------------------------------
def worker_reference(args):
    import torch

    from ..torch_reference import instdisc

    result = workers.start_reference(args)
    net = instdisc.InstDisc(args.num_data, args.num_negatives, flops.INSTDISC_TEMPERATURE,
                            flops.INSTDISC_FEATURE_DIM).train()
    result["model"] = "plain PyTorch InstDisc on the CIFAR ResNet-20 (torch_reference/instdisc.py)"
    result["params"] = instdisc.count_params(net.network)
    images, index = make_data(args.steps * args.batch_size, args.num_data, nchw=True)
    batches = (torch.from_numpy(images), torch.from_numpy(index).long())
    result["rss_after_import_mb"] = turns.peak_rss_mb()
    step_fn, result["optimizer"] = instdisc.make_step(net, args.batch_size)
    return workers.run_reference_loop(result, step_fn, batches, args)


def worker_keras(args):
    from keras_paperzoo.models.instdisc import InstDisc

    result = workers.start_keras_worker(args.threads)
    steps, bsz = args.steps, args.batch_size
    model = InstDisc.from_preset("instdisc_resnet20_cifar", num_data=args.num_data,
                                 num_negatives=args.num_negatives, augmentation=None, seed=0)
    model.compile(batch_size=bsz, steps_per_epoch=steps, epochs=args.repeats + 1)
    result["model"] = (f"InstDisc.from_preset('instdisc_resnet20_cifar', num_data={args.num_data}, "
                       f"num_negatives={args.num_negatives}, augmentation=None)")
    workers.describe_model(result, model)
    images, index = make_data(steps * bsz, args.num_data)
    x = {"images": images, "index": index}
    first_batch = ({"images": images[:bsz], "index": index[:bsz]},)
    return workers.run_timed_blocks(result, model, {"x": x, "batch_size": bsz}, first_batch, args)
