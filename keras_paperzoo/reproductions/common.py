"""What every reproduction shares: arguments, backend, data, timing, the device, and the paper-vs-ours report.

A reproduction module has `main(argv) -> metrics` (it writes its metrics JSON, results
Markdown and pictures into `--output-dir`) and `paper_vs_ours(metrics) -> rows`, each row
(quantity, the paper's number, ours). `reproduce` runs one with a budget's arguments and
writes `reproduce_<paper>.md` / `.json`: the rows with the budget, the device, the time
and the module's claims, printed as well.
"""

import importlib
import json
import os
import pathlib
import platform
import shutil
import subprocess
import sys
import time

import numpy as np

from keras_paperzoo.reproductions import REPRODUCTIONS

# The datasets found or downloaded by name (keras_paperzoo.data.sources: --data-dir, $PAPERZOO_DATA, the cache).
DATASETS = ("mnist", "cifar10")
TEXT_DATASETS = ("tiny_shakespeare", "multi30k", "sst2")  # the offline English corpus of bert and gpt1
_DATA_DIR = {"value": None}  # --data-dir of the reproduction being run (set when its arguments are parsed)


NET_LABELS = {"plain20_cifar": "plain-20", "plain56_cifar": "plain-56",
              "resnet20_cifar": "ResNet-20", "resnet56_cifar": "ResNet-56"}


class UsageError(ValueError):
    """A bad argument of a reproduction: one line, no trace."""


def data_dir():
    """The --data-dir of the reproduction being run (None: $PAPERZOO_DATA, the local copy, the cache)."""
    return _DATA_DIR["value"]


def data_file(key, hint=None):
    """The path of dataset `key` ("mnist", "tiny_shakespeare", "multi30k", ...), found or downloaded
    (`keras_paperzoo.data.sources.locate`); one line naming the file and the folder when it cannot be."""
    from keras_paperzoo.data.sources import locate

    return locate(key, data_dir=data_dir(), hint=hint)


def data_folder(keys, hint=None):
    """One folder holding every dataset of `keys` (tinyshakespeare.txt, multi30k/, sst2/), found or downloaded."""
    from keras_paperzoo.data.sources import locate_together

    return locate_together(keys, data_dir=data_dir(), hint=hint)


def dataset_source(dataset, hint="or pass --dataset digits for a smoke run"):
    """What `load_dataset` reads for `dataset`: 'mnist' / 'cifar10' found or downloaded, else as given."""
    if dataset in DATASETS:
        return str(data_file(dataset, hint))
    return str(dataset)


def require_dataset(dataset, hint="--dataset digits for a smoke run"):
    """The file `dataset` names, found or downloaded; one line naming the file, the folder and what to pass instead."""
    hint = f"or pass {hint}"
    source = dataset_source(dataset, hint)
    if source.lower().endswith((".zip", ".npz")) and not pathlib.Path(source).exists():
        raise FileNotFoundError(f"--dataset {source} does not exist; {hint}")
    return source


# --- arguments -------------------------------------------------------------------------------
class ArgumentParser:
    """argparse with errors raised as `UsageError` (one line for `paperzoo reproduce`), and the shared flags."""

    def __new__(cls, description, backend="tensorflow", output_dir=None):
        import argparse

        class _Parser(argparse.ArgumentParser):
            def error(self, message):
                raise UsageError(message)

            def parse_args(self, args=None, namespace=None):
                parsed = super().parse_args(args, namespace)
                _DATA_DIR["value"] = parsed.data_dir
                return parsed

        parser = _Parser(description=description)
        parser.add_argument("--backend", default=os.environ.get("KERAS_BACKEND") or backend,
                            choices=("tensorflow", "jax", "torch"), help=f"Keras backend (default $KERAS_BACKEND or {backend})")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--output-dir", default=output_dir or str(pathlib.Path("runs") / "reproduce"))
        parser.add_argument("--verbose", type=int, default=2)
        parser.add_argument("--data-dir", default=None,
                            help="a folder with the datasets (mnist.npz, cifar10.npz, tinyshakespeare.txt, multi30k/, "
                            "sst2/), looked in first and downloaded into (default $PAPERZOO_DATA, else "
                            "~/.keras/datasets)")
        return parser


