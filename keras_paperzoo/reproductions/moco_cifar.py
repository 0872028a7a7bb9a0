"""MoCo v2 on CIFAR-10 and MNIST at a CPU budget, and the momentum ablation (He et al. 2020, Sec. 4.1, Fig. / Table on m).

    paperzoo reproduce moco --budget cpu                                 # MoCo v2 on CIFAR-10, m = 0.99
    paperzoo reproduce moco --budget cpu --dataset mnist --momenta 0.999,0   # the ablation
    paperzoo reproduce moco --budget cpu --report-only                   # redraw the table

What is reproduced, at a budget a 2-core CPU can afford:
1. MoCo v2 learns a representation: the kNN accuracy (InstDisc protocol: k = 200,
   cosine, exp(s / 0.1) votes, the MoCo authors' CIFAR monitor) and the linear-probe
   accuracy (MoCo's protocol: one linear layer on the frozen pooled features, SGD lr 30,
   momentum 0.9, 100 epochs, /10 at 60 and 80) of the trained encoder are above those of
   the same encoder at its random initialisation (always reported beside it).
2. The momentum ablation (MoCo Sec. 4.1, "Ablation: momentum"): m = 0.999 learns;
   with m = 0 (the key encoder a copy of the query encoder at every step) "the
   training loss oscillates and fails to converge".

The method is the package's `MoCo` trainer unchanged: preset `moco_v2_resnet20_cifar`
(the ResNet paper's CIFAR ResNet-20, 0.27M parameters, as backbone; MLP head 64-64-128;
tau 0.2; MoCo v2 "aug+" drawn inside the step; shuffle-BN over 8 groups of 16; SGD
momentum 0.9, weight decay 1e-4, cosine decay; on MNIST `moco_v2_resnet8_mnist`, the
same with a ResNet-8, K = 2048 and m = 0.999), with the choices of the `moco` recipe
(`keras_paperzoo.recipes.moco`): queue K cut to a multiple of the batch of at most half
the images (2,432 on 5,000 CIFAR images, 2,048 on MNIST), lr 0.06 x batch / 256 (twice the papers' rule, for runs of a few
hundred updates), images in [0, 1] normalised by the training subset's per-channel
mean and std after augmentation. Deviations beyond the length, named: batch 128 (the
paper's 256 on 8 GPUs; 64 on MNIST, for more updates per epoch); a seeded
class-balanced subset of the training images (labels only pick the subset and evaluate); on MNIST (28 x 28 grey, fed as 3 equal channels)
crops of at least half the image, as the recipe does for small digits (a 20 % crop of a
digit is a stroke); the linear probe sees features of un-augmented images, computed
once (`evaluation.linear_probe`'s documented shortcut).

Momentum: CIFAR-10 runs the preset's m = 0.99 (the MoCo authors' CIFAR demo value;
`moco_presets.py` measured that a few hundred updates barely move a key encoder at
m = 0.999: 0.999^300 = 0.74 of it is still the initialisation). The MNIST ablation runs
m = 0.999 (the paper's) and m = 0 with the same budget and seed (`--momenta` adds
others, e.g. 0.99).

Budget (the defaults; chosen by timing a few steps first, TensorFlow backend, 2 shared
cores). CIFAR-10: 5,000 training images (500 per class) x 3 epochs of 39 steps of 128 =
117 updates of `moco_v2_resnet20_cifar` (0.7 s per step at load 3; JAX 1.9 s; torch
did not finish compiling and 16 steps within 10 minutes). MNIST (the ablation): a
budget where m = 0.999 can move its key encoder, 10,000 training images x 20 epochs of
156 steps of 64 = 3,120 updates (0.999^3120 = 0.04 of the key encoder left at its
initialisation) of `moco_v2_resnet8_mnist` (CIFAR ResNet-8, 16-32-64 filters, 75k
parameters, K = 2048 = 32 batches, 8 batch-norm groups of 8; 0.26 s per step at load 4
against 0.48 s for ResNet-20 at batch 64); the 117-update ResNet-20 budget ran first and
was too short for m = 0.999 (its numbers are kept in the results file). kNN and linear
probe on 5,000 test images (500 per class) with the training images as the labelled
bank. The measured times and loads are in the metrics files. The references: the MoCo
authors' CIFAR-10 demo, ResNet-18, kNN 82.6 % after 200 epochs of 50,000 images at
batch 512 (19,500 updates); MoCo v2 on ImageNet, ResNet-50, 200 epochs: 67.5 % linear
top-1 (Chen et al. 2020).

Runs are saved one by one into moco_<dataset>_metrics.json (with the random-init
encoder's numbers as the run "random init"); a rerun with the same budget keeps the
runs already there (`--fresh` retrains), so momenta can run in separate processes.
Claims count as shown only when a difference exceeds two binomial standard errors over
the test images. Writes moco_<dataset>_metrics.json and moco_<dataset>_results.md into
--output-dir (the committed runs: applications/results/).
"""

