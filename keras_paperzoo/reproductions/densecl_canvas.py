"""DenseCL against MoCo v2 at the same budget on a dense task that fits a CPU: digits placed on a canvas.

    paperzoo reproduce densecl --budget cpu                   # the embedded digits, minutes
    paperzoo reproduce densecl --budget smoke                 # seconds
    paperzoo reproduce densecl --budget cpu --report-only     # redraw the table

The claim (Wang et al. 2021, abstract and Table 1): on dense prediction DenseCL beats
MoCo v2, the method it extends, at the same pre-training budget: +2.0 AP on VOC
detection (58.7 vs 57.0 after 200 ImageNet epochs), +3.0 mIoU on VOC segmentation
(COCO pre-training; +1.9 from ImageNet), at under 1 % more time per step.

Stand-in (VOC and COCO are out of reach offline): scenes of two digits pasted at random
on a canvas (`data/digit_canvas.py`); every location of the frozen backbone's map is
classified linearly, 10 digits or background (`evaluation/dense_probe.py`: cell
accuracy, accuracy on the digit cells, mean IoU over the 11 classes, the segmentation
measure). Per seed, DenseCL and MoCo v2 are pre-trained from the same initial backbone
(the seed), on the same canvases, with the same augmentation (MoCo v2's aug+, crops of
at least 30 % of the canvas, no blur), schedule and updates; the backbone at its random
initialisation is the third row. The claims compare the mIoU against 2 standard errors
of a paired bootstrap over the test canvases (all seeds' predictions pooled, 200
resamples), and DenseCL's step time against MoCo v2's.

Budget `cpu` (the defaults): the embedded digits (1,500 training, 297 test), 1,024
training and 256 test canvases of 24 x 24, the CIFAR ResNet-8 (6 x 6 x 64 map), both
trainers' CPU presets (`densecl_resnet8_cifar`, `moco_v2_resnet8_mnist`) with m = 0.99
and queues of 512, batch 64, 12 epochs (192 updates), one seed. Numbers: see
applications/results/ when run.
"""

import pathlib
import time

import numpy as np

from keras_paperzoo.reproductions import common

DATASETS = ("digits", "mnist")
DIGIT_SIDE = 8  # MNIST digits are resized to the embedded digits' 8 x 8
CROP_SCALE = (0.3, 1.0)
BACKBONES = {
    "resnet8": {"stage_blocks": [1, 1, 1]},
    "resnet20": {},
    "tiny": {"stage_blocks": [1, 1], "stage_filters": [8, 16], "stem_filters": 8},
}
METHODS = ("random init", "MoCo v2", "DenseCL")
PAPER = {
    "voc_detection": "VOC detection AP, ImageNet 200 epochs, R50: DenseCL 58.7 vs MoCo v2 57.0 (+2.0 AP in the "
                     "abstract); COCO detection +1.1 AP, COCO instance segmentation +0.9 AP",
    "voc_segmentation": "VOC segmentation mIoU: +3.0 over MoCo v2 (COCO pre-training, 67.5 vs 64.5); ImageNet "
                        "200 epochs 69.4 vs 67.5; Cityscapes +1.8",
    "cost": "under 1 % slower than MoCo v2",
}


def load_canvases(dataset, train_canvases, test_canvases, canvas, seed):
    """(x_train, masks_train, x_test, masks_test): grey canvases in [0, 1] and their pixel classes."""
    from keras_paperzoo.data.digit_canvas import digit_canvases

    if dataset == "digits":
        digits_train, labels_train, digits_test, labels_test = common.load_images("digits", 0, 0, seed)
    else:
        digits_train, labels_train, digits_test, labels_test = common.load_images(
            dataset, 0, 0, seed, image_size=DIGIT_SIDE, color_mode="grayscale")
    x_train, masks_train = digit_canvases(digits_train, labels_train, train_canvases, canvas, seed=seed)
    x_test, masks_test = digit_canvases(digits_test, labels_test, test_canvases, canvas, seed=seed + 10_000)
    return x_train, masks_train, x_test, masks_test