def cifar_arguments(description, train_images, epochs):
    """The flags the CIFAR classifier reproductions share (defaults = the budget actually run)."""
    parser = ArgumentParser(description)
    parser.add_argument("--dataset", default="cifar10",
                        help="cifar10 (found or downloaded, see --data-dir), a .zip of class folders or .npz; 'digits' "
                        "for a smoke test")
    parser.add_argument("--train-images", type=int, default=train_images,
                        help="a seeded class-balanced subset of the training set (0: all)")
    parser.add_argument("--test-images", type=int, default=0, help="evaluate on this many test images (0: all)")
    parser.add_argument("--epochs", type=int, default=epochs)
    parser.add_argument("--batch-size", type=int, default=128)
    return parser


def comma_list(text, flag, known=None, kind=str):
    """`text` split at commas (converted by `kind`); an empty list, a bad value or one not in `known` is refused."""
    try:
        values = [kind(v.strip()) for v in str(text).split(",") if v.strip()]
    except ValueError:
        values = []
    unknown = [v for v in values if known is not None and v not in known]
    if not values or unknown:
        raise UsageError(f"{flag} {text!r}: unknown {unknown or 'empty'}" + (f"; known: {', '.join(known)}" if known else
                         f"; expected comma-separated {kind.__name__} values"))
    return values


def select_backend(name):
    """Select the Keras backend before Keras is imported (or check the one already running)."""
    current = sys.modules.get("keras")
    if current is not None and current.backend.backend() != name:
        raise UsageError(f"--backend {name}: Keras is already running on {current.backend.backend()!r}")
    os.environ["KERAS_BACKEND"] = name


# --- data ------------------------------------------------------------------------------------
def load_images(dataset, train_images, test_images, seed, image_size=None, color_mode=None):
    """(x_train, y_train, x_test, y_test) in [0, 1], seeded class-balanced subsets (0: all images)."""
    from keras_paperzoo.data import load_dataset, require_labels
    from keras_paperzoo.data.subsets import balanced_subset

    source = require_dataset(dataset)
    options = {"image_size": image_size, **({"color_mode": color_mode} if color_mode else {})}
    x_train, y_train = load_dataset(source, split="train", **options)
    x_test, y_test = load_dataset(source, split="test", **options)
    require_labels(y_train, "reproduce", dataset)
    rows, test_rows = balanced_subset(y_train, train_images, seed), balanced_subset(y_test, test_images, seed)
    return x_train[rows], y_train[rows], x_test[test_rows], y_test[test_rows]


def standardize(data):
    """Every image standardised by the training images' per-channel mean and std: (data, mean, std)."""
    x_train, y_train, x_test, y_test = data
    mean = x_train.mean(axis=(0, 1, 2))  # (C,)
    std = x_train.std(axis=(0, 1, 2))  # (C,)
    if np.any(std <= 0):
        raise ValueError(f"The training images have a channel of zero variance (std {std.tolist()}): nothing to learn.")
    norm = lambda x: ((x - mean) / std).astype("float32")  # noqa: E731
    return (norm(x_train), y_train, norm(x_test), y_test), mean, std


def center_raw_rgb(data):
    """Raw RGB values (0-255) less the training images' mean pixel: (data, mean).

    AlexNet's input (Sec. 2: "subtracting the mean activity over the training set from each
    pixel ... the (centered) raw RGB values") and VGG's (Sec. 2.1: "subtracting the mean RGB
    value"): no division by the standard deviation, so activations have the scale that the
    papers' N(0, 0.01) weights, unit biases and LRN constants (k = 2, alpha = 1e-4) were set for.
    """
    x_train, y_train, x_test, y_test = data
    mean = x_train.mean(axis=(0, 1, 2))  # (C,), in [0, 1]
    center = lambda x: ((x - mean) * 255.0).astype("float32")  # noqa: E731
    return (center(x_train), y_train, center(x_test), y_test), mean


