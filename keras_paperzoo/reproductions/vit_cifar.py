"""A small ViT from scratch on CIFAR-10: class token vs global average pooling (Dosovitskiy et al. 2021, App. D.3).

    paperzoo reproduce vit --budget cpu             # the CPU budget below
    paperzoo reproduce vit --budget paper           # --layers 12 --dropout 0.1 --train-images 0 --epochs 200

The paper's CIFAR-10 numbers (98.1 % for ViT-B/16, 99.0 % ViT-L/16, Table 5) come after
pre-training on ImageNet-21k or JFT-300M; from scratch on CIFAR-10 a ViT trails a ResNet
of similar cost, which is what the table beside `resnet_cifar.py`'s shows. App. D.3 /
Fig. 9: a class token and global average pooling of the patch tokens work equally well,
given each its own learning rate; here both get the same (the recipe's).

The model: `ViTBackbone.from_preset("vit_ti16")` (D 192, 3 heads, MLP 768) at 32x32 with
patch size 4 (an 8x8 grid, 64 tokens, the `vit` recipe's choice for small images) and
`--layers` blocks, `pooling="token"` and `pooling="gap"`, each under `ImageClassifier`
with its `compile(steps_per_epoch, epochs)` recipe: AdamW lr 3e-3, beta_2 0.999,
weight decay 0.3, linear warm-up over the first 10 % of steps then cosine decay, gradient
clipping at global norm 1 (Table 3's ImageNet-from-scratch settings). Data, augmentation
(pad 4, crop, flip), normalisation, subset, seeds, test set: exactly `resnet_cifar.py`'s.

Budget (the defaults): the same 4,000 training images x 5 epochs (160 steps of 128) as
the ResNets, 2 transformer blocks instead of ViT-Ti's 12 and dropout 0 instead of 0.1.
Why: timed on this machine (2 cores shared, load 6-10), a 4-block ViT-Ti/4 step took
2.6-4.6 s without dropout and 7.9 s with it (JAX's random masks are costly on a CPU),
against 1-2 s for ResNet-20; at 160 steps the nets underfit, so dropout only slows
them. Deviations: depth, dropout, and batch 128 at the lr the paper used for batch 4096.
In the run (load 8-10) the two ViTs took 13 and 10 min of training; results in
applications/results/vit_cifar_results.md.

Writes vit_cifar_metrics.json, vit_cifar_results.md (with the ResNet rows when
resnet_cifar_metrics.json is in the same folder) and vit_cifar_training_error.png;
`--report-only` rewrites the last two from the JSONs (e.g. after the ResNets finish).
"""

import json
import pathlib

from keras_paperzoo.reproductions import common

POOLINGS = {"token": "class token", "gap": "global average pooling"}
PAPER = ("Dosovitskiy et al. 2021, App. D.3 / Fig. 9: class token and GAP perform alike (each at its own "
         "learning rate); CIFAR-10 98.1 % (ViT-B/16) only after pre-training (Table 5)")


def report(output):
    """Write vit_cifar_results.md and vit_cifar_training_error.png from the saved metrics.

    The ResNet rows and curves come from resnet_cifar_metrics.json when it is in the
    same folder (curves only when both ran the same number of epochs). Returns the table.
    """
    output = pathlib.Path(output)
    metrics = json.loads((output / "vit_cifar_metrics.json").read_text())
    nets, budget = metrics["nets"], metrics["budget"]
    resnet_file = output / "resnet_cifar_metrics.json"
    resnets = json.loads(resnet_file.read_text()) if resnet_file.exists() else None
    colours = {"token": (44, 160, 44), "gap": (148, 103, 189)}
    curves = [(name, colours[run["pooling"]], run["train_error_percent_per_epoch"], run["test_error_percent"])
              for name, run in nets.items()]
    if resnets and resnets["budget"]["epochs"] == budget["epochs"]:
        for name, colour in (("resnet20_cifar", (31, 119, 180)), ("resnet56_cifar", (214, 39, 40))):
            run = resnets["nets"].get(name)
            if run:
                curves.append((common.NET_LABELS[name], colour, run["train_error_percent_per_epoch"],
                               run["test_error_percent"]))
    common.plot_training_error([("ViT (and ResNets): training error (%)", curves)],
                                     output / "vit_cifar_training_error.png", budget["epochs"], width=560)
    text = table(nets, budget, resnets)
    token, gap = nets.get("ViT (class token)"), nets.get("ViT (global average pooling)")
    if token and gap:
        # Which pooling has the lower test error, and is the gap beyond 2 binomial standard errors?
        better, worse = (token, gap) if token["test_error_percent"] <= gap["test_error_percent"] else (gap, token)
        c = common.error_below(better, worse, "test_error_percent", budget["test_images"])
        text += (f"\n\n{POOLINGS[better['pooling']]} has the lower test error by {c['difference_points']:.2f} points "
                 f"(2 standard errors: {c['two_standard_errors_points']:.2f}; "
                 f"{'a real difference' if c['holds'] else 'within noise'} at this budget).")
    (output / "vit_cifar_results.md").write_text(text + "\n")
    return text