import os
import pathlib
import time

import numpy as np

from keras_paperzoo.reproductions import common

DATASETS = ("cifar10", "mnist", "digits")
DEFAULT_MOMENTA = {"cifar10": "0.99", "mnist": "0.999,0", "digits": "0.99"}
DEFAULT_EPOCHS = {"cifar10": 3, "mnist": 20, "digits": 3}
DEFAULT_TRAIN_IMAGES = {"cifar10": 5000, "mnist": 10000, "digits": 5000}
DEFAULT_BATCH = {"cifar10": 128, "mnist": 64, "digits": 128}
PRESET = "moco_v2_resnet20_cifar"
DEFAULT_PRESET = {"cifar10": PRESET, "mnist": "moco_v2_resnet8_mnist", "digits": PRESET}
PAPER = {
    "moco_cifar_demo_knn_percent": 82.6,
    "moco_cifar_demo": "MoCo authors' CIFAR-10 demo: ResNet-18, 200 epochs of 50k images, batch 512, kNN 82.6 %",
    "moco_v2_imagenet_linear_percent": 67.5,
    "moco_v2_imagenet": "Chen et al. 2020: MoCo v2, ResNet-50, 200 ImageNet epochs, linear top-1 67.5 %",
    "momentum_ablation": "He et al. 2020 Sec. 4.1: m = 0.99-0.9999 work (0.999 best); m = 0 fails to converge, "
                         "the loss oscillates",
}
RANDOM_INIT = "random init"


def run_name(momentum):
    return f"m = {momentum:g}"


def parse_momenta(text):
    try:
        momenta = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        momenta = []
    if not momenta or any(not 0.0 <= m <= 1.0 for m in momenta):
        raise common.UsageError(f"--momenta {text!r}: expected comma-separated numbers in [0, 1], e.g. 0.999,0")
    return momenta


def load_data(dataset, train_images, test_images, seed):
    """(x_train, y_train, x_test, y_test) in [0, 1], RGB; seeded class-balanced subsets (digits at 16 x 16)."""
    return common.load_images(dataset, train_images, test_images, seed, 16 if dataset == "digits" else None, "rgb")


def build_moco(dataset, data, batch_size, momentum, seed, preset=PRESET):
    """The recipe's MoCo v2 (see the module docstring) with momentum m, seeded."""
    import keras

    from keras_paperzoo.data.views import per_channel_statistics
    from keras_paperzoo.models.moco import MOCO_PRESETS, MoCo
    from keras_paperzoo.recipes.moco import queue_size_for, shuffle_bn_splits_for

    x_train = data[0]
    mean, variance = per_channel_statistics(x_train)
    std = np.sqrt(variance)
    augmentation = dict(MOCO_PRESETS[preset]["arguments"].get("augmentation", {}))
    augmentation.update({"mean": mean.tolist(), "std": std.tolist()})
    if dataset in ("mnist", "digits"):
        augmentation["crop_scale"] = (0.5, 1.0)
    keras.utils.set_random_seed(seed)  # every momentum starts from the same encoder
    moco = MoCo.from_preset(
        preset, image_shape=x_train.shape[1:], momentum=momentum, seed=seed, augmentation=augmentation,
        queue_size=queue_size_for(MOCO_PRESETS[preset]["arguments"]["queue_size"], batch_size, len(x_train)),
        shuffle_bn_splits=shuffle_bn_splits_for(batch_size),
    )
    normalize = lambda x: ((x - mean) / std).astype("float32")  # noqa: E731  (what the encoder sees)
    return moco, normalize


