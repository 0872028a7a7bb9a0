"""k-means on `keras.ops`: Lloyd's iterations from k-means++ (or random) seeds, empty clusters re-seeded.

Lloyd (1982) / Arthur & Vassilvitskii (2007, k-means++). The distances and the centroid
updates run on `keras.ops` (any backend, the accelerator when there is one); the random
draws of the seeding come from a NumPy generator seeded by `seed`, so one seed gives the
same clustering on TensorFlow, JAX and PyTorch. It runs eagerly, between training steps
(DeepCluster re-clusters once per epoch), not inside a traced step.

Choices, as scikit-learn's `KMeans` makes them (its inertia is what the tests compare):
- `init="k-means++"` is the greedy variant: each new centre is the best (lowest
  potential) of 2 + floor(ln k) candidates drawn with probability proportional to the
  squared distance to the nearest centre chosen so far; `init="random"`: k distinct
  points drawn uniformly (faiss's, which the DeepCluster authors used).
- An empty cluster after an assignment step is re-seeded with the point farthest from its
  own centre (the j-th empty cluster with the j-th farthest point), so every one of the k
  clusters keeps a point (faiss splits a large cluster instead; both avoid the empty
  clusters DeepCluster Sec. 3.4 warns of). Unlike scikit-learn, the moved point also stays
  in its old cluster's mean for that iteration (tests/parity/test_deepcluster_kmeans.py).
- Iterations stop when no centre moves by more than `tolerance` x the mean per-feature
  variance of the data (squared), or after `max_iterations`.

Example:

```python
import numpy as np
from keras_paperzoo.clustering import kmeans
points = np.random.default_rng(0).normal(size=(1000, 8)).astype("float32")
result = kmeans(points, 10, seed=0)
result.centroids.shape, result.assignments.shape, result.inertia   # (10, 8), (1000,), float
```
"""

import dataclasses
import math
import numbers

import numpy as np

import keras
from keras import ops

INITS = ("k-means++", "random")


@dataclasses.dataclass
class KMeansResult:
    """What `kmeans` returns.

    Attributes:
        centroids: (k, D) float32 NumPy array.
        assignments: (N,) int32 NumPy array, each point's centroid.
        inertia: the sum over points of the squared distance to their centroid (float).
        iterations: Lloyd iterations run.
        reseeded: how many times an empty cluster was re-seeded.
    """

    centroids: np.ndarray
    assignments: np.ndarray
    inertia: float
    iterations: int
    reseeded: int


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def squared_distances(points, centroids):
    """||x - c||^2 for every point and centre: (N, D), (k, D) -> (N, k), clipped at 0."""
    cross = ops.matmul(points, ops.transpose(centroids))  # (N, k)
    norms = ops.sum(ops.square(points), axis=1, keepdims=True)  # (N, 1)
    centre_norms = ops.sum(ops.square(centroids), axis=1)[None, :]  # (1, k)
    return ops.maximum(norms - 2.0 * cross + centre_norms, 0.0)


def _assign(points, centroids, chunk_size):
    """(assignments (N,) int32, squared distance to the assigned centre (N,)), `chunk_size` points at a time."""
    labels, distances = [], []
    for start in range(0, int(points.shape[0]), chunk_size):
        d = squared_distances(points[start:start + chunk_size], centroids)  # (n, k)
        labels.append(ops.cast(ops.argmin(d, axis=1), "int32"))
        distances.append(ops.min(d, axis=1))
    if len(labels) == 1:
        return labels[0], distances[0]
    return ops.concatenate(labels), ops.concatenate(distances)


def _kmeans_plus_plus(points, k, rng, chunk_size):
    """Greedy k-means++ seeding: (k, D) centres chosen among the points."""
    n = int(points.shape[0])
    trials = 2 + int(math.log(k))
    first = int(rng.integers(n))
    chosen = [first]
    closest = squared_distances(points, points[first:first + 1])[:, 0]  # (N,)
    for _ in range(1, k):
        weights = np.asarray(ops.convert_to_numpy(closest), "float64")
        total = weights.sum()
        if total <= 0:  # every point sits on a centre already: any unused point
            unused = np.setdiff1d(np.arange(n), chosen)
            candidates = rng.choice(unused, size=1)
        else:
            candidates = rng.choice(n, size=trials, p=weights / total)  # (T,) ~ D^2
        d = squared_distances(points, ops.take(points, ops.convert_to_tensor(candidates.astype("int32")), axis=0))
        new_closest = ops.minimum(closest[:, None], d)  # (N, T): each candidate's nearest-centre distances
        potentials = np.asarray(ops.convert_to_numpy(ops.sum(new_closest, axis=0)), "float64")  # (T,)
        pick = int(np.argmin(potentials))
        best, best_closest = int(candidates[pick]), new_closest[:, pick]
        chosen.append(best)
        closest = best_closest
    return ops.take(points, ops.convert_to_tensor(np.asarray(chosen, "int32")), axis=0)


