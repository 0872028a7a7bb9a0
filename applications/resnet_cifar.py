"""ResNet on CIFAR-10: He et al. 2016, Sec. 4.2, Table 6 and Figure 6 (plain vs residual).

    python applications/resnet_cifar.py                       # the CPU budget below
    python applications/resnet_cifar.py --epochs 164 --steps-per-epoch 0 --warmup-steps 0   # the paper's 64k steps

Two claims of the paper, at a budget a 2-core CPU can afford:
1. residual nets reach lower error than plain nets of the same depth (Fig. 6 left vs
   middle; Table 6);
2. degradation: the deeper plain net (plain-56) has a HIGHER TRAINING error than the
   shallower one (plain-20) (Fig. 6 left), while the deeper residual net does not.

The paper's recipe, unchanged except for the length of the run: the presets
`plain20_cifar`, `plain56_cifar`, `resnet20_cifar`, `resnet56_cifar` (3x3 conv 16, three
stages of n basic blocks with 16/32/64 filters, option-A shortcuts, the plain nets the
same layers without shortcuts; a 10-way linear head initialised N(0, 0.01), see
`RESNET_HEAD_INITIALIZER` in keras_paperzoo/models/resnet/resnet_presets.py), batch 128,
`ImageClassifier.compile(steps_per_epoch, epochs)` = SGD lr 0.1, momentum 0.9, weight
decay 1e-4, lr / 10 at 50 % and 75 % of the run (the paper's 32k and 48k of 64k
iterations), 4-pixel padding + random 32x32 crop + horizontal flip (`CifarAugmentation`),
per-channel normalisation with the training images' mean and variance
(`per_channel_statistics`), a fresh seeded order every epoch (`EpochShuffledBatches`).
Test error is measured on all 10,000 test images. Training error is what the paper's
Fig. 6 plots as thin lines: the error on the (augmented) training batches during each
epoch.

Budget (the defaults): all 50,000 training images (the paper trains on 45k and keeps 5k
for validation), 6 "epochs" of 100 batches of 128 (each a fresh seeded permutation of
the 50k, so 600 steps see 76,800 augmented images, about 1.5 passes), on the
TensorFlow backend (the fastest here for conv nets); the paper ran 64,000 steps, 107x
more. Schedule: lr 0.01 for the first 100 steps (`--warmup-steps`, the paper's remedy
for ResNet-110, Sec. 4.2: "0.01 to warm up the training until the training error is
below 80% (about 400 iterations)"), then 0.1, / 10 after steps 300 and 450. Without the
warm-up the 56-layer nets blow up at lr 0.1 (ResNet-56: loss 2.30 at step 1, 11.3 at
step 5, then back at chance) and stayed at chance in our earlier 160-step run; every net
gets the same warm-up so that the comparisons share one schedule. Chosen by timing a
few steps first (2 CPU cores shared with other jobs, load average 8-12: 56 layers
3.4-4 s per step); the run itself, two processes of one 56- and one 20-layer net each,
took 49 min of wall time at load average 7-30 (56 layers 2.2-4.5 s per step). At this
budget residual beats plain at both depths and plain-56 trains worse than plain-20
(degradation), each by 12-17 points; ResNet-56 is still behind ResNet-20 (see
applications/results/resnet_cifar_results.md).

Each net's record is saved as soon as it finishes; a rerun with the same budget keeps
the nets already in the metrics file (`--fresh` retrains them), so the four nets can
be run in separate processes (`--nets`) into one folder. `--report-only` redraws the
table and plot from the metrics file. Claims count as shown only when the difference
exceeds two binomial standard errors.

Writes into --output-dir (default applications/results/): resnet_cifar_metrics.json,
resnet_cifar_results.md (the table) and resnet_cifar_training_error.png (training error
per epoch, plain nets left and residual nets right, like Fig. 6; the final test error
as a hollow marker).
"""

import argparse
import json
import os
import pathlib
import sys
import time

import numpy as np

NETS = ("plain20_cifar", "plain56_cifar", "resnet20_cifar", "resnet56_cifar")
PAPER_TEST_ERROR = {"resnet20_cifar": 8.75, "resnet56_cifar": 6.97}  # Table 6, %
PAPER = "He et al. 2016, Table 6 (64k steps of batch 128, 45k training images, 10k test)"
LABELS = {"plain20_cifar": "plain-20", "plain56_cifar": "plain-56",
          "resnet20_cifar": "ResNet-20", "resnet56_cifar": "ResNet-56"}
DEFAULT_DATA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "cifar10-jpeg.zip"
RESULTS = pathlib.Path(__file__).resolve().parent / "results"