def load_cifar(dataset, train_images, test_images, seed, image_size=32, inputs="standardized"):
    """RGB images at `image_size` (CIFAR-10 at its own 32 x 32 unless asked), standardised by the training images
    (`inputs="standardized"`) or the papers' centered raw RGB values (`inputs="raw-rgb"`, `center_raw_rgb`)."""
    if inputs not in INPUTS:
        raise UsageError(f"--inputs {inputs!r}: expected one of {', '.join(INPUTS)}")
    size = image_size if dataset == "digits" or image_size != 32 else None
    data = load_images(dataset, train_images, test_images, seed, size, "rgb")
    return (center_raw_rgb if inputs == "raw-rgb" else standardize)(data)[0]


INPUTS = ("standardized", "raw-rgb")


# --- supervised training ---------------------------------------------------------------------
def train_and_test(backbone, data, epochs, batch_size, seed, verbose=2, steps_per_epoch=None, warmup_steps=0):
    """`ImageClassifier(backbone)` with its paper recipe; per-epoch and final training and test errors.

    `data` is `load_cifar`'s tuple. `steps_per_epoch` (None: a full pass) makes each epoch that many
    batches of a fresh seeded permutation; `warmup_steps` trains at lr / 10 first. Training error per
    epoch is 1 - the running accuracy on the augmented batches (ResNet's Fig. 6 thin curves).
    """
    import keras

    from keras_paperzoo.data.views import CifarAugmentation
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
    from keras_paperzoo.models import ImageClassifier

    x_train, y_train, x_test, y_test = data
    batch_size = min(batch_size, len(x_train))
    augment = CifarAugmentation(image_size=x_train.shape[1], seed=seed)
    train = EpochShuffledBatches(x_train, y_train, batch_size=batch_size, drop_remainder=False,
                                 seed=seed, steps_per_epoch=steps_per_epoch or None, augment=augment)
    model = ImageClassifier(backbone, int(max(y_train.max(), y_test.max())) + 1)
    model.compile(steps_per_epoch=len(train), epochs=epochs, warmup_steps=warmup_steps)
    epoch_seconds = []

    class _EpochClock(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.start = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            epoch_seconds.append(round(time.perf_counter() - self.start, 2))

    start = time.perf_counter()
    history = model.fit(train, epochs=epochs, verbose=verbose, callbacks=[train.epoch_callback(), _EpochClock()])
    train_seconds = time.perf_counter() - start
    start = time.perf_counter()
    test_loss, test_accuracy = model.evaluate(x_test, y_test, batch_size=256, verbose=0)
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
        "test_seconds": round(time.perf_counter() - start, 1),
    }


