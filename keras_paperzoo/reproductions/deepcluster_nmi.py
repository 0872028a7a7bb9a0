"""DeepCluster's Figure 2a in small form: does the NMI between the clusters and the labels rise over training?

    paperzoo reproduce deepcluster --budget cpu                   # MNIST (found or downloaded)
    paperzoo reproduce deepcluster --budget smoke                 # the embedded digits, seconds
    paperzoo reproduce deepcluster --budget cpu --report-only     # redraw the table

The claim (Caron et al. 2018, Sec. 4.1 and Fig. 2a): alternating k-means on the
network's features and training on the cluster assignments makes the clusters carry
more and more information about the (never seen) classes: the NMI between the
assignments and the ImageNet labels rises over the epochs. Beside it, the features
themselves: a kNN on the pooled backbone features h after training against the same
network at its random initialisation (the paper's starting point: random features
already hold a signal).

One run (`DeepCluster` through the `deepcluster` recipe's trainer builder: the paper's
PCA-256 whitening, L2, k-means, classifier re-initialised, uniform sampling over the
clusters, SGD lr 0.05, momentum 0.9, weight decay 1e-5), seeded. Measured:

- NMI(clusters, labels) at every clustering: before epoch 1 (the random network's
  features), before each later epoch, and once more after the last (`nmi_per_epoch`,
  epochs + 1 values); and NMI between consecutive clusterings (Fig. 2b);
- the claim "NMI rises": the last clustering's NMI minus the first's, against 2
  standard errors from a paired bootstrap over the training images (200 resamples,
  both clusterings on the same resampled images);
- kNN top-1 (k = 200, cosine, exp(s / 0.1) votes) of the test images on h, trained
  against random init, against 2 binomial s.e. (`keras_paperzoo.evaluation.claims`).

Budget `cpu` (the defaults): MNIST at 16 x 16 (RGB copies), 2,000 training and 500 test
images (class-balanced, seeded), the CIFAR ResNet-8 (one block per stage), k = 50 (5 x
the classes; the paper's 10,000 is 10 x ImageNet's), batch 32 (62 updates per epoch: a
fresh classifier must learn the clusters within one epoch, and the paper's epochs are
5,000 updates long), 6 epochs, crops of at least half the image.

Measured (run once, 2026-11-26, TensorFlow, 2 CPU cores shared with other jobs at load
8-15; 2.4 min in all, 1.8 min of training): NMI(clusters, labels) 0.383 at the random
network's clustering, then 0.386, 0.456, 0.477, 0.484, 0.513 and 0.507 after the last
epoch: a rise of 0.124 against 2 s.e. 0.017 (holds); NMI between consecutive
clusterings rising from 0.41 to 0.64 (the paper's Fig. 2b: toward about 0.8); kNN on h
57.6 % at random init -> 71.8 % (+14.2 points, 2 s.e. 6.0: holds). Results:
applications/results/deepcluster_mnist_results.md. On the 1,500 digits at batch 128
and k = 100 (11 updates per epoch) the NMI fell instead (examples/deepcluster_digits.py
tells how): the claim needs enough updates per epoch for the fresh classifier.
"""

import pathlib
import time

import numpy as np

from keras_paperzoo.reproductions import common

DATASETS = ("digits", "mnist", "cifar10")
IMAGE_SIZE = 16
CROP_SCALE = (0.5, 1.0)
BACKBONES = {
    "resnet8": {"stage_blocks": [1, 1, 1]},  # the deepcluster_resnet20_cifar preset's ResNet-20, cut
    "resnet20": {},
    "tiny": {"stage_blocks": [1, 1], "stage_filters": [8, 16], "stem_filters": 8},
}
BOOTSTRAP = 200
PAPER = {
    "figure_2a": "Caron et al. 2018, Fig. 2a: NMI between the clusters and the ImageNet labels rises over training "
                 "(AlexNet, k = 10,000), to about 0.4-0.45 after 300+ epochs (read off the figure from memory: "
                 "verify)",
    "figure_2b": "Fig. 2b: NMI between consecutive epochs' assignments rises and settles near 0.8 (from memory: "
                 "verify)",
    "imagenet_conv4_linear": "ImageNet linear top-1 on conv4 of AlexNet-BN with Sobel: 39.8 % (Table 1; conv5 "
                             "36.1 %; conv1 12.9 %; from memory: verify)",
}


