"""PCA whitening and L2 normalisation of features: DeepCluster's preprocessing before k-means.

Caron et al. 2018, Sec. 4 ("Implementation details"): the features are "PCA-reduced to
256 dimensions, whitened and l2-normalized" before k-means (the authors use faiss's
`PCAMatrix(d, 256, eigen_power=-0.5)`: projection on the top principal components,
each divided by the square root of its eigenvalue).

Example:

```python
import numpy as np
from keras_paperzoo.clustering import pca_whiten
features = np.random.default_rng(0).normal(size=(500, 64)).astype("float32")
pca_whiten(features, 16).shape   # (500, 16), unit rows
```
"""

import numbers

import numpy as np

from keras import ops

EPSILON = 1e-5  # faiss adds none; this keeps a zero-variance direction finite
RANK_TOLERANCE = 1e-6  # components below this fraction of the largest eigenvalue are dropped


def pca_whiten(features, dim=256, normalize=True, epsilon=EPSILON):
    """Project (N, D) features on their top `min(dim, D, N)` principal components, whitened, then L2-normalised.

    Returns a (N, d) float32 NumPy array, d = min(dim, D, N - 1, rank): when the
    features have fewer than `dim` dimensions (or points) all of them are kept,
    whitened; directions with (numerically) no variance, eigenvalues below 1e-6 of
    the largest (N <= D, dead ReLUs), are dropped, since whitening would blow their
    rounding noise up to unit variance and let it decide the clusters.

    Args:
        features: (N, D) array or tensor.
        dim: components kept (256: DeepCluster's), an int >= 1.
        normalize: L2-normalise each row afterwards (DeepCluster's).
        epsilon: added to each eigenvalue before its inverse square root.
    """
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim < 1:
        raise ValueError(f"pca_whiten dim must be an int >= 1; got dim={dim!r}.")
    x = ops.cast(ops.convert_to_tensor(features), "float32")
    if len(x.shape) != 2 or int(x.shape[0]) < 2:
        raise ValueError(f"pca_whiten needs (N, D) features with N >= 2; got shape {tuple(x.shape)}.")
    n, d = int(x.shape[0]), int(x.shape[1])
    kept = min(int(dim), d, n)
    x = x - ops.mean(x, axis=0, keepdims=True)  # (N, D), centred
    covariance = ops.matmul(ops.transpose(x), x) / float(n - 1)  # (D, D)
    eigenvalues, eigenvectors = ops.eigh(covariance)  # ascending
    values = np.asarray(ops.convert_to_numpy(eigenvalues), "float64")
    kept = max(1, min(kept, n - 1, int(np.sum(values > RANK_TOLERANCE * max(values.max(), 0.0)))))
    order = np.argsort(-values, kind="stable")[:kept]
    order = ops.convert_to_tensor(order.astype("int32"))
    components = ops.take(eigenvectors, order, axis=1)  # (D, d)
    scale = ops.rsqrt(ops.maximum(ops.take(eigenvalues, order), 0.0) + epsilon)  # (d,)
    # Fix each component's sign (largest loading positive): eigh's sign differs between backends.
    signs = ops.sign(ops.take_along_axis(components, ops.argmax(ops.abs(components), axis=0)[None, :], axis=0))
    components = components * ops.where(signs == 0, 1.0, signs)
    projected = ops.matmul(x, components) * scale[None, :]  # (N, d), unit variance per component
    if normalize:
        projected = projected / ops.maximum(ops.norm(projected, axis=1, keepdims=True), 1e-12)
    return np.asarray(ops.convert_to_numpy(projected), "float32")
