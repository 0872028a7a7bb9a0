"""BEiT on MNIST at a CPU budget: MIM on visual tokens vs on pixels, fine-tuned, vs from scratch (Bao et al. 2022, Table 4).

    paperzoo reproduce beit --budget cpu                        # MNIST at 28 x 28
    paperzoo reproduce beit --budget cpu --runs scratch         # one run per process
    paperzoo reproduce beit --budget cpu --report-only

The claim (Bao et al. 2022, Table 4, ablation at 300 epochs): masked image modelling that
predicts the *visual tokens* of a discrete tokenizer fine-tunes better than the same
pre-training regressing the masked *pixels* ("Visual Tokens removed, recover masked
pixels"); both beat the same ViT trained from scratch. One backbone and one budget for
all three runs:

1. "tokens": a `VisualTokenizer` (the package's dVAE, preset `beit_tokenizer_digits` at
   the images' size, patch 4: one token per backbone patch; DALL-E's weights cannot be
   downloaded here) is trained first (`fit`), its test reconstruction loss (MSE with the
   hard argmax tokens) and code perplexity recorded; then `BEiT(backbone, tokenizer,
   target="tokens")`: blockwise masking (75/196 of the patches), cross-entropy on the
   masked positions; its masked-token accuracy (MIM accuracy) on the test images; then
   the backbone fine-tuned.
2. "pixels": `BEiT(backbone, target="pixels")`, the paper's ablation: the same masking,
   a linear head regressing each masked patch's per-patch normalised pixels; fine-tuned.
3. "scratch": the same backbone, randomly initialised, trained with the same fine-tuning
   optimizer and number of updates (layer-wise decay 1: there are no pre-trained layers).

The backbone: preset `beit_tiny_digits` (ours: 4 layers x 64, 4 heads, MLP 256, relative
position bias, LayerScale 0.1, drop path 0.1) at 28 x 28 x 1, patch 4: a 7 x 7 grid. The
paper: BEiT-B/16 (86M) on 224 x 224 ImageNet, 800 epochs of pre-training.

Fine-tuning (`BEiTClassifier.paper_optimizer`, Sec. 2.6): mean-pooled patch features,
LayerNorm, a linear head; AdamW (0.9, 0.999), lr 4e-3 x batch / 1024, 20 % warm-up then
cosine, weight decay 0.05, layer-wise decay 0.65 for the pre-trained backbones. No
augmentation, label smoothing, mixup or cutmix (the paper uses RandAugment-style ones).

Deviations for a run of a few hundred updates: pre-training at peak lr `--pretrain-lr`
1.5e-3, the paper's lr for batch 2048 used at our batch (its linear rule would give
9.4e-5 at 128, which learns nothing in 100 updates); the tokenizer at peak lr 1e-3
(DALL-E's 1e-4 is for 1.2M updates), its temperature annealed 1 -> 1/16 and its KL
weight raised over this run's updates (the preset's schedules are over 2,000 / 500);
tokenizer width `--tokenizer-width` 32 (the preset's 64 doubles the cost). Inputs are
[0, 1] pixels for tokenizer and backbone alike (BEiT feeds both the same crop).

Budget (the defaults = `--budget cpu`, sized by timing a few steps first: at load ~10 on 2
shared cores, JAX, 3 s per tokenizer update of batch 128 at width 64, 1.8 s per MIM update,
0.9 s per fine-tuning update): 2,000 MNIST training images, batch 64 (31 updates per
epoch), tokenizer 3 epochs (93 updates), MIM 4 epochs (124), fine-tuning and from scratch 3
epochs (93); 1,000 test images. The paper: 800 epochs of ImageNet at batch 2048 (~500k updates).

Runs are saved one by one into beit_<dataset>_metrics.json; a rerun with the same budget
keeps those already there (`--fresh` retrains). Differences count only beyond two
binomial standard errors over the test images. Writes beit_<dataset>_metrics.json,
beit_<dataset>_results.md and beit_<dataset>_tokenizer.png (test images above, their
reconstructions from the hard visual tokens below) into --output-dir.
"""

