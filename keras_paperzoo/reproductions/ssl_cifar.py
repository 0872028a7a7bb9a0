"""SimCLR, BYOL and MoCo v2 at one CPU budget: BYOL's collapse ablations, SimCLR's h against z and temperature.

    paperzoo reproduce simclr --budget cpu           # SimCLR's runs (byol, cpc, cmc, invaspread: theirs)
    paperzoo reproduce byol --budget cpu --dataset cifar10 # the same on CIFAR-10
    paperzoo reproduce simclr --budget cpu --runs simclr,byol,moco   # any of RUNS, into one table
    paperzoo reproduce simclr --budget cpu --report-only   # redraw the table

`paperzoo reproduce simclr | byol | invaspread | cpc | cmc` each run that paper's runs
(below); runs of several papers with the same budget and --output-dir share one
metrics file and one table.

What is checked, every trained encoder beside the same encoder at its random
initialisation, every difference against two binomial standard errors over the
test images (`keras_paperzoo.evaluation.claims`):

(a) BYOL (Grill et al. 2020, Table 5): with the predictor and a slowly moving
    target the representation learns (kNN above random init); without the
    predictor (`prediction_dims=None`), or with tau = 0 (the target a copy of the
    online network at every step), it collapses: `output_std`, the spread across
    the batch of the normalised projections (about 1 / sqrt(d) when spread), falls
    toward 0 and the kNN accuracy falls to the random-init level or below.
(b) SimCLR (Chen et al. 2020, Sec. 4.2, Fig. 8; Table 5 / B.9): the representation
    before the head, h, probes better than z = g(h) after it; the temperature
    matters (a sweep over 0.1, 0.5, 1.0).
(c) SimCLR (t = 0.5), BYOL and MoCo v2 against each other at the same budget.
(d) The methods before MoCo (InstDisc, InvaSpread, CMC, CPC v1) at the same
    budget, each above its own random initialisation; for CPC also the bound
    log N - L on the mutual information rising (van den Oord et al. 2018, Sec. 2.3).
(e) SwAV (Caron et al. 2020, Sec. 4 / the authors' README: 75.3 % with 2 x 224 +
    6 x 96 crops, 70.1 % with 2 x 224): with multi-crop (2 x 16 + 6 x 7 pixels at
    16 x 16) above 2 crops at the same number of updates; with eps = 10 the
    Sinkhorn codes are nearly uniform and the run collapses as the authors
    describe: the loss stays at ln K (`loss_over_ln_k` >= 0.95) and the kNN
    accuracy is not above the random-init level.

The methods are the package's trainers with the `simclr`, `byol` and `moco`
recipes' choices (`keras_paperzoo.recipes.*.pretraining()`: presets
`simclr_resnet20_cifar`, `byol_resnet20_cifar`, `moco_v2_resnet20_cifar`, each
paper's optimizer from `compile()`: LARS 0.3 x B / 256 for SimCLR, LARS 0.2 x B / 256
for BYOL, MoCo's SGD at 0.06 x B / 256 with its queue cut to the data), with one
change of backbone for the budget: the CIFAR ResNet-8 (one residual block per
stage, 16-32-64 filters, 75,120 parameters) instead of ResNet-20, the same for all
three, initialised from the same seed (the random-init row is that encoder).
Views are normalised by the training subset's per-channel statistics; on MNIST
(grey, fed as three equal channels) crops keep at least half the image, as the
recipes do for digits.

Budget (the defaults, chosen by timing a few steps first: ResNet-8 at 16 x 16, batch
128, took about 2 s per BYOL update on 2 CPU cores shared with other jobs at a load
average of 8-10, the tiny backbone 1 s): MNIST downsampled to 16 x 16, a seeded
class-balanced subset of 4,000 training images, 2 epochs of 62 steps of 64 = 124
updates per method, kNN (k = 200) and linear probe (MoCo's protocol, 100 epochs on
features computed once) on 2,000 class-balanced test images with the training subset
as the labelled bank; the random-init evaluation and 7 trainings. Run once
(2026-11-25, TensorFlow, load average 8.5-11): 0.3-0.6 s per update, 30 min in all
(20 of training, 9.5 of evaluation; planned: 20). The measured times and load
averages are in the metrics file. Results: applications/results/ssl_mnist_results.md.

Published references (CIFAR-10, not this budget): lightly's benchmark, ResNet-18,
200 epochs at batch 512 (about 19,500 updates): kNN SimCLR 84.8 %, BYOL 86.8 %,
MoCo 84.7 %; SimCLR's CIFAR-10 linear evaluation about 91 % after 1000 epochs
(Chen et al. 2020, Appendix B.9).

Runs are saved one by one into ssl_<dataset>_metrics.json; a rerun with the same
budget keeps the runs already there (`--fresh` retrains). Writes
ssl_<dataset>_metrics.json and ssl_<dataset>_results.md into --output-dir (the
committed run: applications/results/).
"""