def load_data(dataset, train_images, test_images, seed):
    """(x_train, y_train, x_test, y_test): RGB in [0, 1] at 16 x 16 (CIFAR at 32); class-balanced seeded subsets."""
    size = 32 if dataset == "cifar10" else IMAGE_SIZE
    return common.load_images(dataset, train_images, test_images, seed, size, "rgb")


def nmi_rise(first, last, labels, seed, resamples=BOOTSTRAP):
    """NMI(last, labels) - NMI(first, labels) with a paired-bootstrap standard error over the images."""
    from keras_paperzoo.clustering import normalized_mutual_info
    from keras_paperzoo.evaluation.claims import paired_bootstrap_above

    claim = paired_bootstrap_above(normalized_mutual_info, last, first, labels, seed, resamples)
    return {"holds": claim["holds"], "difference": round(claim["difference"], 4),
            "two_standard_errors": round(claim["two_standard_errors"], 4)}


def train_and_evaluate(data, args, backbone):
    import keras

    from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds
    from keras_paperzoo.clustering import normalized_mutual_info
    from keras_paperzoo.evaluation import extract_features, knn_accuracy
    from keras_paperzoo.evaluation.claims import accuracy_above
    from keras_paperzoo.recipes import deepcluster as recipe
    from keras_paperzoo.recipes.self_supervised import build_trainer

    x_train, y_train, x_test, y_test = data
    pretraining = recipe.pretraining()
    model, mean, std = build_trainer(pretraining, pretraining.default_preset, x_train, args.batch_size, args.seed,
                                     CROP_SCALE, num_clusters=args.clusters, **BACKBONES[backbone])
    normalize = lambda x: ((x - mean) / std).astype("float32")  # noqa: E731
    k = min(200, len(x_train))

    def knn():
        train = extract_features(model.encoder, (normalize(x_train), None))[0]
        test = extract_features(model.encoder, (normalize(x_test), None))[0]
        return 100 * knn_accuracy(train, y_train, test, y_test, k=k, temperature=0.1)

    knn_init = knn()
    clusterings = []

    class _Keep(keras.callbacks.Callback):  # after Reclustering: this epoch's assignments
        def on_epoch_begin(self, epoch, logs=None):
            clusterings.append(self.model.assignments())

    model.compile()
    start = time.perf_counter()
    history = model.fit(x_train, y_train, batch_size=args.batch_size, epochs=args.epochs, verbose=args.verbose,
                        callbacks=[recipe_reclustering(y_train), EpochSeeds(args.seed), _Keep()]).history
    train_seconds = time.perf_counter() - start
    final = model.cluster(model.cluster_features(x_train), args.epochs).assignments  # after the last epoch
    clusterings.append(final)
    knn_trained = knn()
    nmi = [round(normalized_mutual_info(c, y_train), 4) for c in clusterings]
    n = len(y_test)
    return {
        "nmi_per_epoch": nmi,
        "nmi_previous_per_epoch": [round(normalized_mutual_info(a, b), 4) for a, b in zip(clusterings, clusterings[1:])],
        "loss_per_epoch": [round(float(v), 4) for v in history["loss"]],
        "clusters_used_per_epoch": [int(len(np.unique(c))) for c in clusterings],
        "knn_random_init_percent": round(knn_init, 2), "knn_percent": round(knn_trained, 2),
        "claims": {
            "NMI(clusters, labels) rises from the first clustering to the last": nmi_rise(
                clusterings[0], final, y_train, args.seed),
            "kNN on h above random init": accuracy_above(knn_trained, knn_init, n),
        },
        "num_clusters": model.num_clusters, "pca_dims": int(min(model.pca_dim, model.backbone.output_shape[-1])),
        "parameters_backbone": int(model.backbone.count_params()), "steps_per_epoch": len(x_train) // args.batch_size,
        "train_seconds": round(train_seconds, 1),
    }


def recipe_reclustering(labels):
    from keras_paperzoo.models.deepcluster import Reclustering

    return Reclustering(labels=labels)


