"""Clustering on `keras.ops`: k-means, PCA whitening, and the NMI between two clusterings.

One implementation for every paper that clusters: DeepCluster's pseudo-labels (k-means
on PCA-whitened, L2-normalised features every epoch), iGPT's 9-bit colour palette
(k-means on RGB pixels) and BEiT-style discrete tokens. It lives beside `layers/`,
`losses/` and `training/` because it is none of them: a fitting procedure run eagerly
between steps (not a layer, not in a traced step), used by models and by data
preparation alike.

    from keras_paperzoo.clustering import kmeans
    result = kmeans(points, 10, seed=0)   # .centroids (k, D), .assignments (N,), .inertia
"""

from keras_paperzoo.clustering.kmeans import KMeansResult, kmeans
from keras_paperzoo.clustering.nmi import normalized_mutual_info
from keras_paperzoo.clustering.pca import pca_whiten

__all__ = ["KMeansResult", "kmeans", "normalized_mutual_info", "pca_whiten"]