import os
import pathlib
import time

import numpy as np

from keras_paperzoo.reproductions import common

IMAGE_SIZE = {"mnist": 16, "digits": 16, "cifar10": None}
DATASETS = tuple(IMAGE_SIZE)
BACKBONES = {  # overrides of the presets' CIFAR ResNet-20
    "resnet20": {},  # the presets' own CIFAR ResNet-20, 0.27M parameters
    "resnet8": {"stage_blocks": [1, 1, 1]},  # CIFAR ResNet-8: 16-32-64 filters, 78k parameters
    "tiny": {"stage_blocks": [1, 1], "stage_filters": [8, 16], "stem_filters": 8},  # the *_tiny presets', 5k
}
RANDOM_INIT = "random init"
# name: (recipe, trainer overrides, label)
RUNS = {
    "simclr": ("simclr", {"temperature": 0.5}, "SimCLR, t = 0.5"),
    "simclr_t0.1": ("simclr", {"temperature": 0.1}, "SimCLR, t = 0.1"),
    "simclr_t1": ("simclr", {"temperature": 1.0}, "SimCLR, t = 1.0"),
    "byol": ("byol", {}, "BYOL"),
    "byol_no_predictor": ("byol", {"prediction_dims": None}, "BYOL, no predictor"),
    "byol_tau0": ("byol", {"tau_base": 0.0, "momentum_schedule": "constant"}, "BYOL, tau = 0"),
    "moco": ("moco", {}, "MoCo v2"),
    "instdisc": ("instdisc", {}, "InstDisc"),  # the recipe's default: the softmax over the 1 + m rows
    "instdisc_nce": ("instdisc", {"loss": "nce"}, "InstDisc, NCE (the paper's objective)"),
    "invaspread": ("invaspread", {}, "InvaSpread"),
    "cmc": ("cmc", {}, "CMC"),
    "cpc": ("cpc", {}, "CPC v1"),  # the recipe's cpc_v1_small: a 7 x 7 grid of 4-px patches at 16 px
    "swav": ("swav", {}, "SwAV, 2 + 6 crops"),  # multi-crop: 2 x 16 + 6 x 7 pixels
    "swav_2crops": ("swav", {"crop_counts": [2]}, "SwAV, 2 crops"),
    "swav_eps10": ("swav", {"crop_counts": [2], "epsilon": 10.0}, "SwAV, eps = 10 (near-uniform codes)"),
}
# Methods whose encoder is not the shared one (CMC: two half-width encoders, L and ab): their own untrained
# encoder is the reference of their "above random init" claim.
OWN_RANDOM_INIT = {"cmc": "random init (CMC's encoders)", "cpc": "random init (CPC's patch encoder)"}
# Methods whose encoder is not a ResNet of `BACKBONES` (CPC's pre-activation patch ResNet): their preset's own.
OWN_BACKBONE = ("cpc",)
ABLATIONS = ("byol_no_predictor", "byol_tau0")
TEMPERATURES = ("simclr_t0.1", "simclr", "simclr_t1")
COMPARED = ("simclr", "byol", "moco")
# where the negatives come from: a bank, the batch, two banks, other patches and images
BEFORE_MOCO = ("instdisc", "instdisc_nce", "invaspread", "cmc", "cpc")
COLLAPSED = 0.2  # output_std below this fraction of 1 / sqrt(d) counts as collapsed
SWAV_RUNS = ("swav", "swav_2crops", "swav_eps10")
SWAV_AT_LN_K = 0.95  # SwAV's loss / ln K at or above this: "stuck at ln K", the collapse the authors document
PAPER = {
    "lightly_cifar10_knn_percent": {"SimCLR": 84.8, "BYOL": 86.8, "MoCo": 84.7},
    "lightly_cifar10": "lightly's CIFAR-10 benchmark: ResNet-18, 200 epochs of 50,000 images at batch 512, kNN",
    "simclr_cifar10_linear_percent": 91.0,
    "simclr_cifar10": "Chen et al. 2020, App. B.9: ResNet-50, CIFAR-10, 1000 epochs, linear evaluation ~91 %",
    "byol_ablations": "Grill et al. 2020, Table 5: without the predictor, or with tau = 0, the representation "
                      "collapses (linear accuracy near chance)",
    "simclr_h_vs_z": "Chen et al. 2020, Sec. 4.2 / Fig. 8: h (before the head) is better than z = g(h) by > 10 %",
    "instdisc_cifar10_knn_percent": 80.8,
    "instdisc_cifar10": "Wu et al. 2018, Table 1: ResNet-18, CIFAR-10, weighted kNN of the 128-d features, 80.8 %",
    "invaspread_cifar10_knn_percent": 83.6,
    "invaspread_cifar10": "Ye et al. 2019, Table 1: ResNet-18, CIFAR-10, kNN of the 128-d embedding, 83.6 %",
    "instdisc_imagenet": "Wu et al. 2018, ImageNet ResNet-50: linear 54.0 % (conv5); kNN about 46.5 % (the notes' "
                         "figure, not checked against the paper)",
    "cpc": "van den Oord et al. 2018, Sec. 3.2: ImageNet linear top-1 48.7 % (CPC v1); lightning-bolts' CPC v2, "
           "CIFAR-10: 84.52 % (linear); no kNN published",
    "swav_imagenet_linear_percent": {"2 x 224 + 6 x 96": 75.3, "2 x 224": 70.1},
    "swav_imagenet": "Caron et al. 2020 / the authors' README: ResNet-50 linear, 75.3 % with multi-crop (800 epochs, "
                     "batch 4096), 70.1 % with 2 x 224 crops only (400 epochs); a loss stuck at ln K is collapse",
    "swav_lightly_cifar10_knn_percent": 84.2,
}


