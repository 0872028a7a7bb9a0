"""InstDisc's Figure 3 in small form: does the proximal term make the training loss oscillate less?

    paperzoo reproduce instdisc --budget cpu                  # the budget run below (digits)
    paperzoo reproduce instdisc --budget cpu --dataset mnist  # the same on MNIST (found or downloaded)
    paperzoo reproduce instdisc --budget cpu --report-only    # redraw the table

The claim (Wu et al. 2018, Sec. 3.3 and Fig. 3): each image is its own class and is
seen once per epoch, so "the learning process oscillates a lot from random sampling
fluctuation"; adding lambda ||v_i^(t) - v_i^(t-1)||^2 to the positive's loss (the
distance between the image's feature now and its memory-bank row from its last
visit) "helps stabilize training, speed up convergence, and improve the learned
representation". Fig. 3 shows the objective with and without it; its text gives no
value of lambda, and the authors' code has no proximal term (their memory-bank
momentum 0.5, `--nce-m`, is what they call the stabiliser).

The runs, identical but for the objective, the proximal term and the bank update
(same initial weights, data order, views and noise draws, seeded):

- `paper`: lambda = 0 and the bank row replaced by the new feature (momentum 0: the
  paper's "f_i -> v_i"), the dynamics Fig. 3 calls the original;
- `proximal_10`, `proximal_30`: the same with lambda = 10 and 30;
- `authors_code`: lambda = 0 and bank momentum 0.5 (the authors' `lemniscate.pytorch`);
- `nce_paper`, `nce_proximal_30`: the paper's NCE objective, lambda = 0 and 30.

The first four use the softmax over the 1 + m scores (`loss="softmax"`): on a data
set this small, NCE with Z fixed from the first batch collapses (the bank fills with
the untrained network's nearly parallel features in a few updates; see
`InstDisc`'s docstring and `recipes/instdisc.py`), which the two NCE runs show at
this budget; the proximal term acts on the features and the bank alike under
either objective.

Measured, not plotted: the per-update loss (the objective alone, without the
proximal term: the same quantity in every run of an objective; recovered from
Keras's running epoch means) over the second half of the run; its oscillation is

    osc = sd(l_t - l_{t-1}) / sqrt(2)

(the noise of the loss from one update to the next; for independent noise around a
slow trend it is that noise's sd), with a standard error from 4 equal blocks of that
half (sd of the block values / 2); and, as a second view, the mean |l_t - m_t| about
a centred 11-update moving average. A claim "less oscillation" holds when the
difference exceeds 2 s.e. of the difference (the blocks are treated as independent).
The representation: the paper's kNN (k = 200, exp(s / 0.07) votes) of test images
against the memory bank, and the kNN of the pooled backbone features h, each
difference against 2 binomial s.e. (`keras_paperzoo.evaluation.claims`).

Budget (the defaults): the embedded digits (1,500 training and 297 test images,
upsampled to 16 x 16, crops of at least half the digit as the `instdisc` recipe
does), the CIFAR ResNet-8 (one block per stage, 16-32-64 filters), batch 64, 23
updates per epoch x 16 epochs = 368 updates per run, m = 750 noise rows (half the
images), the paper's tau = 0.07, SGD lr 0.03 x 64 / 256 with the step drops at 60 %
and 80 % of the run, as `InstDisc.compile()` gives; 6 runs. Run once (2026-11-25,
TensorFlow, 2 shared cores at load 4-8): 13.5 min. Softmax: lambda = 10 and 30 cut
the loss's update-to-update oscillation 10x and 29x (beyond 2 s.e.) while its level
ends higher (6.5-6.6 against 6.0); the memory-bank kNN rises 9.8 points at lambda =
30 (beyond 2 s.e.). The bank momentum 0.5 does not damp it. NCE collapses with and
without the term. Results: applications/results/instdisc_proximal_digits_results.md
(measured times and load in the metrics file).

Runs are saved one by one into instdisc_proximal_<dataset>_metrics.json; a rerun with
the same budget keeps them (`--fresh` retrains).
"""