def report(output, dataset):
    output = pathlib.Path(output)
    metrics = common.read_metrics(output, "deepcluster", dataset)
    budget, run = metrics["budget"], metrics["run"]
    lines = [
        f"# DeepCluster's NMI over training (Fig. 2a) on {dataset} at a CPU budget",
        "",
        f"{dataset}, {budget['train_images']:,} training and {budget['test_images']:,} test images, "
        f"{budget['backbone']} backbone ({run['parameters_backbone']:,} parameters), k = {run['num_clusters']}, PCA to "
        f"{run['pca_dims']} dims (all the features have) with whitening and L2, {budget['epochs']} epochs of "
        f"{run['steps_per_epoch']} updates at batch {budget['batch_size']}, the paper's SGD; {budget['backend']} "
        f"backend, {budget.get('device', 'CPU')}; {run['train_seconds'] / 60:.1f} min of training.",
        "",
        "| clustering | " + " | ".join(["init"] + [str(e) for e in range(1, len(run["nmi_per_epoch"]))]) + " |",
        "|---|" + "---|" * len(run["nmi_per_epoch"]),
        "| NMI(clusters, labels) | " + " | ".join(f"{v:.3f}" for v in run["nmi_per_epoch"]) + " |",
        "| NMI(clusters, previous) | - | " + " | ".join(f"{v:.3f}" for v in run["nmi_previous_per_epoch"]) + " |",
        "",
        "| features | kNN top-1 (%) |",
        "|---|---|",
        f"| random init | {run['knn_random_init_percent']:.1f} |",
        f"| DeepCluster | {run['knn_percent']:.1f} |",
        "",
        "Published (ImageNet, not this budget or data):",
        "",
        *[f"- {text}" for text in PAPER.values()],
        "",
        "Claims (NMI: the difference against 2 s.e. of a paired bootstrap over the training images; kNN: against "
        "2 binomial s.e.):",
        "",
        *common.claim_lines(run["claims"]),
    ]
    text = "\n".join(lines) + "\n"
    return common.write_results(output, "deepcluster", dataset, text)


def main(argv=None):
    parser = common.ArgumentParser(__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="mnist", choices=sorted(DATASETS))
    parser.add_argument("--train-images", type=int, default=2000, help="a class-balanced subset (0: all)")
    parser.add_argument("--test-images", type=int, default=500, help="a class-balanced subset (0: all)")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--clusters", type=int, default=50)
    parser.add_argument("--backbone", default="resnet8", choices=sorted(BACKBONES))
    parser.add_argument("--report-only", action="store_true", help="rewrite the table from the metrics JSON")
    args = parser.parse_args(argv)
    if args.report_only:
        return common.report_only(args, report, "deepcluster")
    common.require_dataset(args.dataset, "--dataset digits")
    common.select_backend(args.backend)
    import keras

    data = load_data(args.dataset, args.train_images, args.test_images, args.seed)
    args.batch_size = min(args.batch_size, len(data[0]))
    if args.clusters > len(data[0]):
        raise common.UsageError(f"--clusters {args.clusters}: at most the {len(data[0])} training images")
    budget = {"backend": keras.backend.backend(), "dataset": args.dataset, "backbone": args.backbone,
              "train_images": int(len(data[0])), "test_images": int(len(data[2])), "epochs": args.epochs,
              "batch_size": args.batch_size, "clusters": args.clusters, "seed": args.seed,
              "device": common.device_description()}
    run = train_and_evaluate(data, args, args.backbone)
    metrics = {"budget": budget, "paper": PAPER, "run": run, "claims": run["claims"]}
    return common.save_and_report(args, "deepcluster", metrics, report)


def paper_vs_ours(metrics):
    """NMI(clusters, labels) first -> last and the kNN against random init, beside Fig. 2a and Table 1."""
    run, dataset = metrics["run"], metrics["budget"]["dataset"]
    return [
        ("NMI(clusters, labels), first -> last clustering", "rises to about 0.4-0.45 (ImageNet, Fig. 2a)",
         f"{run['nmi_per_epoch'][0]:.3f} -> {run['nmi_per_epoch'][-1]:.3f} ({dataset})"),
        ("NMI between consecutive clusterings, last", "about 0.8 (Fig. 2b)",
         f"{run['nmi_previous_per_epoch'][-1]:.3f}" if run["nmi_previous_per_epoch"] else "-"),
        ("kNN on h: random init -> DeepCluster (%)", "ImageNet linear conv4 39.8 (Table 1)",
         f"{run['knn_random_init_percent']:.1f} -> {run['knn_percent']:.1f} ({dataset})"),
    ]