def parse_runs(text):
    return common.comma_list(text, "--runs", tuple(RUNS))


def load_data(dataset, train_images, test_images, seed):
    """(x_train, y_train, x_test, y_test) in [0, 1], RGB, class-balanced seeded subsets."""
    return common.load_images(dataset, train_images, test_images, seed, IMAGE_SIZE[dataset], "rgb")


def build(name, dataset, data, batch_size, seed, backbone="resnet8"):
    """The run's trainer (ResNet-8, the recipe's settings and the run's overrides) and its recipe."""
    from keras_paperzoo import recipes
    from keras_paperzoo.recipes.self_supervised import DIGITS_CROP_SCALE, build_trainer

    recipe, overrides, _ = RUNS[name]
    pretraining = recipes.RECIPES[recipe].load().pretraining()
    crop_scale = None if dataset == "cifar10" else DIGITS_CROP_SCALE
    networks = {} if recipe in OWN_BACKBONE else BACKBONES[backbone]
    trainer, mean, std = build_trainer(pretraining, pretraining.default_preset, data[0], batch_size, seed,
                                       crop_scale, **networks, **overrides)
    return trainer, pretraining, lambda x: ((x - mean) / std).astype("float32")


def evaluate(model, normalize, data, probe_epochs, seed, head=False):
    """kNN and linear-probe accuracy (%) of h (the encoder) and, with `head`, of z = g(h) (SimCLR)."""
    from keras_paperzoo.recipes.self_supervised import evaluate_encoder

    x_train, y_train, x_test, y_test = data
    train, test = (normalize(x_train), y_train), (normalize(x_test), y_test)
    start = time.perf_counter()
    networks = {"h": model.encoder, **({"z": model.projector} if head else {})}
    result = {}
    for key, network in networks.items():
        accuracy = evaluate_encoder(network, train, test, probe_epochs, seed)
        result[f"knn_{key}_percent"] = round(100 * accuracy["knn"], 2)
        result[f"probe_{key}_percent"] = round(100 * accuracy["probe"], 2)
    result["evaluation_seconds"] = round(time.perf_counter() - start, 1)
    return result