def evaluate(encoder, train, test, probe_epochs, seed):
    """kNN and linear-probe test accuracy (%) of the frozen encoder."""
    from keras_paperzoo.evaluation import extract_features, knn_accuracy, linear_probe

    start = time.perf_counter()
    train_features, train_labels = extract_features(encoder, train)
    test_features, test_labels = extract_features(encoder, test)
    knn = knn_accuracy(train_features, train_labels, test_features, test_labels, k=min(200, len(train_labels)))
    probe = linear_probe(encoder, train, test, epochs=probe_epochs, batch_size=min(256, len(train_labels)), seed=seed)
    return {"knn_accuracy_percent": round(100 * knn, 2),
            "linear_probe_accuracy_percent": round(100 * probe["accuracy"], 2),
            "linear_probe_train_accuracy_percent": round(100 * probe["train_accuracy"], 2),
            "evaluation_seconds": round(time.perf_counter() - start, 1)}


def train_and_evaluate(dataset, data, momentum, epochs, batch_size, probe_epochs, seed, verbose=2, preset=PRESET):
    """Pre-train MoCo v2 with momentum m, then kNN and linear probe; per-epoch loss and kNN."""
    import keras

    from keras_paperzoo.callbacks import KNNMonitor
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches

    moco, normalize = build_moco(dataset, data, batch_size, momentum, seed, preset)
    x_train, y_train, x_test, y_test = data
    train, test = (normalize(x_train), y_train), (normalize(x_test), y_test)
    batches = EpochShuffledBatches(x_train, batch_size=batch_size, seed=seed)
    moco.compile(batch_size=batch_size, steps_per_epoch=len(batches), epochs=epochs,
                 learning_rate=0.06 * batch_size / 256)
    monitor = KNNMonitor(train, test, k=min(200, len(x_train)))
    start = time.perf_counter()
    history = moco.fit(batches, epochs=epochs, verbose=verbose,
                       callbacks=[batches.epoch_callback(), monitor, keras.callbacks.TerminateOnNaN()])
    train_seconds = time.perf_counter() - start
    result = evaluate(moco.encoder, train, test, probe_epochs, seed)
    h = history.history
    result.update({
        "momentum": momentum,
        "loss_per_epoch": [round(float(v), 4) for v in h["loss"]],
        "contrastive_accuracy_per_epoch": [round(float(v), 4) for v in h["contrastive_accuracy"]],
        "knn_accuracy_percent_per_epoch": [round(100 * a, 2) for _, a in monitor.history],
        "steps": len(batches) * epochs,
        "queue_size": moco.queue_size,
        "shuffle_bn_splits": moco.shuffle_bn_splits,
        "parameters_backbone": int(moco.backbone.count_params()),
        "train_seconds_with_knn_monitor": round(train_seconds, 1),
    })
    return result


def random_init(dataset, data, batch_size, probe_epochs, seed, preset=PRESET):
    """The same encoder as every run starts from, evaluated untrained."""
    moco, normalize = build_moco(dataset, data, batch_size, 0.999, seed, preset)
    x_train, y_train, x_test, y_test = data
    result = evaluate(moco.encoder, (normalize(x_train), y_train), (normalize(x_test), y_test), probe_epochs, seed)
    result["parameters_backbone"] = int(moco.backbone.count_params())
    return result


def claims(runs, budget):
    n = budget["test_images"]
    out = {}
    if RANDOM_INIT not in runs:
        return out
    for name, run in runs.items():
        if name == RANDOM_INIT:
            continue
        for key, label in (("knn_accuracy_percent", "knn"), ("linear_probe_accuracy_percent", "linear_probe")):
            out[f"{name}: {label} above random init"] = common.run_above(runs, name, RANDOM_INIT, key, n)
    high, zero = run_name(0.999), run_name(0.0)
    if high in runs and zero in runs:
        out[f"{high}: knn above {zero}"] = common.run_above(runs, high, zero, "knn_accuracy_percent", n)
        losses = runs[zero]["loss_per_epoch"]
        out[f"{zero}: training loss falls (first to last epoch)"] = {
            "holds": bool(losses[-1] < losses[0]), "first_epoch": losses[0], "last_epoch": losses[-1]}
    return out


BUDGET_KEYS = ("backend", "dataset", "preset", "train_images", "test_images", "epochs", "batch_size", "seed",
               "probe_epochs")