def run_seed(data, args, seed):
    """Random init, MoCo v2 and DenseCL from the same initial backbone: their dense probes and timings."""
    import keras

    from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds
    from keras_paperzoo.data.digit_canvas import BACKGROUND, cell_labels
    from keras_paperzoo.evaluation.dense_probe import dense_linear_probe
    from keras_paperzoo.models import DenseCL, MoCo

    x_train, masks_train, x_test, masks_test = data
    mean, std = x_train.mean(axis=(0, 1, 2)), x_train.std(axis=(0, 1, 2))
    normalize = lambda x: ((x - mean) / std).astype("float32")  # noqa: E731
    augmentation = {"crop_scale": CROP_SCALE, "blur_probability": 0.0, "mean": mean.tolist(), "std": std.tolist()}
    arguments = dict(image_shape=x_train.shape[1:], queue_size=args.queue_size, momentum=0.99,
                     projection_hidden_dim=64, augmentation=augmentation, seed=seed, **BACKBONES[args.backbone])
    steps = len(x_train) // args.batch_size

    def probe(backbone):
        grid = backbone.output_shape[1]
        train = (normalize(x_train), cell_labels(masks_train, grid))
        test = (normalize(x_test), cell_labels(masks_test, grid))
        return dense_linear_probe(backbone, train, test, num_classes=BACKGROUND + 1, epochs=args.probe_epochs,
                                  background=BACKGROUND, seed=seed)

    def pretrain(model):
        model.compile(batch_size=args.batch_size, steps_per_epoch=steps, epochs=args.epochs,
                      learning_rate=0.06 * args.batch_size / 256)
        times = []

        class _Time(keras.callbacks.Callback):  # per-epoch wall time, the first (compiling) one left out
            def on_epoch_begin(self, epoch, logs=None):
                self.start = time.perf_counter()

            def on_epoch_end(self, epoch, logs=None):
                times.append(time.perf_counter() - self.start)

        start = time.perf_counter()
        history = model.fit(x_train[: steps * args.batch_size], batch_size=args.batch_size, epochs=args.epochs,
                            shuffle=True, verbose=args.verbose, callbacks=[EpochSeeds(seed), _Time()]).history
        # (one epoch: its time includes compiling the step, so the comparison of costs is meaningless)
        step_seconds = float(np.median(times[1:] if len(times) > 1 else times)) / steps
        return history, time.perf_counter() - start, step_seconds

    results = {}
    keras.utils.set_random_seed(seed)
    densecl = DenseCL.from_preset("densecl_resnet8_cifar", **arguments)
    results["random init"] = {"probe": probe(densecl.backbone)}
    history, seconds, step = pretrain(densecl)
    results["DenseCL"] = {"probe": probe(densecl.backbone), "history": history, "train_seconds": seconds,
                          "step_seconds": step}
    keras.utils.set_random_seed(seed)
    moco = MoCo.from_preset("moco_v2_resnet8_mnist", **arguments)
    history, seconds, step = pretrain(moco)
    results["MoCo v2"] = {"probe": probe(moco.backbone), "history": history, "train_seconds": seconds,
                          "step_seconds": step}
    grid = densecl.backbone.output_shape[1]
    return results, cell_labels(masks_test, grid), int(densecl.backbone.count_params()), grid