import os
import pathlib
import time

import numpy as np

from keras_paperzoo.reproductions import common

PAPER = {
    "beit_b_fine_tuned_percent": 83.2,
    "source": "Bao et al. 2022, Table 1 (ImageNet-1K, BEiT-B/16 at 224, 800 epochs of pre-training); "
              "the tokens-vs-pixels ablation: Table 4 (BEiT-B, 300 epochs), see Table 4 for its values",
}
BACKBONE_PRESET = "beit_tiny_digits"
TOKENIZER_PRESET = "beit_tokenizer_digits"
RUNS = ("tokens", "pixels", "scratch")
TITLES = {"tokens": "BEiT, MIM on visual tokens, fine-tuned", "pixels": "BEiT, MIM on pixels, fine-tuned",
          "scratch": "same backbone from scratch"}
DEFAULTS = {"mnist": {"image_size": None, "train_images": 2000, "test_images": 1000},
            "digits": {"image_size": 16, "train_images": 128, "test_images": 60}}
BUDGET_KEYS = ("dataset", "image_shape", "train_images", "test_images", "tokenizer_epochs", "pretrain_epochs",
               "finetune_epochs", "batch_size", "seed", "layers", "tokenizer_width", "pretrain_lr", "tokenizer_lr")


def two_standard_errors(accuracy_percent, n):
    """2 binomial standard errors (points) of one accuracy (%) over n test images."""
    p = accuracy_percent / 100.0
    return round(200.0 * float(np.sqrt(p * (1.0 - p) / n)), 2)


def build_backbone(budget, seed):
    import keras

    from keras_paperzoo.models.beit import BEiTBackbone

    keras.utils.set_random_seed(seed)
    return BEiTBackbone.from_preset(BACKBONE_PRESET, image_shape=tuple(budget["image_shape"]),
                                    num_layers=budget["layers"])


def fine_tune(backbone, data, budget, seed, layer_decay, verbose=2):
    """BEiTClassifier(backbone) with BEiT's fine-tuning optimizer for `finetune_epochs`; test accuracy (%)."""
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
    from keras_paperzoo.models.beit import BEiTClassifier

    x_train, y_train, x_test, y_test = data
    batches = EpochShuffledBatches(x_train, y_train, batch_size=budget["batch_size"], seed=seed)
    epochs = budget["finetune_epochs"]
    model = BEiTClassifier(backbone, num_classes=int(max(y_train.max(), y_test.max())) + 1)
    model.compile(optimizer=model.paper_optimizer(batch_size=budget["batch_size"], steps_per_epoch=len(batches),
                                                  epochs=epochs, layer_decay=layer_decay),
                  metrics=["accuracy"])
    start = time.perf_counter()
    history = model.fit(batches, epochs=epochs, verbose=verbose, callbacks=[batches.epoch_callback()])
    seconds = time.perf_counter() - start
    _, accuracy = model.evaluate(x_test, y_test, batch_size=256, verbose=0)
    accuracy = round(100 * float(accuracy), 2)
    return {"test_accuracy_percent": accuracy, "two_standard_errors_points": two_standard_errors(accuracy, len(y_test)),
            "train_accuracy_percent_per_epoch": [round(100 * float(a), 2) for a in history.history["accuracy"]],
            "fine_tune_steps": len(batches) * epochs, "fine_tune_seconds": round(seconds, 1),
            "layer_decay": layer_decay, "backbone_parameters": int(backbone.count_params())}