def budget_record(args, data, **extra):
    """What a supervised run is (the keys that must match for saved runs to be kept) and where it ran."""
    import keras

    batch_size = min(args.batch_size, len(data[0]))
    return {"backend": keras.backend.backend(), "dataset": str(args.dataset), "train_images": int(len(data[0])),
            "test_images": int(len(data[2])), "epochs": args.epochs, "batch_size": batch_size,
            "steps_per_epoch": -(-len(data[0]) // batch_size), "seed": args.seed, "cpu_cores": os.cpu_count(),
            **extra}


def error_below(better, worse, key, n):
    """Is error `key` of run `better` below `worse`'s by more than 2 binomial standard errors over n images?"""
    from keras_paperzoo.evaluation.claims import accuracy_above

    return accuracy_above(worse[key], better[key], n)  # error below = accuracy above, the same margin


def run_above(runs, better, worse, key, n):
    """Is `key` of run `better` above run `worse`'s by more than 2 binomial standard errors over n images?"""
    from keras_paperzoo.evaluation.claims import accuracy_above

    return accuracy_above(runs[better][key], runs[worse][key], n)


def wall_seconds(run):
    """A run's building + training + testing time (train + test time for records without it)."""
    return run.get("wall_seconds", run.get("train_seconds", 0) + run.get("test_seconds", 0))


def claim_lines(claims):
    """A report's lines on the claims of a metrics file, one a claim (`evaluation.claims.claim_line`)."""
    from keras_paperzoo.evaluation.claims import claim_line

    return [claim_line(name, claim) for name, claim in claims.items()]


def claims_text(claims):
    return "\n".join(claim_lines(claims))


def wall_minutes(runs):
    """The minutes the saved `runs` took in all (their `wall_seconds`), for a report's first line."""
    return sum(r.get("wall_seconds", 0) for r in runs.values()) / 60


def per_epoch(values, fmt):
    """A report's cell of per-epoch numbers: "0.91, 0.84" (each in `fmt`), "-" for none."""
    return ", ".join(f"{v:{fmt}}" for v in values) if values else "-"


def notes_text(metrics):
    """The notes added by hand to a metrics file, as a report's closing "Notes:" list ("" without notes)."""
    if not metrics.get("notes"):
        return ""
    return "\nNotes:\n" + "".join(f"- {note}\n" for note in metrics["notes"])


# --- the metrics file of a reproduction of several runs ----------------------------------------
# Such a reproduction keeps each run in <output-dir>/<name>_<dataset>_metrics.json as it finishes
# (`run_each`) and writes its results Markdown from that file with `report(output_dir, dataset)`.
def add_probe_flags(parser):
    """`--probe-epochs` and `--no-random-init`: the linear probe of the frozen encoder, and whether the untrained
    encoder is evaluated too (the reference a learned representation must beat)."""
    parser.add_argument("--probe-epochs", type=int, default=100, help="linear probe epochs (MoCo: 100)")
    parser.add_argument("--no-random-init", action="store_true", help="skip the untrained encoder's evaluation")


def add_rerun_flags(parser):
    """`--fresh` and `--report-only`: what to do with the runs already in the metrics file."""
    parser.add_argument("--fresh", action="store_true", help="retrain runs already in the metrics JSON")
    parser.add_argument("--report-only", action="store_true", help="rewrite the table from the metrics JSON")


def metrics_path(args, name):
    """<output-dir>/<name>_<dataset>_metrics.json: the metrics file of a reproduction run with `args`."""
    return pathlib.Path(args.output_dir) / f"{name}_{args.dataset}_metrics.json"


def write_results(output, name, dataset, text):
    """`text` written to <output>/<name>_<dataset>_results.md, the results beside the metrics file; returns it."""
    (pathlib.Path(output) / f"{name}_{dataset}_results.md").write_text(text)
    return text


def read_metrics(output, name, dataset):
    """The metrics file <output>/<name>_<dataset>_metrics.json, read: what a `report` writes its results from."""
    return json.loads((pathlib.Path(output) / f"{name}_{dataset}_metrics.json").read_text())


def report_only(args, report, name):
    """`--report-only`: the results rewritten from the metrics file by `report(output_dir, dataset)` and printed;
    returns the metrics."""
    print(report(pathlib.Path(args.output_dir), args.dataset))
    return read_metrics(args.output_dir, name, args.dataset)


def run_and_report(records, names, run, args, report, shown=None):
    """`run_each` (`--fresh` from `args`), then the results written by `report(output_dir, dataset)` and printed;
    returns the metrics."""
    metrics = run_each(records, names, run, args.fresh, shown)
    _print_report(args, report)
    return metrics


def save_and_report(args, name, metrics, report):
    """A reproduction of one run: `metrics` written to its metrics file (`metrics_path`), then the results written by
    `report(output_dir, dataset)` and printed; returns `metrics`."""
    write_json(metrics_path(args, name), metrics)
    _print_report(args, report)
    return metrics


def _print_report(args, report):
    print()
    print(report(pathlib.Path(args.output_dir), args.dataset))


# --- pictures --------------------------------------------------------------------------------
def line_plot(panels, path, x_range, y_range, x_label, y_label, width=960, height=440, x_ticks=()):
    """Curves on panels side by side, drawn with PIL (no matplotlib).

    `panels`: [(title, curves)], a curve (label, colour, xs, ys, style) with style "line", "dots"
    (a line with a dot per point) or "dashed", plus optionally (x, y) for one hollow marker.
    """
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    (x_low, x_high), (y_low, y_high) = x_range, y_range
    panel_width = (width - 10) // len(panels)
    for p, (title, curves) in enumerate(panels):
        x0, x1, y0, y1 = p * panel_width + 50, (p + 1) * panel_width - 15, 30, height - 40

        def to_xy(x, y):
            return (x0 + (x - x_low) / (x_high - x_low) * (x1 - x0),
                    y1 - (min(max(y, y_low), y_high) - y_low) / (y_high - y_low) * (y1 - y0))

        for level in np.linspace(y_low, y_high, 6):
            y = to_xy(x_low, level)[1]
            draw.line([(x0, y), (x1, y)], fill=(225, 225, 225))
            draw.text((x0 - 40, y - 6), f"{level:.3g}", fill="black")
        for tick in x_ticks:
            draw.text((to_xy(tick, y_low)[0] - 4, y1 + 6), f"{tick:g}", fill="black")
        draw.rectangle([x0, y0, x1, y1], outline="black")
        draw.text((x0, 8), title, fill="black")
        draw.text(((x0 + x1) // 2 - 20, y1 + 22), x_label, fill="black")
        draw.text((x0 + 4, y0 + 4), y_label, fill="black")
        for i, (label, colour, xs, ys, style, *marker) in enumerate(curves):
            points = [to_xy(x, y) for x, y in zip(xs, ys)]
            if style == "dashed":
                for a, b in list(zip(points, points[1:]))[::2]:
                    draw.line([a, b], fill=colour, width=2)
            elif len(points) > 1:
                draw.line(points, fill=colour, width=2)
            if style == "dots":
                for x, y in points:
                    draw.ellipse([x - 3, y - 3, x + 3, y + 3], fill=colour)
            if marker and marker[0] is not None:
                x, y = to_xy(*marker[0])
                draw.ellipse([x - 5, y - 5, x + 5, y + 5], outline=colour, width=2)
            lx, ly = x0 + 12, y1 - 16 * (len(curves) + 1) - 8 + 16 * i  # legend, bottom left
            draw.line([(lx, ly + 6), (lx + 20, ly + 6)], fill=colour, width=2)
            draw.text((lx + 26, ly), label, fill="black")
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)
    return path


def plot_training_error(panels, path, epochs, width=960, height=440):
    """Training error (%) per epoch, one panel per (title, curves); ResNet's Fig. 6 style.

    Each curve is (label, colour, errors per epoch, final test error or None); the test error
    is drawn as a hollow circle after the last epoch.
    """
    values = [v for _, curves in panels for c in curves for v in list(c[2]) + [c[3] or 0]]
    top = max(10.0, float(np.ceil(max(values) / 10.0) * 10.0))
    ticks = [e for e in range(1, epochs + 1) if epochs <= 20 or e % max(1, epochs // 10) == 0]
    drawn = [(title, [(label, colour, range(1, len(errors) + 1), errors, "dots",
                       None if test is None else (len(errors) + 0.35, test))
                      for label, colour, errors, test in curves]) for title, curves in panels]
    return line_plot(drawn, path, (0.5, epochs + 1.0), (0.0, top), "epoch", "error (%)  o = final test error",
                     width, height, ticks)


# --- files and the report --------------------------------------------------------------------
def write_json(path, value):
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2, default=_plain) + "\n")
    return value


def run_each(records, names, run, fresh=False, shown=None):
    """`run(name)` (a dict of results) for each name not yet saved under this budget; returns the metrics file.

    A reproduction of several runs saves each as it finishes (`RunRecords`), so an interrupted
    one continues where it stopped: a run already in `records.path` with the same budget is
    kept, `fresh=True` (`--fresh`) retrains them all. Each result gets its wall time and load
    (`timed`); `shown(result)` is what is printed of it (default: all).
    """
    from keras_paperzoo.evaluation.run_records import timed

    if fresh and records.path.exists():
        records.path.unlink()
    done = records.load()
    for name in names:
        if name in done:
            print(f"== {name}: kept from {records.path} (same budget; --fresh retrains)", flush=True)
            continue
        print(f"== {name}", flush=True)
        result = timed(run, name)
        print(f"   {name}: {json.dumps(shown(result) if shown else result)}", flush=True)
        done = records.save({name: result})
    return json.loads(records.path.read_text()) if records.path.exists() else {}


def _plain(value):
    """NumPy scalars as numbers, anything else JSON does not know (paths) as text."""
    if isinstance(value, np.generic):
        return value.item()
    return str(value)


def device_description():
    """Where Keras runs: the accelerator's name (nvidia-smi) when Keras sees one, else the CPU; cores and load."""
    import keras

    gpus = []
    if shutil.which("nvidia-smi"):
        try:
            gpus = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                                  text=True, timeout=20).stdout.strip().splitlines()
        except (OSError, subprocess.SubprocessError):
            gpus = []
    # keras.distribution (JAX) says which devices Keras uses; elsewhere the GPUs that are there are named.
    try:
        listed = keras.distribution.list_devices()
    except (AttributeError, NotImplementedError):  # no distribution support on this backend
        listed = None
    if listed is not None and all(str(d).lower().startswith("cpu") for d in listed):
        gpus = []
    if gpus:
        return f"{len(gpus)} x {gpus[0]} ({keras.backend.backend()})"
    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return f"CPU: {os.cpu_count()} cores of {cpu} (load average {load}; {keras.backend.backend()})"


# What our side's data is called beside a paper's number (other values: the file or folder name).
DATA_NAMES = {"digits": "digits (scikit-learn's 8 x 8)", "mnist": "MNIST", "cifar10": "CIFAR-10",
              "toy": "toy German-English template pairs", "sample": "built-in sample text"}


def our_setting(reproduction, budget, argv):
    """Our data and budget in words, written beside every paper number: "digits (scikit-learn's 8 x 8), smoke budget".

    The data is the last --dataset / --data / --text of `argv`, else the module's default (`reproduction.data`).
    """
    from keras_paperzoo.reproductions import BUDGETS

    data = reproduction.data
    for flag in ("--dataset", "--data", "--text"):
        values = _values(argv, flag)
        if values:
            data = DATA_NAMES.get(values[-1], pathlib.Path(values[-1]).name or values[-1])
    return f"{data}, {budget} budget" if budget in BUDGETS else f"{data}, arguments as given"


def label_metrics_files(output_dir, since, paper_setting, ours_setting):
    """Put {"paper": ..., "ours": ...} settings first in each *_metrics.json written into `output_dir` since `since`
    (time.time()): the paper's numbers in those files sit beside ours, on other data and budgets."""
    labelled = []
    for path in sorted(pathlib.Path(output_dir).glob("*_metrics.json")):
        if path.stat().st_mtime < since:
            continue
        try:
            metrics = json.loads(path.read_text())
        except ValueError:
            continue
        if isinstance(metrics, dict):
            metrics.pop("paper_vs_ours_settings", None)
            write_json(path, {"paper_vs_ours_settings": {"paper": paper_setting, "ours": ours_setting}, **metrics})
            labelled.append(path.name)
    return labelled


def paper_vs_ours_table(rows, paper_setting=None, ours_setting=None):
    """The Markdown table of (quantity, paper, ours) rows; the column heads name each side's data and budget."""
    paper = f"paper: {paper_setting}" if paper_setting else "paper"
    ours = f"ours: {ours_setting}" if ours_setting else "ours"
    lines = [f"| | {paper} | {ours} |", "|---|---|---|"]
    lines += [f"| {what} | {paper} | {ours} |" for what, paper, ours in rows]
    return "\n".join(lines)


def write_summary(reproduction, budget, argv, metrics, output_dir, seconds):
    """reproduce_<paper>.md / .json: the paper's numbers beside ours, the budget, the device, the claims."""
    import keras

    output_dir = pathlib.Path(output_dir)
    rows = reproduction.load().paper_vs_ours(metrics)
    paper_setting, ours_setting = reproduction.paper_setting, our_setting(reproduction, budget, argv)
    device = device_description()
    claims = metrics.get("claims") or {}
    results = sorted(p.name for p in output_dir.glob("*_results.md"))
    text = "\n".join([
        f"# {reproduction.name}: {reproduction.paper}",
        "",
        f"Claim: {reproduction.claim}",
        "",
        paper_vs_ours_table(rows, paper_setting, ours_setting),
        "",
        f"Budget: `{budget}` (`{' '.join(argv)}`); backend {keras.backend.backend()}; device: {device}; "
        f"{seconds / 60:.1f} min in all.",
        *([f"Budget notes: {reproduction.notes}"] if reproduction.notes else []),
        *(["", "Claims (holds: beyond 2 standard errors where a difference is compared):", "",
           claims_text(claims)] if claims and all(isinstance(c, dict) and "holds" in c for c in claims.values())
          else []),
        "",
        f"Details: {', '.join(results) or '-'} (and the metrics JSON) in {output_dir}.",
    ]) + "\n"
    (output_dir / f"reproduce_{reproduction.name}.md").write_text(text, encoding="utf-8")
    write_json(output_dir / f"reproduce_{reproduction.name}.json", {
        "paper": reproduction.paper, "claim": reproduction.claim, "budget": budget, "arguments": argv,
        "backend": keras.backend.backend(), "device": device, "seconds": round(seconds, 1),
        "paper_setting": paper_setting, "ours_setting": ours_setting,
        "paper_vs_ours": [{"quantity": w, "paper": p, "paper_setting": paper_setting, "ours": o,
                           "ours_setting": ours_setting} for w, p, o in rows],
    })
    return text


def require_packages(reproduction):
    """Refuse, in one line naming the extra to install, a reproduction whose optional packages are missing."""
    from keras_paperzoo.optional import require_extras

    require_extras(reproduction.requires, f"paperzoo reproduce {reproduction.name}")


def reproduce(name, budget, extra=(), output_dir=None, backend=None):
    """Run paper `name`'s reproduction at `budget` (plus `extra` arguments); print and write the summary."""
    reproduction = REPRODUCTIONS[name]
    require_packages(reproduction)
    output_dir = str(output_dir or pathlib.Path("runs") / "reproduce" / f"{name}-{budget}")
    argv = reproduction.arguments(budget) + ["--output-dir", output_dir]
    argv += (["--backend", backend] if backend else []) + list(extra)
    start, since = time.perf_counter(), time.time() - 1
    metrics = reproduction.load().main(argv)
    label_metrics_files(output_dir, since, reproduction.paper_setting, our_setting(reproduction, budget, argv))
    print()
    print(write_summary(reproduction, budget, argv, metrics, output_dir, time.perf_counter() - start))
    return metrics


def script(module, argv, results):
    """A thin entry point (`python applications/resnet_cifar.py ...`): the module with its arguments, output in
    `results` unless --output-dir is given; one line for a bad argument or a missing file."""
    name = next(n for n, r in REPRODUCTIONS.items() if r.module == module)
    from keras_paperzoo.optional import MissingDependency

    try:
        require_packages(REPRODUCTIONS[name])
        reproduce_module = importlib.import_module(f"keras_paperzoo.reproductions.{module}")
        argv = ["--output-dir", str(results), *argv]
        start, since = time.perf_counter(), time.time() - 1
        metrics = reproduce_module.main(argv)
        label_metrics_files(_last(argv, "--output-dir"), since, REPRODUCTIONS[name].paper_setting,
                            our_setting(REPRODUCTIONS[name], "as given", argv))
        print()
        print(write_summary(REPRODUCTIONS[name], "as given", argv, metrics, _last(argv, "--output-dir"),
                            time.perf_counter() - start))
    except (ValueError, OSError, MissingDependency) as error:
        print(f"{module}: error: {error}", file=sys.stderr)
        return 2
    return 0


def _values(argv, flag):
    """The values given to `flag` in `argv` ("--flag value" or "--flag=value"), in order."""
    values = []
    for i, a in enumerate(argv):
        if a == flag and i + 1 < len(argv):
            values.append(argv[i + 1])
        elif a.startswith(flag + "="):
            values.append(a.split("=", 1)[1])
    return values


def _last(argv, flag):
    return _values(argv, flag)[-1]


def train_variants(args, builders, metrics_file, paper, claims, **extra_budget):
    """Train `ImageClassifier` on each backbone of `builders` (name -> image_shape -> backbone), one seed, one data.

    The CIFAR classifier ablations (AlexNet's LRN, VGG's configurations): each net is saved into
    `metrics_file` as it finishes; `claims(nets, budget)` gives the claims. Returns the metrics.
    """
    require_dataset(args.dataset)
    select_backend(args.backend)
    import keras

    from keras_paperzoo.evaluation.run_records import timed

    inputs, warmup_steps = getattr(args, "inputs", "standardized"), getattr(args, "warmup_steps", 0)
    data = load_cifar(args.dataset, args.train_images, args.test_images, args.seed, args.image_size, inputs)
    budget = budget_record(args, data, image_size=int(data[0].shape[1]), inputs=inputs, **extra_budget)
    if warmup_steps:
        budget["warmup_steps"] = warmup_steps
    nets = {}
    for name, build in builders.items():
        print(f"== {name}", flush=True)
        keras.utils.set_random_seed(args.seed)  # every net from the same seed, whatever the order
        nets[name] = timed(train_and_test, build(data[0].shape[1:]), data, args.epochs, args.batch_size, args.seed,
                           args.verbose, warmup_steps=warmup_steps)
        print(f"   {name}: {json.dumps(nets[name])}", flush=True)
        metrics = write_json(metrics_file, {"paper": paper, "budget": budget, "nets": nets,
                                            "claims": claims(nets, budget)})
    return metrics


def variants_table(metrics, title):
    """The Markdown table of `train_variants`' nets, with the budget and the claims."""
    b, nets = metrics["budget"], metrics["nets"]
    lines = [f"# {title}", "",
             f"{b['dataset']} at {b['image_size']} x {b['image_size']}, {b['train_images']:,} training images x "
             f"{b['epochs']} epochs ({b['steps_per_epoch'] * b['epochs']} updates of batch {b['batch_size']}), "
             f"test on {b['test_images']:,} images, {b['backend']} backend, {b['cpu_cores']} CPU cores, "
             f"{sum(wall_seconds(r) for r in nets.values()) / 60:.1f} min in all.", "",
             "| net | parameters | test error (%) | final training error (%) | train time (min) |",
             "|---|---|---|---|---|"]
    lines += [f"| {name} | {run['parameters']:,} | {run['test_error_percent']:.2f} | "
              f"{run['final_train_error_percent']:.2f} | {run['train_seconds'] / 60:.1f} |" for name, run in nets.items()]
    lines += ["", f"Paper: {metrics['paper']}", "", "Claims (holds = difference larger than 2 standard errors):",
              claims_text(metrics["claims"])]
    return "\n".join(lines) + "\n"
