"""ResNet on CIFAR-10: He et al. 2016, Sec. 4.2, Table 6 and Figure 6 (plain vs residual).

    paperzoo reproduce resnet --budget cpu          # the CPU budget below (--budget smoke: seconds on digits)
    paperzoo reproduce resnet --budget paper        # the paper's 64k steps: --epochs 164 --steps-per-epoch 0 --warmup-steps 0

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

Writes into --output-dir (the committed run: applications/results/): resnet_cifar_metrics.json,
resnet_cifar_results.md (the table) and resnet_cifar_training_error.png (training error
per epoch, plain nets left and residual nets right, like Fig. 6; the final test error
as a hollow marker).
"""

import json
import pathlib

from keras_paperzoo.reproductions import common

NETS = ("plain20_cifar", "plain56_cifar", "resnet20_cifar", "resnet56_cifar")
PAPER_TEST_ERROR = {"resnet20_cifar": 8.75, "resnet56_cifar": 6.97}  # Table 6, %
PAPER = "He et al. 2016, Table 6 (64k steps of batch 128, 45k training images, 10k test)"
LABELS = common.NET_LABELS


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
            out[f"resnet{depth}_test_error_below_plain{depth}"] = common.error_below(residual, plain, *test)
            out[f"resnet{depth}_train_error_below_plain{depth}"] = common.error_below(residual, plain, *train)
    if "plain20_cifar" in nets and "plain56_cifar" in nets:  # degradation (Fig. 6 left)
        out["plain56_train_error_above_plain20"] = common.error_below(nets["plain20_cifar"], nets["plain56_cifar"], *train)
    if "resnet20_cifar" in nets and "resnet56_cifar" in nets:  # no degradation with shortcuts (Fig. 6 middle)
        out["resnet56_train_error_below_resnet20"] = common.error_below(nets["resnet56_cifar"], nets["resnet20_cifar"], *train)
    return out


def table(nets, budget):
    minutes = sum(common.wall_seconds(run) for run in nets.values()) / 60
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
    common.plot_training_error([p for p in panels if p[1]], output / "resnet_cifar_training_error.png", budget["epochs"])
    text = (table(nets, budget) + "\n\nClaims (holds = difference larger than 2 standard errors):\n"
            + common.claims_text(metrics["claims"]))
    if metrics.get("notes"):  # observations added by hand to the metrics file
        text += "\n\nNotes:\n" + "\n".join(f"- {note}" for note in metrics["notes"])
    (output / "resnet_cifar_results.md").write_text(text + "\n")
    return text


def main(argv=None):
    parser = common.cifar_arguments(__doc__.splitlines()[0], train_images=0, epochs=6)
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
        return json.loads((output / "resnet_cifar_metrics.json").read_text())
    names = [n for n in args.nets.split(",") if n]
    if not names or any(not (n.startswith(("plain", "resnet")) and n.endswith("_cifar")) for n in names):
        parser.error(f"--nets {args.nets!r}: expected CIFAR presets such as {', '.join(NETS)}")
    common.require_dataset(args.dataset)
    common.select_backend(args.backend)

    import keras

    from keras_paperzoo.evaluation.run_records import timed
    from keras_paperzoo.models import ResNetBackbone

    data = common.load_cifar(args.dataset, args.train_images, args.test_images, args.seed)
    batches = -(-len(data[0]) // min(args.batch_size, len(data[0])))
    steps_per_epoch = min(args.steps_per_epoch, batches) if args.steps_per_epoch > 0 else batches
    if args.warmup_steps and not 0 < args.warmup_steps < steps_per_epoch * args.epochs // 2:
        parser.error(f"--warmup-steps {args.warmup_steps}: should end before the first lr drop, at update "
                     f"{steps_per_epoch * args.epochs // 2} of {steps_per_epoch * args.epochs}")
    budget = common.budget_record(args, data, steps_per_epoch=steps_per_epoch, warmup_steps=args.warmup_steps)
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
        nets[name] = timed(common.train_and_test, backbone, data, args.epochs, args.batch_size, args.seed,
                           args.verbose, steps_per_epoch=steps_per_epoch, warmup_steps=args.warmup_steps)
        print(f"   {name}: {json.dumps(nets[name])}", flush=True)
        # Saved after every net, so a long run that stops keeps what it finished.
        metrics = {"paper": PAPER, "paper_test_error_percent": PAPER_TEST_ERROR, "budget": budget,
                   "nets": nets, "claims": claims(nets, budget)}
        common.write_json(metrics_file, metrics)
    print()
    print(report(output))
    return json.loads(metrics_file.read_text())


def paper_vs_ours(metrics):
    """Test error per net (Table 6) and the claims' verdicts."""
    rows = [(f"{LABELS.get(name, name)} test error (%)",
             f"{PAPER_TEST_ERROR[name]:.2f}" if name in PAPER_TEST_ERROR else "Fig. 6 only",
             f"{run['test_error_percent']:.2f} (training {run['final_train_error_percent']:.2f})")
            for name, run in metrics["nets"].items()]
    b = metrics["budget"]
    rows.append(("updates of batch 128", "64,000", f"{b['steps_per_epoch'] * b['epochs']:,} of batch {b['batch_size']} "
                 f"on {b['train_images']:,} {b['dataset']} images"))
    return rows