def table(nets, budget, resnets=None):
    lines = [
        f"ViT: {budget['preset']} width with patch {budget['patch_size']}, {budget['layers']} blocks, "
        f"dropout {budget['dropout']}. "
        f"CIFAR-10 from scratch, {budget['train_images']:,} training images x {budget['epochs']} epochs "
        f"({budget['steps_per_epoch'] * budget['epochs']} steps of batch {budget['batch_size']}), "
        f"test on {budget['test_images']:,} images, {budget['backend']} backend, "
        f"{sum(common.wall_seconds(run) for run in nets.values()) / 60:.0f} min of training and testing in all.",
        "",
        "| net | parameters | test error (%) | final training error (%) | train time (min) | budget |",
        "|---|---|---|---|---|---|",
    ]
    for name, run in nets.items():
        lines.append(
            f"| {name} | {run['parameters']:,} | {run['test_error_percent']:.2f} | "
            f"{run['final_train_error_percent']:.2f} | {run['train_seconds'] / 60:.1f} | as above |"
        )
    for name, run in (resnets or {}).get("nets", {}).items():
        b = resnets["budget"]
        lines.append(
            f"| {common.NET_LABELS.get(name, name)} (resnet_cifar.py) | {run['parameters']:,} | "
            f"{run['test_error_percent']:.2f} | {run['final_train_error_percent']:.2f} | "
            f"{run['train_seconds'] / 60:.1f} | {b['train_images']:,} images x {b['epochs']} epochs |"
        )
    return "\n".join(lines)


def main(argv=None):
    parser = common.cifar_arguments(__doc__.splitlines()[0], train_images=4000, epochs=5)
    parser.add_argument("--preset", default="vit_ti16", help="a ViTBackbone preset (width, heads, MLP)")
    parser.add_argument("--patch-size", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2, help="transformer blocks (ViT-Ti has 12)")
    parser.add_argument("--dropout", type=float, default=0.0, help="dropout rate (the paper: 0.1)")
    parser.add_argument("--poolings", default="token,gap", help="comma-separated among token, gap")
    parser.add_argument("--report-only", action="store_true",
                        help="no training: rewrite the table and plot from the metrics JSONs in --output-dir")
    args = parser.parse_args(argv)
    if args.report_only:
        print(report(args.output_dir))
        return json.loads((pathlib.Path(args.output_dir) / "vit_cifar_metrics.json").read_text())
    poolings = [p for p in args.poolings.split(",") if p]
    if not poolings or any(p not in POOLINGS for p in poolings):
        parser.error(f"--poolings {args.poolings!r}: expected a comma-separated list among token, gap")
    common.require_dataset(args.dataset)
    common.select_backend(args.backend)

    import keras

    from keras_paperzoo.evaluation.run_records import timed
    from keras_paperzoo.models import ViTBackbone

    data = common.load_cifar(args.dataset, args.train_images, args.test_images, args.seed)
    nets = {}
    for pooling in poolings:
        name = f"ViT ({POOLINGS[pooling]})"
        print(f"== {name}", flush=True)
        keras.utils.set_random_seed(args.seed)
        backbone = ViTBackbone.from_preset(
            args.preset, image_shape=data[0].shape[1:], patch_size=args.patch_size,
            num_layers=args.layers, dropout_rate=args.dropout, pooling=pooling,
        )
        nets[name] = timed(
            common.train_and_test, backbone, data, args.epochs, args.batch_size, args.seed, args.verbose)
        nets[name]["pooling"] = pooling
        print(f"   {name}: {json.dumps(nets[name])}", flush=True)
    budget = common.budget_record(
        args, data, preset=args.preset, patch_size=args.patch_size,
        layers=args.layers, dropout=args.dropout,
    )
    metrics = {"paper": PAPER, "budget": budget, "nets": nets}
    output = pathlib.Path(args.output_dir)
    output.mkdir(parents=True, exist_ok=True)
    common.write_json(output / "vit_cifar_metrics.json", metrics)
    print()
    print(report(output))
    return metrics


def paper_vs_ours(metrics):
    """Test accuracy of each pooling from scratch, beside the paper's pre-trained CIFAR-10 figure."""
    rows = [(f"{name}: CIFAR-10 test accuracy (%)", "98.1 (ViT-B/16, pre-trained on ImageNet-21k)",
             f"{100 - run['test_error_percent']:.2f} (from scratch)") for name, run in metrics["nets"].items()]
    token, gap = metrics["nets"].get("ViT (class token)"), metrics["nets"].get("ViT (global average pooling)")
    if token and gap:
        rows.append(("class token minus GAP test accuracy (points)", "about 0 (Fig. 9, each at its own lr)",
                     f"{gap['test_error_percent'] - token['test_error_percent']:+.2f}"))
    return rows