def summarize(per_seed, labels, args):
    """Per-method means over seeds, and the claims on the pooled predictions."""
    from keras_paperzoo.data.digit_canvas import BACKGROUND
    from keras_paperzoo.evaluation.dense_probe import miou_above

    pooled = {m: np.concatenate([r[m]["probe"]["predictions"] for r in per_seed]) for m in METHODS}
    pooled_labels = np.concatenate([labels] * len(per_seed))
    classes = BACKGROUND + 1
    methods = {}
    for m in METHODS:
        probes = [r[m]["probe"] for r in per_seed]
        methods[m] = {key: round(100 * float(np.mean([p[key] for p in probes])), 2)
                      for key in ("accuracy", "foreground_accuracy", "miou")}
        methods[m]["miou_per_seed"] = [round(100 * p["miou"], 2) for p in probes]
        if m != "random init":
            last = [r[m]["history"] for r in per_seed]
            methods[m]["final_loss"] = round(float(np.mean([h["loss"][-1] for h in last])), 4)
            methods[m]["step_seconds"] = round(float(np.mean([r[m]["step_seconds"] for r in per_seed])), 4)
            methods[m]["train_seconds"] = round(float(np.sum([r[m]["train_seconds"] for r in per_seed])), 1)
    dense_history = [r["DenseCL"]["history"] for r in per_seed]
    methods["DenseCL"]["final_dense_loss"] = round(float(np.mean([h["dense_loss"][-1] for h in dense_history])), 4)
    methods["DenseCL"]["final_global_loss"] = round(float(np.mean([h["global_loss"][-1] for h in dense_history])), 4)
    overhead = methods["DenseCL"]["step_seconds"] / methods["MoCo v2"]["step_seconds"] - 1
    claims = {
        "DenseCL's dense-probe mIoU above MoCo v2's": miou_above(pooled["DenseCL"], pooled["MoCo v2"],
                                                                 pooled_labels, classes, args.seed),
        "DenseCL's mIoU above random init": miou_above(pooled["DenseCL"], pooled["random init"], pooled_labels,
                                                       classes, args.seed),
        "MoCo v2's mIoU above random init": miou_above(pooled["MoCo v2"], pooled["random init"], pooled_labels,
                                                       classes, args.seed),
        "DenseCL's step within 1 % of MoCo v2's time (the paper's cost)": {
            "holds": bool(overhead <= 0.01), "overhead_percent": round(100 * overhead, 1)},
    }
    return methods, claims