import os
import pathlib
import time

import numpy as np

from keras_paperzoo.reproductions import common

DATASETS = ("digits", "mnist")
IMAGE_SIZE = 16
CROP_SCALE = (0.5, 1.0)
BACKBONE = {"stage_blocks": [1, 1, 1]}  # CIFAR ResNet-8 (the instdisc_resnet20_cifar preset's ResNet-20, cut)
TINY_BACKBONE = {"stage_blocks": [1, 1], "stage_filters": [8, 16], "stem_filters": 8}
# name: (label, proximal lambda, bank momentum, objective)
RUNS = {
    "paper": ("softmax, lambda = 0, bank replaced", 0.0, 0.0, "softmax"),
    "proximal_10": ("softmax, lambda = 10, bank replaced", 10.0, 0.0, "softmax"),
    "proximal_30": ("softmax, lambda = 30, bank replaced", 30.0, 0.0, "softmax"),
    "authors_code": ("softmax, lambda = 0, bank momentum 0.5 (the authors' code)", 0.0, 0.5, "softmax"),
    "nce_paper": ("NCE, lambda = 0, bank replaced (the paper's objective)", 0.0, 0.0, "nce"),
    "nce_proximal_30": ("NCE, lambda = 30, bank replaced", 30.0, 0.0, "nce"),
}
BASELINE = {"softmax": "paper", "nce": "nce_paper"}  # what each objective's runs are compared with
BLOCKS = 4
WINDOW = 11
PAPER = {
    "figure_3": "Wu et al. 2018, Sec. 3.3 / Fig. 3: without the proximal term the objective 'oscillates a lot and "
                "converges very slowly'; with it the learning dynamics are smoother (ImageNet; lambda not given in "
                "the text)",
    "imagenet_resnet50_linear_percent": 54.0,
    "imagenet_resnet50_linear": "ImageNet ResNet-50, linear classifier on conv5: 54.0 % (the CVPR paper as MoCo's "
                                "Table 1 cites it; arXiv v1 reported 42.5 %)",
    "imagenet_resnet50_knn_percent": 46.5,
    "imagenet_resnet50_knn": "ImageNet ResNet-50, weighted kNN (k = 200) on the 128-d features: 46.5 % (CVPR "
                             "version, not read here; arXiv v1: 42.5 %; the authors' released ResNet-50: 46.8 %)",
    "cifar10_resnet18_knn_percent": 80.8,
    "cifar10_resnet18_knn": "CIFAR-10 ResNet-18, kNN on the non-parametric softmax's features: 80.8 % (Table 1; NCE "
                            "with m = 4096 approaches it)",
}


def parse_runs(text):
    return common.comma_list(text, "--runs", tuple(RUNS))


# --- the oscillation of a loss curve -----------------------------------------------------------
def per_step_values(epoch_means):
    """Per-update values from Keras's running means within each epoch: l_t = t a_t - (t - 1) a_{t-1}."""
    values = []
    for means in epoch_means:
        means = np.asarray(means, "float64")
        counts = np.arange(1, len(means) + 1)
        totals = means * counts
        values.extend(np.diff(np.concatenate([[0.0], totals])))
    return np.asarray(values)


def step_oscillation(losses):
    """sd(l_t - l_{t-1}) / sqrt(2): the update-to-update noise of the loss."""
    return float(np.std(np.diff(np.asarray(losses, "float64")), ddof=1) / np.sqrt(2))