def train_tokenizer(data, budget, seed, output, dataset, verbose=2):
    """The dVAE (Sec. 2.1.2) on the training images: (tokenizer, its record)."""
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
    from keras_paperzoo.models.beit import VisualTokenizer, code_perplexity

    import keras

    x_train, _, x_test, _ = data
    batches = EpochShuffledBatches(x_train, batch_size=budget["batch_size"], seed=seed)
    total = len(batches) * budget["tokenizer_epochs"]
    keras.utils.set_random_seed(seed)
    tokenizer = VisualTokenizer.from_preset(
        TOKENIZER_PRESET, image_shape=tuple(budget["image_shape"]), patch_size=budget["patch_size"],
        hidden_dim=budget["tokenizer_width"], temperature_steps=total, kl_warmup_steps=max(1, total // 4), seed=seed)
    tokenizer.compile(optimizer=tokenizer.paper_optimizer(total_steps=total, learning_rate=budget["tokenizer_lr"],
                                                          final_learning_rate=budget["tokenizer_lr"] / 80))
    start = time.perf_counter()
    history = tokenizer.fit(batches, epochs=budget["tokenizer_epochs"], verbose=verbose,
                            callbacks=[batches.epoch_callback()])
    seconds = time.perf_counter() - start
    test = tokenizer.evaluate(x_test, batch_size=256, verbose=0, return_dict=True)
    ids = np.concatenate([keras.ops.convert_to_numpy(tokenizer.tokenize(x_test[i:i + 256]))
                          for i in range(0, len(x_test), 256)])  # (N, h, w)
    tokenizer.save_reconstructions(x_test[:8], pathlib.Path(output) / f"beit_{dataset}_tokenizer.png", scale=4)
    return tokenizer, {
        "tokenizer_steps": total, "tokenizer_seconds": round(seconds, 1),
        "tokenizer_vocabulary_size": int(tokenizer.vocabulary_size),
        "tokenizer_loss_per_epoch": [round(float(v), 4) for v in history.history["loss"]],
        "tokenizer_perplexity_per_epoch": [round(float(v), 2) for v in history.history["perplexity"]],
        "tokenizer_test_reconstruction_mse": round(float(test["reconstruction_loss"]), 4),
        "tokenizer_test_perplexity": round(float(keras.ops.convert_to_numpy(
            code_perplexity(ids, tokenizer.vocabulary_size))), 2),
        "tokenizer_codes_used_on_test": int(len(np.unique(ids))),
    }


def pretrain(backbone, tokenizer, target, data, budget, seed, verbose=2):
    """BEiT masked image modelling on `target` ("tokens" or "pixels"); its record."""
    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
    from keras_paperzoo.models.beit import BEiT

    x_train, _, x_test, _ = data
    batch = budget["batch_size"]
    batches = EpochShuffledBatches(x_train, batch_size=batch, seed=seed)
    beit = BEiT(backbone, tokenizer if target == "tokens" else None, target=target, seed=seed)
    epochs = budget["pretrain_epochs"]
    beit.compile(batch_size=batch, steps_per_epoch=len(batches), epochs=epochs,
                 base_learning_rate=budget["pretrain_lr"] * 2048 / batch)  # peak lr = pretrain_lr
    start = time.perf_counter()
    history = beit.fit(batches, epochs=epochs, verbose=verbose, callbacks=[batches.epoch_callback()])
    seconds = time.perf_counter() - start
    test = beit.evaluate(x_test, batch_size=256, verbose=0, return_dict=True)
    record = {"pretrain_steps": len(batches) * epochs, "pretrain_seconds": round(seconds, 1),
              "masked_patches": int(beit.masked_patches),
              "pretrain_loss_per_epoch": [round(float(v), 4) for v in history.history["loss"]],
              "test_mim_loss": round(float(test["loss"]), 4)}
    if target == "tokens":
        record["mim_accuracy_percent_per_epoch"] = [round(100 * float(v), 2) for v in history.history["mim_accuracy"]]
        record["test_mim_accuracy_percent"] = round(100 * float(test["mim_accuracy"]), 2)
    return record


def run_one(name, data, budget, seed, output, dataset, verbose=2):
    backbone = build_backbone(budget, seed)  # the same initial backbone for every run (one seed)
    result = {}
    if name == "tokens":
        tokenizer, result = train_tokenizer(data, budget, seed, output, dataset, verbose)
        result.update(pretrain(backbone, tokenizer, "tokens", data, budget, seed, verbose))
    elif name == "pixels":
        result.update(pretrain(backbone, None, "pixels", data, budget, seed, verbose))
    layer_decay = 1.0 if name == "scratch" else budget["layer_decay"]
    result.update(fine_tune(backbone, data, budget, seed, layer_decay, verbose))
    return result


def claims(runs, budget):
    n, out = budget["test_images"], {}
    for better, worse in (("tokens", "pixels"), ("tokens", "scratch"), ("pixels", "scratch")):
        if better in runs and worse in runs:
            out[f"{TITLES[better]} above {TITLES[worse]}"] = common.run_above(
                runs, better, worse, "test_accuracy_percent", n)
    return out


def records(path, budget):
    from keras_paperzoo.evaluation.run_records import RunRecords

    return RunRecords(path, budget, BUDGET_KEYS, kept=("notes",),
                      summarize=lambda runs: {"paper": PAPER, "claims": claims(runs, budget)})


def report(output, dataset):
    output = pathlib.Path(output)
    metrics = common.read_metrics(output, "beit", dataset)
    b, runs = metrics["budget"], metrics["runs"]
    name = {"mnist": "MNIST", "digits": "the scikit-learn digits"}.get(dataset, dataset)
    minutes = common.wall_minutes(runs)
    height, width, _ = b["image_shape"]
    grid = height // b["patch_size"]
    lines = [
        f"BEiT ({BACKBONE_PRESET}: {b['layers']} layers x 64, patch {b['patch_size']}, a {grid} x {grid} grid) on "
        f"{name} at {height} x {width}: {b['train_images']:,} training images, batch {b['batch_size']}; tokenizer "
        f"{b['tokenizer_epochs']} epochs ({b['tokenizer_epochs'] * b['steps_per_epoch']} updates, width "
        f"{b['tokenizer_width']}); MIM {b['pretrain_epochs']} epochs ({b['pretrain_epochs'] * b['steps_per_epoch']} "
        f"updates, peak lr {b['pretrain_lr']:g}); fine-tuning and from scratch {b['finetune_epochs']} epochs "
        f"({b['finetune_epochs'] * b['steps_per_epoch']} updates); tested on {b['test_images']:,} images; "
        f"{b['backend']} backend, {b['cpu_cores']} shared CPU cores (loaded by other jobs), {minutes:.1f} min in all.",
        "",
        "| run | test acc. (%) | 2 s.e. | MIM loss per epoch | test MIM loss | test MIM acc. (%) | time (min) |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, run in runs.items():
        losses = common.per_epoch(run.get("pretrain_loss_per_epoch"), ".3f")
        mim = f"{run['test_mim_accuracy_percent']:.2f}" if "test_mim_accuracy_percent" in run else "-"
        mim_loss = f"{run['test_mim_loss']:.3f}" if "test_mim_loss" in run else "-"
        lines.append(f"| {TITLES.get(label, label)} | {run['test_accuracy_percent']:.2f} | "
                     f"{run['two_standard_errors_points']:.2f} | {losses} | {mim_loss} | {mim} | "
                     f"{run.get('wall_seconds', 0) / 60:.1f} |")
    if "tokens" in runs:
        t = runs["tokens"]
        lines += ["", f"Visual tokenizer ({t['tokenizer_vocabulary_size']} codes, {t['tokenizer_steps']} updates): "
                  f"test reconstruction MSE {t['tokenizer_test_reconstruction_mse']:.4f} (hard tokens), code "
                  f"perplexity on the test images {t['tokenizer_test_perplexity']:.1f} of "
                  f"{t['tokenizer_vocabulary_size']} ({t['tokenizer_codes_used_on_test']} codes used); training "
                  f"perplexity per epoch {', '.join(map(str, t['tokenizer_perplexity_per_epoch']))}. Picture: "
                  f"beit_{dataset}_tokenizer.png (test images, then their reconstructions from the tokens)."]
    lines += ["", f"Published reference (not this budget): {PAPER['source']}: BEiT-B fine-tuned "
              f"{PAPER['beit_b_fine_tuned_percent']} % on ImageNet; in Table 4 recovering masked pixels instead of "
              "visual tokens fine-tunes lower."]
    text = "\n".join(lines) + "\n\nClaims (holds = difference larger than 2 standard errors over the test images):\n"
    text += common.claims_text(metrics["claims"]) + "\n"
    text += common.notes_text(metrics)
    return common.write_results(output, "beit", dataset, text)


def main(argv=None):
    parser = common.ArgumentParser(__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="mnist", choices=("mnist", "digits"))
    parser.add_argument("--runs", default=",".join(RUNS), help=f"comma-separated among {', '.join(RUNS)}")
    parser.add_argument("--image-size", type=int, default=None, help="default: MNIST's 28, digits 16")
    parser.add_argument("--train-images", type=int, default=None, help="seeded class-balanced subset (0: all)")
    parser.add_argument("--test-images", type=int, default=None)
    parser.add_argument("--tokenizer-epochs", type=int, default=3)
    parser.add_argument("--pretrain-epochs", type=int, default=4)
    parser.add_argument("--finetune-epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--layers", type=int, default=4, help="backbone blocks (beit_tiny_digits: 4)")
    parser.add_argument("--tokenizer-width", type=int, default=32)
    parser.add_argument("--pretrain-lr", type=float, default=1.5e-3)
    parser.add_argument("--tokenizer-lr", type=float, default=1e-3)
    common.add_rerun_flags(parser)
    args = parser.parse_args(argv)
    if args.report_only:
        return common.report_only(args, report, "beit")
    for key, value in DEFAULTS[args.dataset].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    names = common.comma_list(args.runs, "--runs", RUNS)
    common.require_dataset(args.dataset)
    common.select_backend(args.backend)

    import keras

    x_train, y_train, x_test, y_test = common.load_images(args.dataset, args.train_images, args.test_images,
                                                          args.seed, args.image_size)
    data = tuple(np.asarray(a, "float32") if i % 2 == 0 else a for i, a in enumerate((x_train, y_train, x_test,
                                                                                       y_test)))
    batch_size = min(args.batch_size, len(x_train))
    budget = {"backend": keras.backend.backend(), "dataset": args.dataset, "image_shape": list(x_train.shape[1:]),
              "patch_size": 4, "layers": args.layers, "train_images": int(len(x_train)),
              "test_images": int(len(x_test)), "tokenizer_epochs": args.tokenizer_epochs,
              "pretrain_epochs": args.pretrain_epochs, "finetune_epochs": args.finetune_epochs,
              "batch_size": batch_size, "steps_per_epoch": len(x_train) // batch_size, "seed": args.seed,
              "tokenizer_width": args.tokenizer_width, "pretrain_lr": args.pretrain_lr,
              "tokenizer_lr": args.tokenizer_lr, "layer_decay": 0.65, "cpu_cores": os.cpu_count()}
    output = pathlib.Path(args.output_dir)
    output.mkdir(parents=True, exist_ok=True)
    return common.run_and_report(records(common.metrics_path(args, "beit"), budget), names,
                                 lambda name: run_one(name, data, budget, args.seed, output, args.dataset, args.verbose),
                                 args, report)


def paper_vs_ours(metrics):
    """Each run's test accuracy beside the paper's ImageNet figures."""
    runs, rows = metrics["runs"], []
    paper = {"tokens": f"{PAPER['beit_b_fine_tuned_percent']} (ImageNet, BEiT-B, 800 ep.)",
             "pixels": "lower (Table 4)", "scratch": "lower (DeiT-B 81.8, Table 1)"}
    for name in RUNS:
        if name in runs:
            run = runs[name]
            rows.append((f"{TITLES[name]}: test accuracy (%)", paper[name],
                         f"{run['test_accuracy_percent']:.2f} +- {run['two_standard_errors_points']:.2f}"))
    if "tokens" in runs:
        rows.append(("visual tokenizer: test code perplexity", "- (DALL-E's, 8192 codes)",
                     f"{runs['tokens']['tokenizer_test_perplexity']:.1f} of "
                     f"{runs['tokens']['tokenizer_vocabulary_size']}"))
    return rows
