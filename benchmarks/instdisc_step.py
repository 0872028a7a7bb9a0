"""Benchmark the InstDisc training step on every Keras backend against plain PyTorch.

The model: `InstDisc.from_preset("instdisc_resnet20_cifar", num_data=n, num_negatives=m,
augmentation=None)`: the ResNet paper's CIFAR ResNet-20 (0.27M parameters), a linear
64 -> 128 layer and L2 normalisation, a memory bank of n = 50,000 rows (CIFAR-10's
training set) x 128, m = 4096 noise rows per image, tau = 0.07, bank momentum 0.5,
NCE with Z fixed from the first batch; `compile()`'s SGD (lr 0.03 x B / 256, momentum
0.9, coupled weight decay 1e-4). Against the same step in plain PyTorch
(`torch_reference/instdisc.py`: the same ResNet-20 from `torch_reference/resnet_cifar.py`,
the bank as a buffer, autograd through the gathered scores, the bank written after
the optimizer step).

    python benchmarks/instdisc_step.py [--batch-size 128] [--steps 2] [--repeats 3]
        [--num-data 50000] [--num-negatives 4096] [--modes fit step] [--threads 1] [--json out.json]

The images are pre-made random tensors (N(0, 1)) with their indices 0 .. N-1: the
augmentation belongs to the input pipeline and is not timed on either side. Its four
processes (the PyTorch reference, Keras on JAX, TensorFlow, torch) start together and
take turns round-robin (`turns.py`); the timing, the report and the summary are
`vision_step.py`'s: Keras `fit()` epochs of N steps on a dict of NumPy arrays
{"images", "index"} (default) and, with `--modes fit step`, the bare compiled
`train_step`; the reference's loop of N steps over N different batches. Warmup
dropped, median of `--repeats`. FLOPs: `instdisc_step_flops` (convs, the linear layer
and the scores; the bank's gather is memory traffic, not counted).
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
MODEL = "instdisc_resnet20"
RESNET20 = dict(common.VISION_MODELS["resnet20"])
FEATURE_DIM, TEMPERATURE, IMAGE_SIZE = 128, 0.07, 32


def instdisc_step_flops(batch_size, num_negatives, feature_dim=FEATURE_DIM, backbone=None):
    """FLOPs of one InstDisc step, convs and matmuls only; backward = 2 x forward for the network.

    Per image: the backbone's convs and the linear layer 64 -> 128, forward and backward (3 x).
    The scores V f: 2 (1 + m) d per image forward, the same again backward (to f only: the
    bank is a constant). The gather of B (1 + m) rows, the normalisation, exp, the NCE terms,
    BN and the bank update are not counted.
    """
    backbone = backbone or RESNET20
    convs = common.resnet_forward_flops(**backbone)["convs"]
    head = common.dense_flops(1, backbone["stage_filters"][-1], feature_dim)
    network = convs + head
    scores = common.dense_flops(batch_size, feature_dim, 1 + num_negatives)
    total = 3 * network * batch_size + 2 * scores
    return {"network_forward_per_image": network, "backbone_forward_per_image": convs, "batch_size": batch_size,
            "network": 3 * network * batch_size, "scores": 2 * scores, "total": total,
            "description": f"3 x {network / 1e9:.4f} x B (B = {batch_size}) + scores 2 x {scores / 1e9:.4f}"}


def make_data(n, num_data, nchw=False):
    """n random images (N(0, 1), float32, seed 0) and their indices 0 .. n-1 (< num_data)."""
    import numpy as np

    rng = np.random.default_rng(0)
    images = rng.standard_normal((n, IMAGE_SIZE, IMAGE_SIZE, 3), dtype=np.float32)  # (n, H, W, 3)
    if nchw:
        images = np.ascontiguousarray(images.transpose(0, 3, 1, 2))  # (n, 3, H, W)
    return images, (np.arange(n) % num_data).astype("int32")


# --------------------------------------------------------------------------------------
# Workers (run in a subprocess each)
# --------------------------------------------------------------------------------------
def worker_reference(args):
    import torch

    sys.path.insert(0, os.path.join(HERE, "torch_reference"))
    import instdisc

    result = {"run": REFERENCE, "torch_threads": turns.torch_threads(args.threads),
              "versions": {"torch": torch.__version__}, "jit": "eager (PyTorch)"}
    torch.manual_seed(0)
    steps, bsz = args.steps, args.batch_size
    net = instdisc.InstDisc(args.num_data, args.num_negatives, TEMPERATURE, FEATURE_DIM).train()
    result["model"] = "plain PyTorch InstDisc on the CIFAR ResNet-20 (torch_reference/instdisc.py)"
    result["params"] = instdisc.count_params(net.network)
    images, index = make_data(steps * bsz, args.num_data, nchw=True)
    images, index = torch.from_numpy(images), torch.from_numpy(index).long()
    result["rss_after_import_mb"] = common.peak_rss_mb()
    step_fn, result["optimizer"] = instdisc.make_step(net, bsz)
    state = {"i": 0}

    def step():
        i = state["i"] % steps
        state["i"] += 1
        state["loss"] = step_fn(images[i * bsz:(i + 1) * bsz], index[i * bsz:(i + 1) * bsz])

    loop = turns.step_block(step, steps, lambda: float(state["loss"]))
    turns.store_timings(result, turns.run_blocks({mode: loop for mode in args.modes}, args), steps)
    result["final_loss"] = float(state["loss"])
    return result


def worker_keras(args):
    import keras_bench

    from keras_paperzoo.models.instdisc import InstDisc

    result = keras_bench.start_keras_worker(args.threads)
    steps, bsz = args.steps, args.batch_size
    model = InstDisc.from_preset("instdisc_resnet20_cifar", num_data=args.num_data,
                                 num_negatives=args.num_negatives, augmentation=None, seed=0)
    model.compile(batch_size=bsz, steps_per_epoch=steps, epochs=args.repeats + 1)
    result["model"] = (f"InstDisc.from_preset('instdisc_resnet20_cifar', num_data={args.num_data}, "
                       f"num_negatives={args.num_negatives}, augmentation=None)")
    keras_bench.describe_model(result, model)
    images, index = make_data(steps * bsz, args.num_data)
    x = {"images": images, "index": index}
    first_batch = ({"images": images[:bsz], "index": index[:bsz]},)
    return keras_bench.run_timed_blocks(result, model, {"x": x, "batch_size": bsz}, first_batch, args)


# --------------------------------------------------------------------------------------
# Parent
# --------------------------------------------------------------------------------------
def make_worker(run, args, tmp):
    flags = ["--steps", str(args.steps), "--repeats", str(args.repeats), "--batch-size", str(args.batch_size),
             "--num-data", str(args.num_data), "--num-negatives", str(args.num_negatives)]
    return turns.worker_process(__file__, run, args, flags, turns.phases(run, args), tmp)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", nargs="+", default=list(ALL_RUNS), choices=ALL_RUNS)
    p.add_argument("--modes", nargs="+", default=["fit"], choices=["fit", "step"],
                   help="Keras timings: fit() epochs and/or the bare compiled train_step")
    p.add_argument("--steps", type=int, default=2, help="steps per timed block")
    p.add_argument("--repeats", type=int, default=3, help="timed blocks (median reported)")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--num-data", type=int, default=50_000, help="the memory bank's rows (CIFAR-10's 50,000)")
    p.add_argument("--num-negatives", type=int, default=4096, help="noise rows per image (the paper's 4096)")
    p.add_argument("--threads", type=int, default=0,
                   help="limit every framework to this many threads and CPUs (see gan_step.py)")
    p.add_argument("--sequential", action="store_true", help="one process after another")
    p.add_argument("--peak-gflops", type=float, default=common.DEFAULT_PEAK_GFLOPS)
    p.add_argument("--json", help="write all results to this JSON file")
    p.add_argument("--from-json", help="print the tables of a results JSON written by --json")
    p.add_argument("--worker", choices=ALL_RUNS, help=argparse.SUPPRESS)
    p.add_argument("--result-file", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.optimizer = "paper"  # for vision_step.report's heading
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        turns.run_worker(args, worker_reference, worker_keras)
        return
    if args.from_json:
        with open(args.from_json) as f:
            payload = json.load(f)
        saved = argparse.Namespace(**payload["settings"])
        entry = payload["models"][MODEL]
        vision_step.report(MODEL, entry["results"], saved, saved.peak_gflops, entry["flops_per_step"])
        vision_step.summary(payload["models"], [MODEL])
        turns.print_load(payload)
        return
    t0 = time.perf_counter()

    def log(message):
        print(f"[{time.perf_counter() - t0:5.0f}s] {message}", flush=True)

    payload = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": common.machine_info(),
               "settings": {k: v for k, v in vars(args).items() if k not in ("worker", "result_file", "json")},
               "loadavg_start": os.getloadavg(), "models": {}}
    load0 = os.getloadavg()
    log(f"{MODEL}: {', '.join(args.runs)} (batch {args.batch_size}, {args.steps} steps x {args.repeats} repeats, "
        f"bank {args.num_data} x {FEATURE_DIM}, m = {args.num_negatives}, load {load0[0]:.1f})")
    results = turns.run_turns(args.runs, lambda run, tmp: make_worker(run, args, tmp), log,
                              sequential=args.sequential)
    flops = instdisc_step_flops(args.batch_size, args.num_negatives)
    vision_step.report(MODEL, results, args, args.peak_gflops, flops)
    payload["models"][MODEL] = {"batch_size": args.batch_size, "steps": args.steps, "flops_per_step": flops,
                                "results": results, "loadavg_start": load0, "loadavg_end": os.getloadavg()}
    payload["loadavg_end"] = os.getloadavg()
    payload["wall_s"] = time.perf_counter() - t0
    log("done")
    vision_step.summary(payload["models"], [MODEL])
    turns.print_load(payload)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(payload, f, indent=2)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