def records(path, budget):
    """The runs saved in `path` with this budget (hand-added notes, stopped runs and earlier budgets stay)."""
    from keras_paperzoo.evaluation.run_records import RunRecords

    return RunRecords(path, budget, BUDGET_KEYS, kept=("partial", "notes", "earlier_budgets"),
                      summarize=lambda runs: {"paper": PAPER, "claims": claims(runs, budget)})


def table(metrics):
    budget, runs = metrics["budget"], metrics["runs"]
    name = {"cifar10": "CIFAR-10", "mnist": "MNIST"}.get(budget["dataset"], budget["dataset"])
    minutes = common.wall_minutes(runs)
    lines = [
        f"MoCo v2 ({budget['preset']}) on {name}: {budget['train_images']:,} training images x "
        f"{budget['epochs']} epochs ({budget['steps_per_epoch'] * budget['epochs']} updates of batch "
        f"{budget['batch_size']}), kNN (k = 200) and linear probe ({budget['probe_epochs']} epochs) on "
        f"{budget['test_images']:,} test images, {budget['backend']} backend, {budget['cpu_cores']} shared CPU cores, "
        f"{minutes:.0f} min in all.",
        "",
        "| encoder | kNN acc. (%) | linear probe acc. (%) | InfoNCE loss per epoch | kNN (%) per epoch | time (min) |",
        "|---|---|---|---|---|---|",
    ]
    for run_label, run in runs.items():
        losses = common.per_epoch(run.get("loss_per_epoch"), ".2f")
        knns = common.per_epoch(run.get("knn_accuracy_percent_per_epoch"), ".1f")
        label = "random init (untrained)" if run_label == RANDOM_INIT else f"MoCo v2, {run_label}"
        lines.append(f"| {label} | {run['knn_accuracy_percent']:.2f} | {run['linear_probe_accuracy_percent']:.2f} | "
                     f"{losses} | {knns} | {run.get('wall_seconds', 0) / 60:.1f} |")
    lines += [
        "",
        "Published references (not this budget): MoCo authors' CIFAR-10 demo, ResNet-18 (11M parameters), 200 epochs "
        "of 50,000 images at batch 512 (about 19,500 updates): kNN 82.6 %; MoCo v2, ResNet-50, 200 ImageNet epochs: "
        "linear 67.5 %. What separates us from the CIFAR one: "
        f"{19500 / max(1, budget['steps_per_epoch'] * budget['epochs']):.0f}x the updates, "
        f"{512 / budget['batch_size']:.0f}x the batch, a backbone of "
        f"{11.2e6 / max(1, next(iter(runs.values())).get('parameters_backbone', 1)):.0f}x the parameters, "
        "the full training set.",
    ]
    return "\n".join(lines)


def partial_table(metrics):
    """Runs stopped before their end (`partial` in the metrics file: per-epoch numbers from the training log)."""
    partial = metrics.get("partial", {})
    if not partial:
        return ""
    lines = ["", "Runs stopped before the end of their budget (numbers of the epochs they finished, from the "
             "training log; no final linear probe):", "",
             "| run | epochs done | InfoNCE loss per epoch | contrastive acc. per epoch | kNN (%) per epoch |",
             "|---|---|---|---|---|"]
    for name, run in partial.items():
        lines.append(f"| MoCo v2, {name} | {len(run['loss_per_epoch'])} of {metrics['budget']['epochs']} | "
                     + " | ".join(common.per_epoch(run.get(key), fmt)
                                  for key, fmt in (("loss_per_epoch", ".3f"), ("contrastive_accuracy_per_epoch", ".3f"),
                                                   ("knn_accuracy_percent_per_epoch", ".2f"))) + " |")
    return "\n".join(lines) + "\n"


def report(output, dataset):
    output = pathlib.Path(output)
    metrics = common.read_metrics(output, "moco", dataset)
    text = table(metrics) + "\n\nClaims (holds = difference larger than 2 standard errors over the test images):\n"
    for claim, c in metrics["claims"].items():
        if "difference_points" in c:
            text += (f"- {claim}: {'holds' if c['holds'] else 'not shown'} (difference "
                     f"{c['difference_points']:+.2f} points, 2 s.e. {c['two_standard_errors_points']:.2f})\n")
        else:
            text += f"- {claim}: {'yes' if c['holds'] else 'no'} ({c['first_epoch']:.3f} -> {c['last_epoch']:.3f})\n"
    text += partial_table(metrics)
    for earlier in metrics.get("earlier_budgets", []):  # superseded runs kept for the record (added by hand)
        text += f"\nEarlier budget ({earlier['what']}):\n\n" + "\n".join(table(earlier).splitlines()[2:-2]) + "\n"
    text += common.notes_text(metrics)  # observations added by hand to the metrics file
    return common.write_results(output, "moco", dataset, text)


