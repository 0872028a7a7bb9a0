"""`paperzoo train deepcluster`: DeepCluster pre-training (k-means pseudo-labels, re-clustered every epoch).

`--preset` picks the configuration (`DEEPCLUSTER_PRESETS`): `deepcluster_resnet20_cifar`
(default: CIFAR ResNet-20, k = 100), `deepcluster_resnet50` (the paper's ImageNet
arguments, k = 10,000), `deepcluster_tiny` (tests). Each epoch `DeepCluster.fit`'s
`Reclustering` callback extracts the features of every training image, PCA-whitens them
to 256 (or fewer) dimensions, L2-normalises them, runs k-means, re-initialises the
classifier and draws the epoch's batches uniformly over the clusters (Caron et al.
2018, Sec. 3-4); `DeepCluster.compile()` is the paper's SGD (lr 0.05, momentum 0.9,
weight decay 1e-5, constant).

Logged every epoch, beside the self-supervised recipes' kNN (`knn_acc`) and, after
training, the linear probe: `nmi_labels` (NMI of the clusters against the labels, the
paper's Fig. 2a), `nmi_previous` (against the last epoch's clusters, Fig. 2b),
`kmeans_inertia`, `clusters_used`, `pseudo_label_accuracy`.

`--resume` is exact: the pseudo-labels, weights and optimizer are in the checkpoint, the
k-means seeds, the classifier's fresh weights and the sampler's draws come from (seed,
epoch), and each epoch's clustering is computed from the restored network.
`model.keras` is the trainer; `encoder.keras` (backbone + pooling, h) is what
`paperzoo export` deploys.

CPU-budget choices (named, not the paper's): batch 128, 30 epochs; k cut to at most a
quarter of the training images (`clusters_for`: the paper's 10,000 clusters hold 128
ImageNet images each on average); `digits` upsampled to 16 x 16 and cropped to at least
half their area; no Sobel filter (see `DeepCluster`).
"""

from keras_paperzoo.recipes.self_supervised import Pretraining, load_images, pretrain

DEFAULT_PRESET = "deepcluster_resnet20_cifar"
PAPER = ("DeepCluster (Caron et al. 2018), AlexNet-BN with Sobel on ImageNet, k = 10,000: linear top-1 from conv4 "
         "39.8 % (conv5 36.1 %); NMI against the ImageNet labels rising to about 0.4-0.45 and NMI between "
         "consecutive epochs to about 0.8 over training (Fig. 2; numbers from memory of the paper, to verify)")
DEFAULT_EPOCHS = 30
IMAGES_PER_CLUSTER = 4  # the least average cluster size the recipe allows


def clusters_for(preset_count, num_images):
    """k, cut to at most a quarter of the training images (at least 2)."""
    return max(2, min(preset_count, num_images // IMAGES_PER_CLUSTER))


def pretraining():
    """What this recipe adds to the self-supervised run (`recipes/self_supervised.py`)."""
    from keras_paperzoo.models.deepcluster import DEEPCLUSTER_PRESETS, DeepCluster

    def overrides(preset, batch_size, num_images):
        k = clusters_for(DEEPCLUSTER_PRESETS[preset]["arguments"]["num_clusters"], num_images)
        return {"num_data": num_images, "num_clusters": k}

    def describe(model):
        return {"num_data": model.num_data, "num_clusters": model.num_clusters, "pca_dim": model.pca_dim,
                "kmeans_iterations": model.kmeans_iterations, "kmeans_init": model.kmeans_init}

    return Pretraining("deepcluster", DeepCluster, DEEPCLUSTER_PRESETS, DEFAULT_PRESET, PAPER,
                       default_epochs=DEFAULT_EPOCHS, overrides=overrides, describe=describe, indexed=True)


def run(args, extra_callbacks=()):
    from keras_paperzoo.models.deepcluster import Reclustering

    def labels():  # the run's training labels (None without), loaded once `--resume` has restored the arguments
        return load_images(args.dataset or "digits", args.image_size)[1]

    # nmi_labels against them; the images come from the run's batches.
    return pretrain(args, pretraining(), [Reclustering(labels=labels), *extra_callbacks])
