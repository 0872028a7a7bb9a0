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

from keras_paperzoo.data.epoch_batches import EpochShuffledBatches


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