def main(argv=None):
    parser = common.ArgumentParser(__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="cifar10", choices=sorted(DATASETS),
                        help="cifar10 / mnist (found or downloaded: see --data-dir), digits (embedded, smoke tests)")
    parser.add_argument("--momenta", default=None, help="comma-separated m values (default: cifar10 0.99, "
                                                         "mnist 0.999,0)")
    parser.add_argument("--train-images", type=int, default=None,
                        help="a seeded class-balanced subset (0: all; default mnist 10000, else 5000)")
    parser.add_argument("--test-images", type=int, default=5000, help="a class-balanced subset of the test set (0: all)")
    parser.add_argument("--epochs", type=int, default=None, help="default mnist 20, else 3")
    parser.add_argument("--batch-size", type=int, default=None, help="default mnist 64, else 128")
    parser.add_argument("--preset", default=None, help="a MoCo preset (default mnist moco_v2_resnet8_mnist, "
                                                       "else moco_v2_resnet20_cifar; tests: moco_tiny)")
    common.add_probe_flags(parser)
    common.add_rerun_flags(parser)
    args = parser.parse_args(argv)
    if args.report_only:
        return common.report_only(args, report, "moco")
    momenta = parse_momenta(args.momenta or DEFAULT_MOMENTA[args.dataset])
    common.require_dataset(args.dataset)
    common.select_backend(args.backend)

    import keras

    epochs = args.epochs or DEFAULT_EPOCHS[args.dataset]
    args.preset = args.preset or DEFAULT_PRESET[args.dataset]
    train_images = DEFAULT_TRAIN_IMAGES[args.dataset] if args.train_images is None else args.train_images
    data = load_data(args.dataset, train_images, args.test_images, args.seed)
    batch_size = min(args.batch_size or DEFAULT_BATCH[args.dataset], len(data[0]))
    budget = {"backend": keras.backend.backend(), "dataset": args.dataset, "preset": args.preset,
              "train_images": int(len(data[0])), "test_images": int(len(data[2])), "epochs": epochs,
              "batch_size": batch_size, "steps_per_epoch": len(data[0]) // batch_size, "seed": args.seed,
              "probe_epochs": args.probe_epochs, "cpu_cores": os.cpu_count()}
    output = pathlib.Path(args.output_dir)
    output.mkdir(parents=True, exist_ok=True)
    momentum_of = {run_name(m): m for m in momenta}
    names = ([] if args.no_random_init else [RANDOM_INIT]) + list(momentum_of)

    def run(name):
        if name == RANDOM_INIT:
            return random_init(args.dataset, data, batch_size, args.probe_epochs, args.seed, args.preset)
        return train_and_evaluate(args.dataset, data, momentum_of[name], epochs, batch_size, args.probe_epochs,
                                  args.seed, args.verbose, args.preset)

    return common.run_and_report(records(common.metrics_path(args, "moco"), budget), names, run, args, report)


def paper_vs_ours(metrics):
    """Each run's kNN beside the MoCo authors' CIFAR-10 demo, and its linear probe beside MoCo v2's ImageNet figure."""
    rows = []
    for name, run in metrics["runs"].items():
        label = "random init (untrained)" if name == RANDOM_INIT else f"MoCo v2, {name}"
        rows.append((f"{label}: kNN accuracy (%)", f"{PAPER['moco_cifar_demo_knn_percent']} (CIFAR-10 demo, ResNet-18)",
                     f"{run['knn_accuracy_percent']:.2f} ({metrics['budget']['dataset']})"))
        rows.append((f"{label}: linear probe (%)", f"{PAPER['moco_v2_imagenet_linear_percent']} (ImageNet, ResNet-50)",
                     f"{run['linear_probe_accuracy_percent']:.2f}"))
    return rows
