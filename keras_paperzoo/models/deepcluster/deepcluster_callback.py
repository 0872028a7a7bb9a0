"""`Reclustering`: DeepCluster's outer loop as a Keras callback (Caron et al. 2018, Sec. 3.2-3.4, Fig. 1).

At the start of every epoch, before its first step:

1. features of every training image from the current network (inference mode, the
   inference view: no augmentation) - `DeepCluster.cluster_features`;
2. PCA to `pca_dim` (256) with whitening, L2 normalisation, k-means with k =
   `num_clusters` (`DeepCluster.cluster`): the pseudo-labels, written into the
   model's `pseudo_labels` variable;
3. the classifier on top re-initialised (and its optimizer state zeroed): the
   cluster numbering of this epoch has nothing to do with the last one's;
4. the epoch's batches drawn uniformly over the non-empty clusters
   (`ClusterBalancedBatches`).

Logged at the epoch's end (the paper's Figure 2): `nmi_previous`, the NMI between this
epoch's assignments and the last epoch's (Fig. 2b; absent at the first clustering),
`nmi_labels`, against the true labels when the data has them (Fig. 2a),
`kmeans_inertia` and `clusters_used` (the non-empty clusters).

Resume: the assignments are in the model's variables (saved by `.keras` files and by
`paperzoo train`'s checkpoints), the k-means seed and the classifier's fresh weights are
drawn from (seed, epoch), and the features come from the restored network, so a resumed
run clusters as the uninterrupted one did.
"""

import numpy as np

import keras

from keras_paperzoo.clustering import normalized_mutual_info


class Reclustering(keras.callbacks.Callback):
    """Cluster the training set and reset the classifier at each epoch's start (see the module docstring).

    `DeepCluster.fit` adds one (and binds it to its batches) when the callbacks hold
    none; pass one to set its arguments.

    Args:
        labels: optional (N,) true labels of the training images, in their order, for
            `nmi_labels` (taken from fit's `y` when not given), or a callable returning
            them, called when training begins (a recipe's data, known after `--resume`
            has restored the run's arguments).
        batch_size: images per feature-extraction batch.
    """

    def __init__(self, labels=None, batch_size=256):
        super().__init__()
        self.load_labels = labels if callable(labels) else None
        self.labels = None if labels is None or callable(labels) else np.asarray(labels).reshape(-1)
        self.batch_size = int(batch_size)
        self.batches = None
        self.logs = {}

    def bind(self, batches):
        self.batches = batches
        if self.labels is None and batches.y is not None and np.asarray(batches.y).ndim == 1:
            self.labels = np.asarray(batches.y)

    def on_train_begin(self, logs=None):
        if self.load_labels is not None:
            labels = self.load_labels()
            self.labels = None if labels is None else np.asarray(labels).reshape(-1)

    def on_epoch_begin(self, epoch, logs=None):
        model = self.model
        if self.batches is None:
            raise ValueError("Reclustering needs DeepCluster.fit's batches: call fit on the DeepCluster model.")
        previous = model.assignments()  # None before the first clustering
        features = model.cluster_features(self.batches.x, batch_size=self.batch_size)  # (N, D)
        result = model.cluster(features, epoch)
        model.set_pseudo_labels(result.assignments)
        model.reset_classifier(epoch)
        self.batches.set_epoch(epoch)
        self.batches.set_assignments(result.assignments)
        self.logs = {"kmeans_inertia": result.inertia,
                     "clusters_used": float(len(np.unique(result.assignments)))}
        if previous is not None:
            self.logs["nmi_previous"] = normalized_mutual_info(previous, result.assignments)
        if self.labels is not None:
            self.logs["nmi_labels"] = normalized_mutual_info(self.labels, result.assignments)

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs.update(self.logs)