def report(output, dataset):
    output = pathlib.Path(output)
    metrics = common.read_metrics(output, "densecl", dataset)
    budget, methods = metrics["budget"], metrics["methods"]
    lines = [
        f"# DenseCL vs MoCo v2 on a dense task (two {'embedded' if dataset == 'digits' else dataset} digits on a canvas) "
        "at a CPU budget",
        "",
        f"{budget['train_canvases']:,} training and {budget['test_canvases']:,} test canvases of "
        f"{budget['canvas']} x {budget['canvas']} (two digits each), {budget['backbone']} backbone "
        f"({metrics['parameters_backbone']:,} parameters, {metrics['grid']} x {metrics['grid']} map), queues of "
        f"{budget['queue_size']}, m = 0.99, batch {budget['batch_size']}, {budget['epochs']} epochs, "
        f"{len(budget['seeds'])} seed(s) {budget['seeds']}; dense linear probe of {budget['probe_epochs']} epochs; "
        f"{budget['backend']} backend, {budget.get('device', 'CPU')}.",
        "",
        "| backbone | cell accuracy (%) | digit-cell accuracy (%) | mIoU (%) | mIoU per seed | final loss | s / step |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in METHODS:
        m = methods[name]
        lines.append(f"| {name} | {m['accuracy']:.1f} | {m['foreground_accuracy']:.1f} | {m['miou']:.1f} | "
                     f"{', '.join(f'{v:.1f}' for v in m['miou_per_seed'])} | {m.get('final_loss', '-')} | "
                     f"{m.get('step_seconds', '-')} |")
    lines += [
        "",
        f"DenseCL's final global / dense loss: {methods['DenseCL']['final_global_loss']} / "
        f"{methods['DenseCL']['final_dense_loss']} (chance log(1 + K) = {np.log(1 + budget['queue_size']):.2f}).",
        "",
        "Published (ResNet-50, ImageNet / COCO pre-training, fine-tuned detectors and segmenters; not this budget):",
        "",
        *[f"- {text}" for text in PAPER.values()],
        "",
        "Claims (mIoU: the difference against 2 s.e. of a paired bootstrap over the test canvases):",
        "",
        *common.claim_lines(metrics["claims"]),
        "",
        "The step times are wall-clock seconds of the `fit` epochs after the first, on the machine above: on a "
        "shared CPU they carry its load, and the dense head's 1 x 1 convolutions and the (HW x HW) correspondence "
        "weigh more beside a ResNet-8 than beside a ResNet-50. The cost claim is the paper's on GPUs; "
        "`python -m benchmarks ssl --models densecl` times the step against MoCo v2's reference alone.",
    ]
    text = "\n".join(lines) + "\n"
    return common.write_results(output, "densecl", dataset, text)


def main(argv=None):
    parser = common.ArgumentParser(__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="digits", choices=sorted(DATASETS))
    parser.add_argument("--canvas", type=int, default=24, help="the canvas side (a multiple of the map's stride)")
    parser.add_argument("--train-canvases", type=int, default=1024)
    parser.add_argument("--test-canvases", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--queue-size", type=int, default=512, help="K of each queue (a multiple of the batch)")
    parser.add_argument("--probe-epochs", type=int, default=30)
    parser.add_argument("--seeds", type=int, default=1, help="runs from seeds seed, seed + 1, ...")
    parser.add_argument("--backbone", default="resnet8", choices=sorted(BACKBONES))
    parser.add_argument("--report-only", action="store_true", help="rewrite the table from the metrics JSON")
    args = parser.parse_args(argv)
    if args.report_only:
        return common.report_only(args, report, "densecl")
    if args.dataset != "digits":
        common.require_dataset(args.dataset, "--dataset digits")
    if args.train_canvases < args.batch_size or args.queue_size % args.batch_size:
        raise common.UsageError(f"--queue-size {args.queue_size} must be a multiple of --batch-size "
                                f"{args.batch_size}, which must be at most --train-canvases {args.train_canvases}")
    common.select_backend(args.backend)
    import keras

    data = load_canvases(args.dataset, args.train_canvases, args.test_canvases, args.canvas, args.seed)
    seeds = [args.seed + i for i in range(args.seeds)]
    start = time.perf_counter()
    per_seed = []
    for seed in seeds:
        results, labels, parameters, grid = run_seed(data, args, seed)
        per_seed.append(results)
    methods, claims = summarize(per_seed, labels, args)
    budget = {"backend": keras.backend.backend(), "dataset": args.dataset, "canvas": args.canvas,
              "train_canvases": int(len(data[0])), "test_canvases": int(len(data[2])), "backbone": args.backbone,
              "epochs": args.epochs, "batch_size": args.batch_size, "queue_size": args.queue_size,
              "probe_epochs": args.probe_epochs, "seeds": seeds, "device": common.device_description()}
    metrics = {"budget": budget, "paper": PAPER, "methods": methods, "claims": claims,
               "parameters_backbone": parameters, "grid": grid,
               "wall_seconds": round(time.perf_counter() - start, 1)}
    return common.save_and_report(args, "densecl", metrics, report)


def paper_vs_ours(metrics):
    """DenseCL minus MoCo v2 on the dense probe, beside the paper's detection and segmentation gains."""
    methods, dataset = metrics["methods"], metrics["budget"]["dataset"]
    gain = methods["DenseCL"]["miou"] - methods["MoCo v2"]["miou"]
    overhead = metrics["claims"]["DenseCL's step within 1 % of MoCo v2's time (the paper's cost)"]["overhead_percent"]
    return [
        ("DenseCL - MoCo v2, detection / segmentation", "+2.0 AP VOC detection; +3.0 mIoU VOC segmentation",
         f"{gain:+.1f} mIoU, dense linear probe ({dataset} canvases)"),
        ("mIoU: random init / MoCo v2 / DenseCL (%)", "VOC seg 67.5 (MoCo v2) / 69.4 (DenseCL), ImageNet 200 ep",
         " / ".join(f"{methods[m]['miou']:.1f}" for m in METHODS)),
        ("extra time per step over MoCo v2", "< 1 %", f"{overhead:+.1f} %"),
    ]
