"""iGPT on MNIST at a CPU budget: layer-wise linear probes, autoregressive and BERT side by side (Chen et al. 2020, Fig. 3).

    paperzoo reproduce igpt --budget cpu                        # MNIST at 14 x 14
    paperzoo reproduce igpt --budget cpu --runs bert            # one run per process
    paperzoo reproduce igpt --budget cpu --report-only

The claim (Sec. 4.2, Fig. 3): a linear probe on the averaged layer-normed features
f^l = <layer_norm(h^l_i)>_i (Sec. 2.4, `IGPT.features`) is most accurate in the middle of
the network, not at the last layer, for the autoregressive and for the BERT objective:
the last layers specialise in predicting pixels. Three runs, one architecture:

1. "random init": the autoregressive model before training (the curve to beat);
2. "autoregressive": trained with next-pixel cross-entropy (causal mask), plus a picture of
   completions (the top half of test digits given, the bottom half sampled, `IGPT.complete`);
3. "bert": trained with the BERT objective (15 % of the pixels replaced by the mask token,
   the loss on those only, no causal mask).

For each, a logistic regression (scikit-learn, standardised features:
`recipes.igpt.probe_accuracies`) on f^l of every layer l = 0 .. L, test accuracy with two
binomial standard errors. The features of all layers come from one compiled pass
(`IGPT.layer_features`).

Scaled down for a CPU: MNIST resized to 14 x 14 (196 tokens; the paper: 32 x 32 = 1,024
over 512 colours, ours 16 grey levels by k-means, `ColorPalette`), a 4-layer x 64 decoder
(preset `igpt_mnist_tiny`'s width; the paper's iGPT-L is 48 x 1536), 2,000 training images,
2 epochs = 126 updates of batch 32 per objective (the paper: 1M at 128; sized by timing: 2 s
per update at load 8 on 2 shared cores, JAX), `IGPT.paper_optimizer` (Adam, warm-up over
5 % then cosine) at peak lr 3e-3 (the `igpt` recipe's; 3x the default 1e-3, for a short run), probes
tested on 1,000 images. With 4 layers the middle is layers 1-3 of 0-4; the paper's peak
is over 24-60 layers.

Runs are saved one by one into igpt_<dataset>_metrics.json; a rerun with the same budget
keeps those already there (`--fresh` retrains). Writes igpt_<dataset>_metrics.json,
igpt_<dataset>_results.md, igpt_<dataset>_probes.png (the probe curves) and
igpt_<dataset>_completions.png (each row: a test digit, then completions of its bottom half).
"""

import os
import pathlib
import time

import numpy as np

from keras_paperzoo.reproductions import common

PAPER = {"igpt_l_cifar10_linear_probe_percent": 96.3,
         "source": "Chen et al. 2020, Table 1 (iGPT-L, CIFAR-10, best layer's linear probe) and Fig. 3 "
                   "(the probe peaks in the middle layers, AR and BERT objectives)"}
PRESET = "igpt_mnist_tiny"
RUNS = ("random init", "autoregressive", "bert")
COLOURS = {"random init": (150, 150, 150), "autoregressive": (200, 60, 40), "bert": (40, 90, 200)}
DEFAULTS = {"mnist": {"image_size": 14, "train_images": 2000, "test_images": 1000},
            "digits": {"image_size": 8, "train_images": 0, "test_images": 0}}
BUDGET_KEYS = ("dataset", "image_size", "train_images", "test_images", "colors", "layers", "width", "epochs",
               "batch_size", "learning_rate", "seed")