def common_arguments(description, train_images, epochs):
    """The flags both CIFAR reproductions share (defaults = the budget actually run)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--dataset", default=str(DEFAULT_DATA),
                        help="CIFAR-10 (a .zip of class folders, .npz, or tfds name 'cifar10'); 'digits' for a smoke test")
    parser.add_argument("--train-images", type=int, default=train_images,
                        help="a seeded class-balanced subset of the training set (0: all)")
    parser.add_argument("--test-images", type=int, default=0, help="evaluate on this many test images (0: all)")
    parser.add_argument("--epochs", type=int, default=epochs)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--backend", default=os.environ.get("KERAS_BACKEND", "jax"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output-dir", default=str(RESULTS))
    parser.add_argument("--verbose", type=int, default=2)
    return parser


def check_dataset(dataset):
    if dataset.lower().endswith((".zip", ".npz")) and not pathlib.Path(dataset).exists():
        sys.exit(f"CIFAR-10 not found at {dataset}; pass --dataset path/to/cifar10-jpeg.zip (or 'cifar10')")


def set_backend(name):
    """Select the Keras backend before Keras is imported (or check the one in use)."""
    os.environ["KERAS_BACKEND"] = name
    import keras

    if keras.backend.backend() != name:
        sys.exit(f"--backend {name}: Keras was already imported with {keras.backend.backend()!r}.")


def balanced_subset(labels, count, seed):
    """Indices of `count` examples, as equal a share of every class as possible, seeded."""
    if not count or count >= len(labels):
        return np.arange(len(labels))
    rng = np.random.default_rng(seed)
    classes = np.unique(labels)
    per_class = [rng.permutation(np.flatnonzero(labels == c)) for c in classes]
    share = count // len(classes)
    chosen = [rows[:share] for rows in per_class]
    rest = rng.permutation(np.concatenate([rows[share:] for rows in per_class]))
    chosen.append(rest[: count - share * len(classes)])
    return np.sort(np.concatenate(chosen))


def load_cifar(dataset, train_images, test_images, seed):
    """(x_train, y_train, x_test, y_test): float32, normalised per channel by the training images."""
    from keras_paperzoo.data import load_dataset, require_labels
    from keras_paperzoo.data.augmentation import per_channel_statistics

    # "digits" (8x8 grey) is resized to the nets' 32x32 RGB input for smoke tests.
    size = 32 if dataset == "digits" else None
    x_train, y_train = load_dataset(dataset, split="train", image_size=size, color_mode="rgb")
    x_test, y_test = load_dataset(dataset, split="test", image_size=size, color_mode="rgb")
    require_labels(y_train, "resnet_cifar", dataset)
    rows = balanced_subset(y_train, train_images, seed)
    x_train, y_train = x_train[rows], y_train[rows]
    if test_images and test_images < len(x_test):
        rows = balanced_subset(y_test, test_images, seed)
        x_test, y_test = x_test[rows], y_test[rows]
    mean, variance = per_channel_statistics(x_train)
    scale = np.sqrt(variance)
    return (((x_train - mean) / scale).astype("float32"), y_train,
            ((x_test - mean) / scale).astype("float32"), y_test)


def train_and_test(backbone, data, epochs, batch_size, seed, verbose=2, steps_per_epoch=None, warmup_steps=0):
    """Train `ImageClassifier(backbone)` with its paper recipe; return per-epoch and final metrics.

    `data` is `load_cifar`'s tuple. `steps_per_epoch` (None: a full pass) makes each
    epoch that many batches of a fresh seeded permutation of all the training images;
    `warmup_steps` trains at lr / 10 first (`ImageClassifier.compile`). Training error per epoch is 1 - the running accuracy
    on the augmented batches (the paper's Fig. 6 thin curves); test error is on `x_test`.
    """
    import keras

    from keras_paperzoo.data.augmentation import CifarAugmentation
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
    from keras_paperzoo.models import ImageClassifier

    x_train, y_train, x_test, y_test = data
    batch_size = min(batch_size, len(x_train))
    augment = CifarAugmentation(image_size=x_train.shape[1], seed=seed)
    train = EpochShuffledBatches(x_train, y_train, batch_size=batch_size, drop_remainder=False,
                                 seed=seed, steps_per_epoch=steps_per_epoch or None, augment=augment)
    num_classes = int(max(y_train.max(), y_test.max())) + 1
    model = ImageClassifier(backbone, num_classes)
    model.compile(steps_per_epoch=len(train), epochs=epochs, warmup_steps=warmup_steps)

    epoch_seconds = []

    class _EpochClock(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.start = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            epoch_seconds.append(round(time.perf_counter() - self.start, 2))

    start = time.perf_counter()
    history = model.fit(train, epochs=epochs, verbose=verbose,
                        callbacks=[train.epoch_callback(), _EpochClock()])
    train_seconds = time.perf_counter() - start
    start = time.perf_counter()
    test_loss, test_accuracy = model.evaluate(x_test, y_test, batch_size=256, verbose=0)
    test_seconds = time.perf_counter() - start
    train_error = [100.0 * (1.0 - float(a)) for a in history.history["accuracy"]]
    return {
        "parameters": int(model.count_params()),
        "train_error_percent_per_epoch": [round(e, 2) for e in train_error],
        "train_loss_per_epoch": [round(float(v), 4) for v in history.history["loss"]],
        "final_train_error_percent": round(train_error[-1], 2),
        "test_error_percent": round(100.0 * (1.0 - float(test_accuracy)), 2),
        "test_loss": round(float(test_loss), 4),
        "steps": len(train) * epochs,
        "epoch_seconds": epoch_seconds,
        "train_seconds": round(train_seconds, 1),
        "test_seconds": round(test_seconds, 1),
    }


def budget_record(args, data, **extra):
    """What a run is (the keys that must match for results to be merged) and where it ran."""
    import keras

    batch_size = min(args.batch_size, len(data[0]))
    return {
        "backend": keras.backend.backend(),
        "dataset": str(args.dataset),
        "train_images": int(len(data[0])),
        "test_images": int(len(data[2])),
        "epochs": args.epochs,
        "batch_size": batch_size,
        "steps_per_epoch": -(-len(data[0]) // batch_size),
        "seed": args.seed,
        "cpu_cores": os.cpu_count(),
        **extra,
    }


def same_run(a, b):
    keys = ("backend", "dataset", "train_images", "test_images", "epochs", "batch_size", "steps_per_epoch",
            "warmup_steps", "seed")
    return all(a.get(k) == b.get(k) for k in keys)


def previous_nets(path, budget):
    """Nets already finished with this exact budget in the metrics file at `path` (else {})."""
    if not path.exists():
        return {}
    old = json.loads(path.read_text())
    return dict(old.get("nets", {})) if same_run(old.get("budget", {}), budget) else {}


def wall_seconds(run):
    """A net's building + training + testing time (train + test time for records without it)."""
    return run.get("wall_seconds", run["train_seconds"] + run["test_seconds"])


def timed_run(train, *args, **kwargs):
    """`train(*args, **kwargs)` plus the wall time and load average around it."""
    load, start = os.getloadavg(), time.perf_counter()
    result = train(*args, **kwargs)
    result["wall_seconds"] = round(time.perf_counter() - start, 1)
    result["load_average_1_5_15_min_at_start"] = [round(v, 2) for v in load]
    result["load_average_1_5_15_min_at_end"] = [round(v, 2) for v in os.getloadavg()]
    return result


def plot_training_error(panels, path, epochs, width=960, height=440):
    """Training error (%) per epoch, one panel per (title, curves); Fig. 6 style, drawn with PIL.

    Each curve is (label, colour, errors per epoch, final test error or None); the test
    error is drawn as a hollow circle after the last epoch.
    """
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    values = [v for _, curves in panels for c in curves for v in list(c[2]) + [c[3] or 0]]
    top = max(10.0, float(np.ceil(max(values) / 10.0) * 10.0))
    margin_left, margin_right, margin_top, margin_bottom = 50, 15, 30, 40
    panel_width = (width - 10) // len(panels)
    for p, (title, curves) in enumerate(panels):
        x0 = p * panel_width + margin_left
        x1 = (p + 1) * panel_width - margin_right
        y0, y1 = margin_top, height - margin_bottom

        def to_xy(epoch, error):
            x = x0 + (epoch - 0.5) / (epochs + 0.5) * (x1 - x0)
            return x, y1 - error / top * (y1 - y0)

        for level in np.arange(0.0, top + 1e-6, 10.0):
            y = to_xy(1, level)[1]
            draw.line([(x0, y), (x1, y)], fill=(225, 225, 225))
            draw.text((x0 - 28, y - 6), f"{level:.0f}", fill="black")
        for epoch in range(1, epochs + 1):
            if epochs <= 20 or epoch % max(1, epochs // 10) == 0:
                x = to_xy(epoch, 0)[0]
                draw.text((x - 4, y1 + 6), str(epoch), fill="black")
        draw.rectangle([x0, y0, x1, y1], outline="black")
        draw.text((x0, 8), title, fill="black")
        draw.text(((x0 + x1) // 2 - 20, y1 + 22), "epoch", fill="black")
        draw.text((x0 + 4, y0 + 4), "error (%)", fill="black")
        for i, (label, colour, errors, test_error) in enumerate(curves):
            points = [to_xy(e + 1, v) for e, v in enumerate(errors)]
            if len(points) > 1:
                draw.line(points, fill=colour, width=2)
            for x, y in points:
                draw.ellipse([x - 3, y - 3, x + 3, y + 3], fill=colour)
            if test_error is not None:
                x, y = to_xy(len(errors) + 0.35, test_error)
                draw.ellipse([x - 5, y - 5, x + 5, y + 5], outline=colour, width=2)
            lx, ly = x0 + 12, y1 - 16 * (len(curves) + 1) - 8 + 16 * i  # legend bottom left
            draw.line([(lx, ly + 6), (lx + 20, ly + 6)], fill=colour, width=2)
            draw.text((lx + 26, ly), label, fill="black")
        draw.text((x0 + 12, y1 - 24), "o = final test error", fill="black")
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)
    return path


def compare_errors(better, worse, key, n):
    """Is error `key` of run `better` lower than `worse`'s by more than 2 standard errors?

    Errors are rates over n images (binomial): a difference inside 2 combined standard
    errors (about 0.8 points for 10,000 test images near 90 %) is not evidence.
    """
    p, q = better[key] / 100.0, worse[key] / 100.0
    two_se = 200.0 * np.sqrt((p * (1 - p) + q * (1 - q)) / n)
    difference = worse[key] - better[key]
    return {"holds": bool(difference > two_se), "difference_points": round(difference, 2),
            "two_standard_errors_points": round(float(two_se), 2)}


def claims(nets, budget):
    """The paper's claims checked on our numbers (for the nets that ran), with their margins.

    Training error is over the images of the last epoch (`steps_per_epoch` batches, at most
    `train_images`), test error over `test_images`.
    """
    seen = budget.get("steps_per_epoch", 0) * budget.get("batch_size", 0) or budget["train_images"]
    test = ("test_error_percent", budget["test_images"])
    train = ("final_train_error_percent", min(seen, budget["train_images"]))
    out = {}
    for depth in (20, 56):
        plain, residual = nets.get(f"plain{depth}_cifar"), nets.get(f"resnet{depth}_cifar")
        if plain and residual:
            out[f"resnet{depth}_test_error_below_plain{depth}"] = compare_errors(residual, plain, *test)
            out[f"resnet{depth}_train_error_below_plain{depth}"] = compare_errors(residual, plain, *train)
    if "plain20_cifar" in nets and "plain56_cifar" in nets:  # degradation (Fig. 6 left)
        out["plain56_train_error_above_plain20"] = compare_errors(nets["plain20_cifar"], nets["plain56_cifar"], *train)
    if "resnet20_cifar" in nets and "resnet56_cifar" in nets:  # no degradation with shortcuts (Fig. 6 middle)
        out["resnet56_train_error_below_resnet20"] = compare_errors(nets["resnet56_cifar"], nets["resnet20_cifar"], *train)
    return out


def table(nets, budget):
    minutes = sum(wall_seconds(run) for run in nets.values()) / 60
    lines = [
        f"CIFAR-10, {budget['train_images']:,} training images x {budget['epochs']} epochs "
        f"({budget['steps_per_epoch'] * budget['epochs']} steps of batch {budget['batch_size']}; the paper: 64,000 steps), "
        f"test on {budget['test_images']:,} images, {budget['backend']} backend, "
        f"{budget['cpu_cores']} shared CPU cores, {minutes:.0f} min of training and testing in all.",
        "",
        "| net | parameters | paper test error (%) | our test error (%) | our final training error (%) | train time (min) |",
        "|---|---|---|---|---|---|",
    ]
    for name, run in nets.items():
        paper = PAPER_TEST_ERROR.get(name)
        lines.append(
            f"| {LABELS.get(name, name)} | {run['parameters']:,} | "
            f"{'%.2f' % paper if paper else 'Fig. 6 only'} | {run['test_error_percent']:.2f} | "
            f"{run['final_train_error_percent']:.2f} | {run['train_seconds'] / 60:.1f} |"
        )
    return "\n".join(lines)


def report(output):
    """Write resnet_cifar_results.md and resnet_cifar_training_error.png from the metrics JSON."""
    output = pathlib.Path(output)
    metrics = json.loads((output / "resnet_cifar_metrics.json").read_text())
    budget = metrics["budget"]
    nets = {n: metrics["nets"][n] for n in sorted(metrics["nets"], key=lambda n: (n not in NETS, NETS.index(n) if n in NETS else n))}
    colours = {20: (31, 119, 180), 56: (214, 39, 40)}
    panels = [
        (title, [(LABELS.get(n, n), colours[56 if "56" in n else 20], run["train_error_percent_per_epoch"],
                  run["test_error_percent"]) for n, run in nets.items() if n.startswith(prefix)])
        for title, prefix in (("plain nets: training error (%)", "plain"), ("ResNets: training error (%)", "resnet"))
    ]
    plot_training_error([p for p in panels if p[1]], output / "resnet_cifar_training_error.png", budget["epochs"])
    text = table(nets, budget) + "\n\nClaims (holds = difference larger than 2 standard errors):\n" + "\n".join(
        f"- {claim}: {'holds' if c['holds'] else 'not shown'} (difference {c['difference_points']:+.2f} points, "
        f"2 s.e. {c['two_standard_errors_points']:.2f})" for claim, c in metrics["claims"].items())
    if metrics.get("notes"):  # observations added by hand to the metrics file
        text += "\n\nNotes:\n" + "\n".join(f"- {note}" for note in metrics["notes"])
    (output / "resnet_cifar_results.md").write_text(text + "\n")
    return text


def main(argv=None):
    parser = common_arguments(__doc__.splitlines()[0], train_images=0, epochs=6)
    parser.add_argument("--steps-per-epoch", type=int, default=100,
                        help="batches per epoch, each epoch a fresh permutation of all the training images (0: a full pass)")
    parser.add_argument("--warmup-steps", type=int, default=100,
                        help="updates at lr 0.01 before the paper's 0.1 (He et al. Sec. 4.2, ResNet-110; 0: none)")
    parser.add_argument("--nets", default=",".join(NETS), help=f"comma-separated presets among {', '.join(NETS)}")
    parser.add_argument("--fresh", action="store_true",
                        help="retrain every net (by default nets already in the metrics JSON with this budget are kept)")
    parser.add_argument("--report-only", action="store_true",
                        help="no training: rewrite the table and plot from the metrics JSON in --output-dir")
    args = parser.parse_args(argv)
    output = pathlib.Path(args.output_dir)
    if args.report_only:
        print(report(output))
        return 0
    names = [n for n in args.nets.split(",") if n]
    if not names or any(not (n.startswith(("plain", "resnet")) and n.endswith("_cifar")) for n in names):
        parser.error(f"--nets {args.nets!r}: expected CIFAR presets such as {', '.join(NETS)}")
    check_dataset(args.dataset)
    set_backend(args.backend)

    import keras

    from keras_paperzoo.models import ResNetBackbone

    data = load_cifar(args.dataset, args.train_images, args.test_images, args.seed)
    batches = -(-len(data[0]) // min(args.batch_size, len(data[0])))
    steps_per_epoch = min(args.steps_per_epoch, batches) if args.steps_per_epoch > 0 else batches
    if args.warmup_steps and not 0 < args.warmup_steps < steps_per_epoch * args.epochs // 2:
        parser.error(f"--warmup-steps {args.warmup_steps}: should end before the first lr drop, at update "
                     f"{steps_per_epoch * args.epochs // 2} of {steps_per_epoch * args.epochs}")
    budget = budget_record(args, data, steps_per_epoch=steps_per_epoch, warmup_steps=args.warmup_steps)
    output.mkdir(parents=True, exist_ok=True)
    metrics_file = output / "resnet_cifar_metrics.json"
    nets = {} if args.fresh else previous_nets(metrics_file, budget)
    for name in names:
        if name in nets:
            print(f"== {name}: kept from {metrics_file} (same budget; --fresh retrains)", flush=True)
            continue
        print(f"== {name}", flush=True)
        keras.utils.set_random_seed(args.seed)  # each net starts from the same seed, whatever the order
        backbone = ResNetBackbone.from_preset(name, image_shape=data[0].shape[1:])
        nets[name] = timed_run(train_and_test, backbone, data, args.epochs, args.batch_size, args.seed, args.verbose,
                               steps_per_epoch=steps_per_epoch, warmup_steps=args.warmup_steps)
        print(f"   {name}: {json.dumps(nets[name])}", flush=True)
        # Saved after every net, so a long run that stops keeps what it finished.
        metrics = {"paper": PAPER, "paper_test_error_percent": PAPER_TEST_ERROR, "budget": budget,
                   "nets": nets, "claims": claims(nets, budget)}
        metrics_file.write_text(json.dumps(metrics, indent=2) + "\n")
    print()
    print(report(output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