def initial_checksum(model):
    """Sum of |w| over the backbone's weights: equal for runs that start from the same encoder."""
    return round(float(sum(np.abs(np.asarray(w)).sum() for w in model.backbone.get_weights())), 3)


def train_and_evaluate(name, dataset, data, epochs, batch_size, probe_epochs, seed, backbone="resnet8", verbose=2):
    import keras

    from keras_paperzoo.callbacks import KNNMonitor
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches

    model, pretraining, normalize = build(name, dataset, data, batch_size, seed, backbone)
    checksum = initial_checksum(model)
    x_train, y_train, x_test, y_test = data
    # InstDisc's and CMC's batches carry each image's index (its memory-bank row)
    batches = EpochShuffledBatches(x_train, batch_size=batch_size, seed=seed, with_index=pretraining.indexed)
    model.compile(batch_size=batch_size, steps_per_epoch=len(batches), epochs=epochs,
                  **pretraining.compile_arguments(batch_size))
    monitor = KNNMonitor((normalize(x_train), y_train), (normalize(x_test), y_test), k=min(200, len(x_train)))
    start = time.perf_counter()
    history = model.fit(batches, epochs=epochs, verbose=verbose,
                        callbacks=[batches.epoch_callback(), monitor, keras.callbacks.TerminateOnNaN()])
    train_seconds = time.perf_counter() - start
    result = evaluate(model, normalize, data, probe_epochs, seed, head=RUNS[name][0] == "simclr")
    per_epoch = {key: [round(float(v), 4) for v in values] for key, values in history.history.items()
                 if key != "knn_acc"}
    result.update({
        "run": RUNS[name][2],
        "recipe": RUNS[name][0],
        "overrides": {k: v for k, v in RUNS[name][1].items()},
        **{f"{key}_per_epoch": values for key, values in per_epoch.items()},
        "knn_accuracy_percent_per_epoch": [round(100 * a, 2) for _, a in monitor.history],
        "steps": len(batches) * epochs,
        "parameters_backbone": int(model.backbone.count_params()),
        "initial_backbone_checksum": checksum,
        "train_seconds_with_knn_monitor": round(train_seconds, 1),
    })
    if RUNS[name][0] == "byol":
        result["spread_if_uniform"] = round(float(model.projection_dims[-1]) ** -0.5, 4)  # 1 / sqrt(d)
    return result


def random_init(dataset, data, batch_size, probe_epochs, seed, backbone="resnet8", method="simclr"):
    """The encoder every run starts from (and SimCLR's head at its initialisation), untrained; with
    `method`, that method's own encoder (`OWN_RANDOM_INIT`)."""
    model, _, normalize = build(method, dataset, data, batch_size, seed, backbone)
    result = evaluate(model, normalize, data, probe_epochs, seed, head=method == "simclr")
    result.update({"run": OWN_RANDOM_INIT.get(method, RANDOM_INIT),
                   "parameters_backbone": int(model.encoder.count_params()),
                   "initial_backbone_checksum": initial_checksum(model)})
    return result


