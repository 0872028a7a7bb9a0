"""DeepCluster's sampler: each epoch's training images drawn uniformly over the pseudo-label clusters.

Caron et al. 2018, Sec. 3.4 ("Avoiding trivial solutions", trivial parametrization): with
one huge cluster the network would predict it for every input; the authors "sample images
based on a uniform distribution over the classes, or pseudo-labels" (their
`UnifLabelSampler`: N draws per epoch, the same number from every non-empty cluster,
without replacement where the cluster is large enough, shuffled).

`uniform_cluster_sample` is that draw; `ClusterBalancedBatches` serves it as an epoch of
batches x = {"images", "index"} (the index reads each image's pseudo-label in the model),
drawn from (seed, epoch) and the epoch's assignments, so a resumed run repeats it.
"""

import numpy as np

import keras
from keras import ops

from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
from keras_paperzoo.data.indexed import IMAGES


def uniform_cluster_sample(assignments, num_samples, rng):
    """`num_samples` row indices, the same number (up to one) from every non-empty cluster, shuffled.

    Each of the C non-empty clusters gives floor(num_samples / C) rows, and
    num_samples mod C clusters drawn at random one more; a cluster gives distinct rows
    when it holds enough, else draws with replacement (the authors' rule).

    Args:
        assignments: (N,) int cluster of each training image.
        num_samples: rows to draw (an int >= 1; the authors': N).
        rng: a `numpy.random.Generator`.
    """
    assignments = np.asarray(assignments).reshape(-1)
    clusters = np.unique(assignments)  # the non-empty ones
    count = len(clusters)
    per_cluster = np.full(count, num_samples // count)
    per_cluster[rng.choice(count, size=num_samples % count, replace=False)] += 1
    order = np.argsort(assignments, kind="stable")  # rows grouped by cluster
    starts = np.searchsorted(assignments[order], clusters)
    ends = np.append(starts[1:], len(assignments))
    rows = [rng.choice(order[start:end], size=size, replace=bool(end - start < size))
            for start, end, size in zip(starts, ends, per_cluster)]
    return rng.permutation(np.concatenate(rows)).astype("int64")  # (num_samples,)


class ClusterBalancedBatches(EpochShuffledBatches):
    """Batches of {"images", "index"} drawn uniformly over the clusters of the epoch's pseudo-labels.

    An `EpochShuffledBatches` whose epoch order is `uniform_cluster_sample(assignments,
    N, rng(seed, epoch))`; before any clustering (`set_assignments`), a plain
    permutation. `DeepCluster.fit` builds one from the training images, and its
    `Reclustering` callback gives it each epoch's assignments.

    Args:
        x: (N, H, W, C) images. y: optional (N,) labels (the online probe's).
        batch_size, seed, steps_per_epoch, augment: as `EpochShuffledBatches`.
    """

    def __init__(self, x, y=None, batch_size=32, seed=0, steps_per_epoch=None, augment=None, **kwargs):
        super().__init__(x, y, batch_size=batch_size, drop_remainder=True, seed=seed,
                         steps_per_epoch=steps_per_epoch, augment=augment, with_index=True, **kwargs)
        self.assignments = None

    def set_assignments(self, assignments):
        assignments = np.asarray(assignments).reshape(-1)
        if len(assignments) != len(self.x):
            raise ValueError(f"ClusterBalancedBatches holds {len(self.x)} images; got {len(assignments)} assignments.")
        self.assignments = assignments
        self._order = None

    def _permutation(self):
        if self._order is None:
            rng = np.random.default_rng([self.seed, self.epoch])
            if self.assignments is None:
                self._order = rng.permutation(len(self.x))
            else:
                self._order = uniform_cluster_sample(self.assignments, len(self.x), rng)
        return self._order


def fit_batches(x, y=None, batch_size=None, seed=0):
    """The `ClusterBalancedBatches` that `DeepCluster.fit` serves from the data it got (see its `x`).

    Every training image must be in memory, since all are clustered every epoch: arrays
    (or {"images", "index"}), `EpochShuffledBatches` (its settings kept), or finite
    batches read once (`read_all`). `batch_size`: for arrays and read batches (32, or
    the data's own first batch, when None); `seed`: the sampler's.
    """
    if isinstance(x, ClusterBalancedBatches):
        batches = x
    elif isinstance(x, EpochShuffledBatches):
        batches = ClusterBalancedBatches(x.x, x.y, batch_size=x.batch_size, seed=x.seed,
                                         steps_per_epoch=x.steps_per_epoch, augment=x.augment)
    elif isinstance(x, dict) and IMAGES in x or hasattr(x, "shape"):
        images = x[IMAGES] if isinstance(x, dict) else x
        labels = None if y is None else np.asarray(ops.convert_to_numpy(y))
        batches = ClusterBalancedBatches(np.asarray(ops.convert_to_numpy(images)), labels,
                                         batch_size=batch_size or 32, seed=seed)
    else:
        images, labels, data_batch_size = read_all(x)
        batches = ClusterBalancedBatches(images, labels, batch_size=batch_size or data_batch_size, seed=seed)
    return batches


def read_all(data, owner="DeepCluster"):
    """(images (N, ...), labels (N,) or None, the first batch's size) from finite batches of x, (x, y) or
    (x, y, weights)."""
    if isinstance(data, keras.utils.PyDataset):
        stream = (data[i] for i in range(len(data)))
    elif hasattr(data, "cardinality"):  # tf.data
        if int(data.cardinality()) < 0:
            raise ValueError(f"{owner} reads its training data into memory, so a tf.data.Dataset must be finite "
                             f"with a known length; got cardinality {int(data.cardinality())}.")
        stream = data.as_numpy_iterator()
    elif hasattr(data, "__iter__") and not isinstance(data, (str, bytes, dict)):
        stream = iter(data)
    else:
        raise ValueError(
            f"{owner} clusters every training image each epoch, so fit needs them in memory: images "
            f"(N, H, W, C), with_index(images), EpochShuffledBatches, or finite batches; got {type(data).__name__}."
        )
    images, labels, index = [], [], []
    for batch in stream:
        x, y = (batch[0], batch[1] if len(batch) > 1 else None) if isinstance(batch, (tuple, list)) else (batch, None)
        if isinstance(x, dict) and IMAGES in x:
            if "index" in x:
                index.append(np.asarray(ops.convert_to_numpy(x["index"])).reshape(-1))
            x = x[IMAGES]
        images.append(np.asarray(ops.convert_to_numpy(x)))
        if y is not None:
            labels.append(np.asarray(ops.convert_to_numpy(y)))
    if not images:
        raise ValueError(f"{owner}.fit got no training batches.")
    first = len(images[0])
    images = np.concatenate(images)
    labels = np.concatenate(labels) if labels else None
    if index:
        order = np.argsort(np.concatenate(index), kind="stable")
        images = images[order]
        labels = None if labels is None else labels[order]
    return images, labels, first