def kmeans(points, k, init="k-means++", max_iterations=100, tolerance=1e-4, seed=None, chunk_size=65536):
    """Cluster `points` (N, D) into `k` groups by Lloyd's k-means; returns a `KMeansResult`.

    Args:
        points: (N, D) array or tensor of floats (computed in float32).
        k: clusters, an int in [1, N].
        init: "k-means++" (greedy, scikit-learn's) or "random" (k distinct points).
        max_iterations: Lloyd iterations at most (int >= 1; DeepCluster's authors run 20).
        tolerance: stop when no centre moves more than `tolerance` x mean variance (>= 0).
        seed: int or None, the seeding's draws (and the re-seeding's order of ties).
        chunk_size: points per distance computation (memory: chunk_size x k floats).
    """
    if not _is_int(k) or k < 1:
        raise ValueError(f"kmeans k must be an int >= 1; got k={k!r}.")
    if init not in INITS:
        raise ValueError(f"kmeans init must be 'k-means++' or 'random'; got init={init!r}.")
    if not _is_int(max_iterations) or max_iterations < 1:
        raise ValueError(f"kmeans max_iterations must be an int >= 1; got max_iterations={max_iterations!r}.")
    if not isinstance(tolerance, numbers.Real) or tolerance < 0:
        raise ValueError(f"kmeans tolerance must be a number >= 0; got tolerance={tolerance!r}.")
    points = ops.cast(ops.convert_to_tensor(points), "float32")
    if len(points.shape) != 2:
        raise ValueError(f"kmeans needs points of shape (N, D); got shape {tuple(points.shape)}.")
    n = int(points.shape[0])
    if k > n:
        raise ValueError(f"kmeans cannot make k={k} clusters from N={n} points: k must be at most the number "
                         "of points.")
    rng = np.random.default_rng(seed)
    if init == "random":
        centroids = ops.take(points, ops.convert_to_tensor(rng.choice(n, size=k, replace=False).astype("int32")),
                             axis=0)
    else:
        centroids = _kmeans_plus_plus(points, k, rng, chunk_size)  # (k, D)
    scale = float(ops.convert_to_numpy(ops.mean(ops.var(points, axis=0))))
    threshold = tolerance * scale
    reseeded = 0
    ones = ops.ones((n,), "float32")
    iteration = 0
    for iteration in range(1, max_iterations + 1):
        assignments, distances = _assign(points, centroids, chunk_size)  # (N,), (N,)
        counts = ops.segment_sum(ones, assignments, num_segments=k)  # (k,)
        sums = ops.segment_sum(points, assignments, num_segments=k)  # (k, D)
        empty = ops.convert_to_numpy(counts) == 0
        new = sums / ops.maximum(counts, 1.0)[:, None]  # (k, D); empty rows re-seeded below
        if empty.any():
            # The j-th empty cluster takes the j-th point farthest from its centre.
            farthest = np.argsort(-np.asarray(ops.convert_to_numpy(distances)), kind="stable")[:int(empty.sum())]
            fill = ops.take(points, ops.convert_to_tensor(farthest.astype("int32")), axis=0)  # (E, D)
            rows = np.flatnonzero(empty)
            new = ops.scatter_update(new, rows[:, None].astype("int32"), fill)
            reseeded += int(empty.sum())
        shift = float(ops.convert_to_numpy(ops.max(ops.sum(ops.square(new - centroids), axis=1))))
        centroids = new
        if shift <= threshold and not empty.any():
            break
    assignments, distances = _assign(points, centroids, chunk_size)  # the final centres' clusters
    return KMeansResult(
        centroids=np.asarray(ops.convert_to_numpy(centroids), "float32"),
        assignments=np.asarray(ops.convert_to_numpy(assignments), "int32"),
        inertia=float(np.sum(np.asarray(ops.convert_to_numpy(distances), "float64"))),
        iterations=iteration,
        reseeded=reseeded,
    )