# --- claims ---------------------------------------------------------------------------------
def claims(runs, n):
    """The papers' claims checked on our numbers (for the runs that exist), with their margins."""
    from keras_paperzoo.evaluation.claims import accuracy_above

    out = {}
    label = {name: run.get("run", name) for name, run in runs.items()}
    references = {RANDOM_INIT, *OWN_RANDOM_INIT.values()}
    for name, run in runs.items():
        reference = OWN_RANDOM_INIT.get(name, RANDOM_INIT)
        if name not in references and reference in runs:
            out[f"{label[name]}: kNN above {reference}"] = accuracy_above(
                run["knn_h_percent"], runs[reference]["knn_h_percent"], n)
    # (a) BYOL's ablations collapse
    for name in ABLATIONS:
        if name not in runs:
            continue
        spread, uniform = runs[name]["output_std_per_epoch"], runs[name]["spread_if_uniform"]
        out[f"{label[name]}: output_std falls toward 0 (below {COLLAPSED} / sqrt(d))"] = {
            "holds": bool(spread[-1] < COLLAPSED * uniform), "first_epoch": spread[0], "last_epoch": spread[-1],
            "threshold": round(COLLAPSED * uniform, 4)}
        if "byol" in runs:
            out[f"BYOL: kNN above {label[name]}"] = accuracy_above(
                runs["byol"]["knn_h_percent"], runs[name]["knn_h_percent"], n)
        if RANDOM_INIT in runs:  # "falls to random-init level": not above it
            knn = accuracy_above(runs[name]["knn_h_percent"], runs[RANDOM_INIT]["knn_h_percent"], n)
            out[f"{label[name]}: kNN at or below random init"] = {**knn, "holds": not knn["holds"]}
    # (b) SimCLR: h probes better than z; the temperature matters
    for name in TEMPERATURES:
        if name in runs and "knn_z_percent" in runs[name]:
            for key, what in (("knn", "kNN"), ("probe", "linear probe")):
                out[f"{label[name]}: {what} on h above z"] = accuracy_above(
                    runs[name][f"{key}_h_percent"], runs[name][f"{key}_z_percent"], n)
    # Each lower temperature against each higher one, in a fixed order (Table 5: t = 0.1 best, with l2-normalised
    # z): the same claim at every seed, so that `--seeds` can pool it; not the best run against the worst.
    swept = [name for name in TEMPERATURES if name in runs]  # TEMPERATURES rise: 0.1, 0.5, 1.0
    for i, lower in enumerate(swept):
        for higher in swept[i + 1:]:
            out[f"temperature: {label[lower]} kNN above {label[higher]}"] = accuracy_above(
                runs[lower]["knn_h_percent"], runs[higher]["knn_h_percent"], n)
    # CPC (van den Oord et al. 2018, Sec. 2.3): the bound log N - L on the mutual information rises in training
    for name, run in runs.items():
        bound = run.get("mi_bound_per_epoch")
        if bound and len(bound) >= 2:
            out[f"{label[name]}: the bound log N - L rises"] = {
                "holds": bool(bound[-1] > bound[0]), "first_epoch": bound[0], "last_epoch": bound[-1]}
    # (e) SwAV: multi-crop is where the gain comes from; with near-uniform codes the loss stays at ln K
    if "swav" in runs and "swav_2crops" in runs:
        out["SwAV: kNN with multi-crop above 2 crops"] = accuracy_above(
            runs["swav"]["knn_h_percent"], runs["swav_2crops"]["knn_h_percent"], n)
    if "swav_eps10" in runs:
        ratio = runs["swav_eps10"]["loss_over_ln_k_per_epoch"]
        out[f"{label['swav_eps10']}: loss stuck at ln K (loss / ln K >= {SWAV_AT_LN_K})"] = {
            "holds": bool(ratio[-1] >= SWAV_AT_LN_K), "first_epoch": ratio[0], "last_epoch": ratio[-1]}
        if RANDOM_INIT in runs:
            knn = accuracy_above(runs["swav_eps10"]["knn_h_percent"], runs[RANDOM_INIT]["knn_h_percent"], n)
            out[f"{label['swav_eps10']}: kNN at or below random init"] = {**knn, "holds": not knn["holds"]}
    # (c) the three methods at one budget, each pair in our order; (d) the same for the methods before MoCo
    for group in (COMPARED, BEFORE_MOCO):
        compared = sorted((name for name in group if name in runs), key=lambda name: -runs[name]["knn_h_percent"])
        for i, better in enumerate(compared):
            for worse in compared[i + 1:]:
                out[f"{label[better]} kNN above {label[worse]}"] = accuracy_above(
                    runs[better]["knn_h_percent"], runs[worse]["knn_h_percent"], n)
    return out