def build_igpt(objective, budget, seed):
    import keras

    from keras_paperzoo.models.igpt import IGPT

    keras.utils.set_random_seed(seed)
    width = budget["width"]
    return IGPT.from_preset(PRESET, objective=objective, seed=seed, vocabulary_size=budget["colors"] + 1,
                            max_sequence_length=budget["image_size"] ** 2, num_layers=budget["layers"],
                            hidden_dim=width, intermediate_dim=4 * width, num_heads=max(1, width // 16))


def run_one(name, data, palette, budget, seed, output, dataset, verbose=2):
    from keras_paperzoo.callbacks import save_png
    from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
    from keras_paperzoo.recipes.igpt import completions_picture, probe_accuracies

    ids_train, y_train, ids_test, y_test = data
    igpt = build_igpt("bert" if name == "bert" else "autoregressive", budget, seed)
    result = {"parameters": int(igpt.count_params()), "objective": igpt.objective}
    if name != "random init":
        batches = EpochShuffledBatches(ids_train, batch_size=budget["batch_size"], seed=seed)
        total = len(batches) * budget["epochs"]
        igpt.compile(optimizer=igpt.paper_optimizer(total_steps=total, warmup_steps=max(1, total // 20),
                                                    peak_learning_rate=budget["learning_rate"]))
        start = time.perf_counter()
        history = igpt.fit(batches, epochs=budget["epochs"], verbose=verbose,
                           callbacks=[batches.epoch_callback(), EpochSeeds(seed)])
        result.update({"steps": total, "train_seconds": round(time.perf_counter() - start, 1),
                       "loss_per_epoch": [round(float(v), 4) for v in history.history["loss"]],
                       "test_loss_nats_per_pixel": round(float(igpt.evaluate(ids_test, batch_size=256, verbose=0)),
                                                         4)})
    start = time.perf_counter()
    probes = [round(100 * a, 2) for a in probe_accuracies(igpt, ids_train, y_train, ids_test, y_test,
                                                          batch_size=len(ids_train) + len(ids_test))]
    n = len(y_test)
    result.update({"probe_accuracy_percent_per_layer": probes,
                   "probe_two_standard_errors_points": [round(200 * float(np.sqrt(a / 100 * (1 - a / 100) / n)), 2)
                                                        for a in probes],
                   "best_layer": int(np.argmax(probes)), "probe_seconds": round(time.perf_counter() - start, 1)})
    if name == "autoregressive":
        picture = completions_picture(igpt, palette, ids_test[:8], (budget["image_size"],) * 2 + (1,),
                                      samples=budget["samples"])
        save_png(picture, pathlib.Path(output) / f"igpt_{dataset}_completions.png", scale=4)
    return result


def claims(runs, budget):
    from keras_paperzoo.evaluation.claims import accuracy_above

    n, out = budget["test_images"], {}
    for name, label in (("autoregressive", "AR"), ("bert", "BERT")):
        if name not in runs:
            continue
        probes = runs[name]["probe_accuracy_percent_per_layer"]
        last = len(probes) - 1
        middle = int(np.argmax(probes[1:last])) + 1  # Fig. 3's peak: neither the input embeddings nor the last layer
        out[f"{label}: the best middle layer above the last (layer {last})"] = \
            accuracy_above(probes[middle], probes[last], n)
        out[f"{label}: the best middle layer above layer 0 (the averaged input embeddings)"] = \
            accuracy_above(probes[middle], probes[0], n)
        if "random init" in runs:
            out[f"{label}: best layer above random init's best"] = accuracy_above(
                max(probes), max(runs["random init"]["probe_accuracy_percent_per_layer"]), n)
    return out


def records(path, budget):
    from keras_paperzoo.evaluation.run_records import RunRecords

    return RunRecords(path, budget, BUDGET_KEYS, kept=("notes",),
                      summarize=lambda runs: {"paper": PAPER, "claims": claims(runs, budget)})


def plot(runs, path):
    layers = max(len(r["probe_accuracy_percent_per_layer"]) for r in runs.values())
    curves = [(name, COLOURS.get(name, (0, 0, 0)), range(layers), run["probe_accuracy_percent_per_layer"], "dots")
              for name, run in runs.items()]
    return common.line_plot([("iGPT linear probe per layer (Fig. 3 in small)", curves)], path,
                            (-0.3, layers - 0.7), (0.0, 100.0), "layer", "test accuracy (%)", 640, 440,
                            range(layers))


def report(output, dataset):
    output = pathlib.Path(output)
    metrics = common.read_metrics(output, "igpt", dataset)
    b, runs = metrics["budget"], metrics["runs"]
    plot(runs, output / f"igpt_{dataset}_probes.png")
    name = {"mnist": "MNIST", "digits": "the scikit-learn digits"}.get(dataset, dataset)
    minutes = common.wall_minutes(runs)
    size = b["image_size"]
    lines = [
        f"iGPT ({b['layers']} layers x {b['width']}, {b['parameters']:,} parameters) on {name} at {size} x {size} "
        f"({size * size} tokens over a {b['colors']}-colour k-means palette): {b['train_images']:,} training images, "
        f"{b['epochs']} epochs of {b['steps_per_epoch']} updates of batch {b['batch_size']} per objective, peak lr "
        f"{b['learning_rate']:g}; probes tested on {b['test_images']:,} images; {b['backend']} backend, "
        f"{b['cpu_cores']} shared CPU cores (loaded by other jobs), {minutes:.1f} min in all.",
        "",
        "| run | " + " | ".join(f"layer {i}" for i in range(b["layers"] + 1)) + " | best | test loss (nats/pixel) |",
        "|---|" + "---|" * (b["layers"] + 3),
    ]
    for label, run in runs.items():
        cells = [f"{a:.2f} +- {s:.2f}" for a, s in zip(run["probe_accuracy_percent_per_layer"],
                                                       run["probe_two_standard_errors_points"])]
        loss = f"{run['test_loss_nats_per_pixel']:.3f}" if "test_loss_nats_per_pixel" in run else "-"
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {run['best_layer']} | {loss} |")
    lines += ["", "Probe test accuracy (%) +- 2 binomial standard errors; layer 0 is the averaged input "
              f"embeddings, layer {b['layers']} the final normalised states. Pictures: igpt_{dataset}_probes.png "
              f"(the curves), igpt_{dataset}_completions.png (rows: a test digit, then completions of its bottom "
              "half by the AR model).",
              "", f"Published reference (not this budget): {PAPER['source']}: "
              f"{PAPER['igpt_l_cifar10_linear_probe_percent']} % (48 layers, 1.4B parameters, 32 x 32 x 512 colours)."]
    text = "\n".join(lines) + "\n\nClaims (holds = difference larger than 2 standard errors over the test images):\n"
    text += common.claims_text(metrics["claims"]) + "\n"
    text += common.notes_text(metrics)
    return common.write_results(output, "igpt", dataset, text)


def main(argv=None):
    parser = common.ArgumentParser(__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="mnist", choices=("mnist", "digits"))
    parser.add_argument("--runs", default=",".join(RUNS), help=f"comma-separated among {', '.join(RUNS)}")
    parser.add_argument("--image-size", type=int, default=None, help="default: MNIST 14 (resized), digits 8")
    parser.add_argument("--train-images", type=int, default=None, help="seeded class-balanced subset (0: all)")
    parser.add_argument("--test-images", type=int, default=None)
    parser.add_argument("--colors", type=int, default=16, help="palette size (k-means over the pixel values)")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--width", type=int, default=64, help="d (heads: d / 16)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=3e-3)
    parser.add_argument("--samples", type=int, default=3, help="completions per test digit in the picture")
    common.add_rerun_flags(parser)
    args = parser.parse_args(argv)
    if args.report_only:
        return common.report_only(args, report, "igpt")
    for key, value in DEFAULTS[args.dataset].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.layers < 2:
        parser.error(f"--layers {args.layers}: at least 2 (Fig. 3 compares a middle layer with the last)")
    names = common.comma_list(args.runs, "--runs", RUNS)
    common.require_dataset(args.dataset)
    common.select_backend(args.backend)

    import keras

    from keras_paperzoo.models.igpt import ColorPalette

    x_train, y_train, x_test, y_test = common.load_images(args.dataset, args.train_images, args.test_images,
                                                          args.seed, args.image_size)
    distinct = np.unique(x_train.reshape(-1, x_train.shape[-1]), axis=0).shape[0]
    palette = ColorPalette.fit(x_train, num_colors=min(args.colors, distinct), seed=args.seed)  # Sec. 3's k-means
    data = (palette.encode(x_train), y_train, palette.encode(x_test), y_test)  # (N, H W) ids, raster order
    batch_size = min(args.batch_size, len(x_train))
    budget = {"backend": keras.backend.backend(), "dataset": args.dataset, "image_size": int(x_train.shape[1]),
              "train_images": int(len(x_train)), "test_images": int(len(x_test)), "colors": palette.num_colors,
              "layers": args.layers, "width": args.width, "epochs": args.epochs, "batch_size": batch_size,
              "steps_per_epoch": len(x_train) // batch_size, "learning_rate": args.learning_rate,
              "samples": args.samples, "seed": args.seed, "cpu_cores": os.cpu_count()}
    budget["parameters"] = int(build_igpt("autoregressive", budget, args.seed).count_params())
    output = pathlib.Path(args.output_dir)
    output.mkdir(parents=True, exist_ok=True)
    return common.run_and_report(
        records(common.metrics_path(args, "igpt"), budget), names,
        lambda name: run_one(name, data, palette, budget, args.seed, output, args.dataset, args.verbose), args, report)


def paper_vs_ours(metrics):
    """The best layer's probe of each run beside iGPT-L's CIFAR-10 figure."""
    rows = []
    for name, run in metrics["runs"].items():
        probes = run["probe_accuracy_percent_per_layer"]
        best = run["best_layer"]
        paper = (f"{PAPER['igpt_l_cifar10_linear_probe_percent']} (CIFAR-10, iGPT-L, a middle layer)"
                 if name == "autoregressive" else "a middle layer (Fig. 3)" if name == "bert" else "-")
        rows.append((f"{name}: best linear probe (%), layer {best} of {len(probes) - 1}", paper,
                     f"{probes[best]:.2f} +- {run['probe_two_standard_errors_points'][best]:.2f} "
                     f"(last layer {probes[-1]:.2f})"))
    return rows