def moving_average_deviation(losses, window=WINDOW):
    """mean |l_t - m_t| about the centred moving average of `window` updates (odd; cut to the series; ends dropped)."""
    losses = np.asarray(losses, "float64")
    window = min(window, len(losses) - 1 + len(losses) % 2)
    average = np.convolve(losses, np.ones(window) / window, mode="valid")
    return float(np.mean(np.abs(losses[window // 2: window // 2 + len(average)] - average)))


def oscillation(losses, blocks=BLOCKS):
    """The second half's oscillation, its s.e. from `blocks` blocks (None when too short), and the moving-average
    deviation."""
    half = np.asarray(losses, "float64")[len(losses) // 2:]
    blocks = min(blocks, len(half) // 3)  # at least 3 updates (2 changes) per block
    se = None
    if blocks >= 2:
        per_block = [step_oscillation(block) for block in np.array_split(half, blocks)]
        se = round(float(np.std(per_block, ddof=1) / np.sqrt(blocks)), 5)
    return {"oscillation": round(step_oscillation(half), 5), "oscillation_se": se,
            "moving_average_deviation": round(moving_average_deviation(half), 5),
            "updates_measured": int(len(half))}


def less_oscillation(smoother, rougher):
    """Does `smoother` oscillate less than `rougher` by more than 2 s.e. of the difference (no s.e.: not shown)?"""
    difference = rougher["oscillation"] - smoother["oscillation"]
    known = smoother["oscillation_se"] is not None and rougher["oscillation_se"] is not None
    margin = 2 * float(np.hypot(smoother["oscillation_se"], rougher["oscillation_se"])) if known else None
    return {"holds": bool(known and difference > margin), "oscillation": smoother["oscillation"],
            "against": rougher["oscillation"], "difference": round(difference, 5),
            "two_se": None if margin is None else round(margin, 5),
            "ratio": round(smoother["oscillation"] / rougher["oscillation"], 3)}


# --- a run --------------------------------------------------------------------------------------
def load_data(dataset, train_images, test_images, seed):
    """(x_train, y_train, x_test, y_test): RGB in [0, 1] at 16 x 16; class-balanced seeded subsets."""
    return common.load_images(dataset, train_images, test_images, seed, IMAGE_SIZE, "rgb")


class StepLosses:
    """Keras's running epoch means of `names`, batch by batch (a callback made by `callback()`)."""

    def __init__(self, names):
        self.names = names
        self.means = {name: [] for name in names}

    def callback(self):
        import keras

        recorder = self

        class _Record(keras.callbacks.Callback):
            def on_epoch_begin(self, epoch, logs=None):
                for name in recorder.names:
                    recorder.means[name].append([])

            def on_train_batch_end(self, batch, logs=None):
                for name in recorder.names:
                    recorder.means[name][-1].append(float(logs[name]))

        return _Record()


def train_and_evaluate(name, data, epochs, batch_size, seed, backbone, probe_epochs, verbose):
    import keras

    from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
    from keras_paperzoo.recipes import instdisc as recipe
    from keras_paperzoo.recipes.self_supervised import build_trainer, evaluate_encoder

    label, proximal, momentum, objective = RUNS[name]
    x_train, y_train, x_test, y_test = data
    pretraining = recipe.pretraining()
    model, mean, std = build_trainer(pretraining, pretraining.default_preset, x_train, batch_size, seed, CROP_SCALE,
                                     proximal=proximal, bank_momentum=momentum, loss=objective, **backbone)
    batches = EpochShuffledBatches(x_train, batch_size=batch_size, seed=seed, with_index=True)
    model.compile(batch_size=batch_size, steps_per_epoch=len(batches), epochs=epochs)
    steps = StepLosses((f"{objective}_loss", "loss"))
    start = time.perf_counter()
    model.fit(batches, epochs=epochs, shuffle=False, verbose=verbose,
              callbacks=[batches.epoch_callback(), EpochSeeds(seed), steps.callback(), keras.callbacks.TerminateOnNaN()])
    train_seconds = time.perf_counter() - start
    alone = per_step_values(steps.means[f"{objective}_loss"])  # the objective alone (eq. 6, or the softmax)
    total = per_step_values(steps.means["loss"])  # with the proximal term
    normalize = lambda x: ((x - mean) / std).astype("float32")  # noqa: E731
    encoder = evaluate_encoder(model.encoder, (normalize(x_train), y_train), (normalize(x_test), y_test),
                               probe_epochs, seed)
    return {
        "run": label, "proximal": proximal, "bank_momentum": momentum, "loss": objective,
        "objective_loss": oscillation(alone), "total_loss": oscillation(total),
        "objective_first_last_epoch": [round(float(np.mean(alone[:len(batches)])), 4),
                                       round(float(np.mean(alone[-len(batches):])), 4)],
        "memory_bank_knn_percent": round(100 * model.memory_bank_knn(y_train, x_test, y_test), 2),
        "knn_h_percent": round(100 * encoder["knn"], 2), "probe_h_percent": round(100 * encoder["probe"], 2),
        "objective_per_update": [round(float(v), 4) for v in alone],
        "steps": len(alone), "num_negatives": model.num_negatives,
        "z": None if model.z is None else float(keras.ops.convert_to_numpy(model.z)),
        "parameters_backbone": int(model.backbone.count_params()), "train_seconds": round(train_seconds, 1),
    }


# --- claims and the report ----------------------------------------------------------------------
def claims(runs, n):
    """Each run against its objective's lambda = 0, bank-replaced run: less oscillation, a better bank kNN."""
    from keras_paperzoo.evaluation.claims import accuracy_above

    out = {}
    for name, run in runs.items():
        base = BASELINE.get(RUNS.get(name, (None,) * 4)[3])
        if base is None or name == base or base not in runs:
            continue
        against = runs[base]["run"]
        out[f"{run['run']}: the loss oscillates less than {against}"] = less_oscillation(
            run["objective_loss"], runs[base]["objective_loss"])
        out[f"{run['run']}: memory-bank kNN above {against}"] = accuracy_above(
            run["memory_bank_knn_percent"], runs[base]["memory_bank_knn_percent"], n)
    return out


BUDGET_KEYS = ("backend", "dataset", "backbone", "train_images", "test_images", "epochs", "batch_size", "seed",
               "probe_epochs")


def records(path, budget):
    from keras_paperzoo.evaluation.run_records import RunRecords

    return RunRecords(path, budget, BUDGET_KEYS,
                      summarize=lambda runs: {"paper": PAPER, "claims": claims(runs, budget["test_images"])})


def _number(value):
    return "-" if value is None else f"{value:.4f}"


def report(output, dataset):
    output = pathlib.Path(output)
    metrics = common.read_metrics(output, "instdisc_proximal", dataset)
    budget, runs = metrics["budget"], metrics["runs"]
    minutes = common.wall_minutes(runs)
    first = next(iter(runs.values()))
    lines = [
        f"# InstDisc's proximal term (Fig. 3) on {dataset} at a CPU budget",
        "",
        f"{dataset} at 16 x 16, {budget['train_images']:,} training images, {budget['epochs']} epochs of "
        f"{budget['steps_per_epoch']} updates at batch {budget['batch_size']} ({first['steps']} updates) per run, "
        f"{budget['backbone']} backbone ({first['parameters_backbone']:,} parameters), m = {first['num_negatives']} "
        f"noise rows, tau = 0.07, the paper's SGD; the same seed, data order, views and noise draws in every run. "
        f"{budget['backend']} backend, 2-core CPU shared with other jobs (load averages in the metrics file); "
        f"{minutes:.0f} min in all.",
        "",
        f"Oscillation: sd of the update-to-update change of the per-update loss (the objective alone: the softmax "
        f"cross-entropy or NCE's eq. 6, without the proximal term) / sqrt(2), over the last "
        f"{first['objective_loss']['updates_measured']} updates (s.e. from {BLOCKS} blocks); MA dev.: mean |loss - "
        f"its {WINDOW}-update moving average|; with prox.: the same of the loss with the proximal term. kNN: "
        f"{budget['test_images']} test images.",
        "",
        "| run | oscillation | MA dev. | with prox. | loss, first -> last epoch "
        "| memory-bank kNN (%) | kNN h (%) | probe h (%) | min |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs.values():
        alone, total = run["objective_loss"], run["total_loss"]
        first_last = run["objective_first_last_epoch"]
        lines.append(
            f"| {run['run']} | {alone['oscillation']:.4f} +- {_number(alone['oscillation_se'])} | "
            f"{alone['moving_average_deviation']:.4f} | {total['oscillation']:.4f} | "
            f"{first_last[0]:.3f} -> {first_last[1]:.3f} | {run['memory_bank_knn_percent']:.1f} | "
            f"{run['knn_h_percent']:.1f} | {run['probe_h_percent']:.1f} | {run.get('wall_seconds', 0) / 60:.1f} |")
    lines += ["", "Published (not this budget or data):", "",
              f"- {PAPER['figure_3']}",
              f"- {PAPER['imagenet_resnet50_linear']}",
              f"- {PAPER['imagenet_resnet50_knn']}",
              f"- {PAPER['cifar10_resnet18_knn']}",
              "", "Claims (oscillation: the difference against 2 s.e. of the block estimates; kNN: against 2 "
              "binomial s.e.):", ""]
    lines += common.claim_lines(metrics["claims"])
    if metrics.get("notes"):
        lines += ["", "Notes:", ""] + [f"- {note}" for note in metrics["notes"]]
    text = "\n".join(lines) + "\n"
    return common.write_results(output, "instdisc_proximal", dataset, text)


def main(argv=None):
    parser = common.ArgumentParser(__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="digits", choices=sorted(DATASETS))
    parser.add_argument("--runs", default=",".join(RUNS), help=f"comma-separated, of {', '.join(RUNS)}")
    parser.add_argument("--train-images", type=int, default=0, help="a class-balanced subset (0: all)")
    parser.add_argument("--test-images", type=int, default=0, help="a class-balanced subset (0: all)")
    parser.add_argument("--epochs", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--backbone", default="resnet8", choices=("resnet8", "tiny"))
    parser.add_argument("--probe-epochs", type=int, default=100)
    common.add_rerun_flags(parser)
    args = parser.parse_args(argv)
    if args.report_only:
        return common.report_only(args, report, "instdisc_proximal")
    names = parse_runs(args.runs)
    common.require_dataset(args.dataset, "--dataset digits")
    common.select_backend(args.backend)
    import keras

    data = load_data(args.dataset, args.train_images, args.test_images, args.seed)
    batch_size = min(args.batch_size, len(data[0]))
    budget = {"backend": keras.backend.backend(), "dataset": args.dataset, "backbone": args.backbone,
              "train_images": int(len(data[0])), "test_images": int(len(data[2])), "epochs": args.epochs,
              "batch_size": batch_size, "steps_per_epoch": len(data[0]) // batch_size, "seed": args.seed,
              "probe_epochs": args.probe_epochs, "cpu_cores": os.cpu_count()}
    output = pathlib.Path(args.output_dir)
    output.mkdir(parents=True, exist_ok=True)
    backbone = BACKBONE if args.backbone == "resnet8" else TINY_BACKBONE

    def run(name):
        print(f"   {RUNS[name][0]}", flush=True)
        return train_and_evaluate(name, data, args.epochs, batch_size, args.seed, backbone, args.probe_epochs,
                                  args.verbose)

    return common.run_and_report(records(common.metrics_path(args, "instdisc_proximal"), budget), names, run, args,
                                 report, shown=lambda result: {k: v for k, v in result.items()
                                                               if k != "objective_per_update"})


def paper_vs_ours(metrics):
    """Each run's loss oscillation and memory-bank kNN, beside Fig. 3's verdict and the CIFAR-10 kNN."""
    rows = []
    for run in metrics["runs"].values():
        alone = run["objective_loss"]
        rows.append((f"{run['run']}: loss oscillation", "smoother with the proximal term (Fig. 3)",
                     f"{alone['oscillation']:.4f} +- {_number(alone['oscillation_se'])}"))
        rows.append((f"{run['run']}: memory-bank kNN (%)", f"{PAPER['cifar10_resnet18_knn_percent']} (CIFAR-10, "
                     "ResNet-18)", f"{run['memory_bank_knn_percent']:.1f} ({metrics['budget']['dataset']})"))
    return rows