# --- files ----------------------------------------------------------------------------------
BUDGET_KEYS = ("backend", "dataset", "backbone", "train_images", "test_images", "epochs", "batch_size", "seed",
               "probe_epochs", "image_size")


def records(path, budget):
    from keras_paperzoo.evaluation.run_records import RunRecords

    return RunRecords(path, budget, BUDGET_KEYS,
                      summarize=lambda runs: {"paper": PAPER, "claims": claims(runs, budget["test_images"])})


def _cell(run, key):
    return f"{run[key]:.1f}" if key in run else "-"


def report(output, dataset):
    output = pathlib.Path(output)
    metrics = common.read_metrics(output, "ssl", dataset)
    budget, runs = metrics["budget"], metrics["runs"]
    name = {"cifar10": "CIFAR-10", "mnist": "MNIST"}.get(dataset, dataset)
    minutes = common.wall_minutes(runs)
    size = f"{budget['image_size']} x {budget['image_size']}" if budget.get("image_size") else "full-size"
    lines = [
        f"# Self-supervised methods (SimCLR, BYOL, MoCo v2; InstDisc, InvaSpread, CMC, CPC) on {name} at a CPU budget",
        "",
        f"{name} ({size}), {budget['train_images']:,} training images x {budget['epochs']} epochs "
        f"({budget['steps_per_epoch'] * budget['epochs']} updates of batch {budget['batch_size']}) per method, "
        f"backbone {budget['backbone']} ({next(iter(runs.values()))['parameters_backbone']:,} parameters) for all "
        "but CMC (two half-width ones) and CPC (its own patch encoder); "
        f"kNN (k = 200) and linear probe ({budget['probe_epochs']} epochs) on "
        f"{budget['test_images']:,} test images; {budget['backend']} backend, 2-core CPU shared with other jobs "
        f"(load averages in the metrics file); {minutes:.0f} min in all. 2 s.e. of a difference near 70 %: about "
        f"{200 * np.sqrt(2 * 0.21 / budget['test_images']):.1f} points.",
        "",
        "| run | kNN h (%) | probe h (%) | kNN z (%) | probe z (%) | loss per epoch | output_std per epoch "
        "| kNN (%) per epoch | min |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs.values():
        lines.append(
            f"| {run.get('run')} | {_cell(run, 'knn_h_percent')} | {_cell(run, 'probe_h_percent')} | "
            f"{_cell(run, 'knn_z_percent')} | {_cell(run, 'probe_z_percent')} | "
            f"{common.per_epoch(run.get('loss_per_epoch'), '.3f')} | {common.per_epoch(run.get('output_std_per_epoch'), '.3f')} | "
            f"{common.per_epoch(run.get('knn_accuracy_percent_per_epoch'), '.1f')} | {run.get('wall_seconds', 0) / 60:.1f} |")
    published = PAPER["lightly_cifar10_knn_percent"]
    ours = {"SimCLR": runs.get("simclr"), "BYOL": runs.get("byol"), "MoCo": runs.get("moco")}
    lines += ["", f"Published (CIFAR-10, not this budget or dataset): {PAPER['lightly_cifar10']}; "
              f"{PAPER['simclr_cifar10']}. About {19500 / max(1, budget['steps_per_epoch'] * budget['epochs']):.0f}x "
              f"our updates, {512 // budget['batch_size']}x the batch, "
              f"{11.2e6 / next(iter(runs.values()))['parameters_backbone']:.0f}x the backbone's parameters.", "",
              "| method | ours: kNN (%) | ours: above random init by (points) | lightly CIFAR-10 kNN (%) |",
              "|---|---|---|---|"]
    for method, run in ours.items():
        knn = f"{run['knn_h_percent']:.1f}" if run else "-"
        gain = f"{run['knn_h_percent'] - runs[RANDOM_INIT]['knn_h_percent']:+.1f}" if run and RANDOM_INIT in runs else "-"
        lines.append(f"| {method} | {knn} | {gain} | {published[method]} |")
    before = [name for name in BEFORE_MOCO if name in runs]
    if before:
        lines += ["", f"Before MoCo (published, not this budget): {PAPER['instdisc_cifar10']}; "
                  f"{PAPER['invaspread_cifar10']}; {PAPER['instdisc_imagenet']}; {PAPER['cpc']}. Ours: kNN of h, "
                  "the pooled backbone features (the papers' kNN is on the 128-d embedding).", "",
                  "| method | ours: kNN h (%) | ours: probe h (%) | above its random init by (points) | published (%) |",
                  "|---|---|---|---|---|"]
        for name in before:
            run, reference = runs[name], runs.get(OWN_RANDOM_INIT.get(name, RANDOM_INIT))
            gain = f"{run['knn_h_percent'] - reference['knn_h_percent']:+.1f}" if reference else "-"
            published_knn = PAPER.get(f"{name}_cifar10_knn_percent", "-")
            lines.append(f"| {run['run']} | {_cell(run, 'knn_h_percent')} | {_cell(run, 'probe_h_percent')} | "
                         f"{gain} | {published_knn} |")
    swav = [name for name in SWAV_RUNS if name in runs]
    if swav:
        lines += ["", f"SwAV (published, not this budget): {PAPER['swav_imagenet']}; lightly's CIFAR-10 kNN "
                  f"{PAPER['swav_lightly_cifar10_knn_percent']} % (ResNet-18, 200 epochs, batch 512).", "",
                  "| run | ours: kNN h (%) | above random init by (points) | loss / ln K per epoch | published |",
                  "|---|---|---|---|---|"]
        for name in swav:
            run = runs[name]
            gain = f"{run['knn_h_percent'] - runs[RANDOM_INIT]['knn_h_percent']:+.1f}" if RANDOM_INIT in runs else "-"
            lines.append(f"| {run['run']} | {_cell(run, 'knn_h_percent')} | {gain} | "
                         f"{common.per_epoch(run.get('loss_over_ln_k_per_epoch'), '.3f')} | {PUBLISHED_KNN[name]} |")
    lines += ["", "Claims (a difference holds when it exceeds 2 binomial standard errors over the test images):", ""]
    lines += common.claim_lines(metrics["claims"])
    if metrics.get("notes"):  # what shows and what does not, added by hand after the run
        lines += ["", "Notes:", ""] + [f"- {note}" for note in metrics["notes"]]
    text = "\n".join(lines) + "\n"
    return common.write_results(output, "ssl", dataset, text)


def main(argv=None):
    parser = common.ArgumentParser(__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="mnist", choices=sorted(DATASETS),
                        help="mnist / cifar10 (found or downloaded: see --data-dir), digits (embedded, smoke tests)")
    parser.add_argument("--runs", default=",".join(RUNS), help=f"comma-separated, of {', '.join(RUNS)}")
    parser.add_argument("--train-images", type=int, default=4000, help="a seeded class-balanced subset (0: all)")
    parser.add_argument("--test-images", type=int, default=2000, help="a class-balanced subset (0: all)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--backbone", default="resnet8", choices=sorted(BACKBONES), help="the same for every method")
    common.add_probe_flags(parser)
    common.add_rerun_flags(parser)
    args = parser.parse_args(argv)
    if args.report_only:
        return common.report_only(args, report, "ssl")
    names = parse_runs(args.runs)
    common.require_dataset(args.dataset)
    common.select_backend(args.backend)
    import keras

    data = load_data(args.dataset, args.train_images, args.test_images, args.seed)
    batch_size = min(args.batch_size, len(data[0]))
    budget = {"backend": keras.backend.backend(), "dataset": args.dataset, "image_size": IMAGE_SIZE[args.dataset],
              "backbone": args.backbone, "train_images": int(len(data[0])),
              "test_images": int(len(data[2])), "epochs": args.epochs, "batch_size": batch_size,
              "steps_per_epoch": len(data[0]) // batch_size, "seed": args.seed, "probe_epochs": args.probe_epochs,
              "cpu_cores": os.cpu_count()}
    output = pathlib.Path(args.output_dir)
    output.mkdir(parents=True, exist_ok=True)
    own_inits = [OWN_RANDOM_INIT[name] for name in names if name in OWN_RANDOM_INIT]

    def run(name):
        if name == RANDOM_INIT or name in OWN_RANDOM_INIT.values():
            method = next((m for m, label in OWN_RANDOM_INIT.items() if label == name), "simclr")
            return random_init(args.dataset, data, batch_size, args.probe_epochs, args.seed, args.backbone, method)
        return train_and_evaluate(name, args.dataset, data, args.epochs, batch_size, args.probe_epochs, args.seed,
                                  args.backbone, args.verbose)

    metrics = common.run_and_report(records(common.metrics_path(args, "ssl"), budget),
                                    ([] if args.no_random_init else [RANDOM_INIT, *own_inits]) + names, run, args,
                                    report)
    return {**metrics, "requested": names}


# The published figure beside each run (CIFAR-10 or ImageNet; none for CMC at this scale).
PUBLISHED_KNN = {"simclr": "84.8 (lightly CIFAR-10 kNN)", "byol": "86.8 (lightly CIFAR-10 kNN)",
                 "moco": "84.7 (lightly CIFAR-10 kNN)", "instdisc": "80.8 (CIFAR-10 kNN, Table 1)",
                 "instdisc_nce": "80.8 (CIFAR-10 kNN, Table 1)", "invaspread": "83.6 (CIFAR-10 kNN, Table 1)",
                 "cpc": "no kNN published (CPC v2 CIFAR-10 linear 84.52)", "cmc": "no CIFAR-10 figure",
                 "byol_no_predictor": "collapses (Table 5)", "byol_tau0": "collapses (Table 5)",
                 "swav": "75.3 (ImageNet linear, 2 x 224 + 6 x 96); lightly CIFAR-10 kNN 84.2",
                 "swav_2crops": "70.1 (ImageNet linear, 2 x 224)", "swav_eps10": "collapses: loss at ln K"}


def paper_vs_ours(metrics):
    """The requested runs' kNN (and probe of h) beside the published figures, and their untrained references."""
    runs = metrics["runs"]
    names = metrics.get("requested") or list(RUNS)
    rows = []
    for name in names:
        if name not in runs:
            continue
        run, reference = runs[name], runs.get(OWN_RANDOM_INIT.get(name, RANDOM_INIT))
        against = f" (random init {reference['knn_h_percent']:.1f})" if reference else ""
        rows.append((f"{RUNS[name][2]}: kNN of h (%)", PUBLISHED_KNN.get(name, "-"),
                     f"{run['knn_h_percent']:.1f}{against}, {metrics['budget']['dataset']}"))
        rows.append((f"{RUNS[name][2]}: linear probe of h (%)",
                     "91.0 (CIFAR-10, ResNet-50, 1000 epochs)" if RUNS[name][0] == "simclr" else "-",
                     f"{run['probe_h_percent']:.1f}"))
    return rows
