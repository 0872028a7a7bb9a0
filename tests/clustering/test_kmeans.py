import numpy as np
import pytest

from keras_paperzoo.clustering import kmeans, normalized_mutual_info, pca_whiten


def _blobs(n=600, d=8, centres=12, seed=0):
    rng = np.random.default_rng(seed)
    means = rng.normal(scale=4.0, size=(centres, d))
    return (means[rng.integers(centres, size=n)] + rng.normal(size=(n, d))).astype("float32")


@pytest.mark.parametrize("init", ["k-means++", "random"])
def test_inertia_matches_scikit_learn(init):
    sklearn_cluster = pytest.importorskip("sklearn.cluster")
    points = _blobs()
    ours = kmeans(points, 12, init=init, seed=0)
    theirs = sklearn_cluster.KMeans(12, init=init, n_init=1, random_state=0).fit(points)
    # One run each from different random draws: within a few percent on the same data.
    assert ours.inertia == pytest.approx(theirs.inertia_, rel=0.05)
    # The returned inertia is what the centroids and assignments give.
    recomputed = np.sum((points - ours.centroids[ours.assignments]) ** 2)
    assert ours.inertia == pytest.approx(float(recomputed), rel=1e-4)
    assert ours.centroids.shape == (12, 8) and ours.assignments.shape == (600,)
    assert set(np.unique(ours.assignments)) == set(range(12))


def test_empty_clusters_are_reseeded():
    # Five locations, two of them holding nearly every point: random seeding picks several copies of one
    # point, all but one of whose clusters empty out; re-seeding moves them to the far, lonely points.
    locations = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0], [10.0, 10.0], [20.0, 20.0]], "float32")
    points = np.repeat(locations, [40, 40, 1, 1, 1], axis=0)
    result = kmeans(points, 5, init="random", seed=0)
    assert result.reseeded > 0
    np.testing.assert_array_equal(np.sort(np.bincount(result.assignments, minlength=5)), [1, 1, 1, 40, 40])
    assert result.inertia == pytest.approx(0.0, abs=1e-6)  # the exact solution, found after the re-seeding


def test_k_above_the_number_of_points_is_refused():
    with pytest.raises(ValueError, match=r"k=11 clusters from N=10 points"):
        kmeans(np.zeros((10, 2), "float32"), 11)
    with pytest.raises(ValueError, match=r"init=.*'kmeans'"):
        kmeans(np.zeros((10, 2), "float32"), 2, init="kmeans")


def test_same_seed_same_clustering_and_reference_values():
    points = _blobs(n=300, d=4, centres=5, seed=2)
    a, b = kmeans(points, 5, seed=7), kmeans(points, 5, seed=7)
    np.testing.assert_array_equal(a.assignments, b.assignments)
    # The same numbers on every backend (the draws are NumPy's; the arithmetic is float32).
    sklearn_cluster = pytest.importorskip("sklearn.cluster")
    reference = sklearn_cluster.KMeans(5, init=a.centroids, n_init=1).fit(points)
    assert normalized_mutual_info(a.assignments, reference.labels_) == pytest.approx(1.0)
    assert a.inertia == pytest.approx(reference.inertia_, rel=1e-3)


def test_pca_whiten_reduces_whitens_and_normalises():
    rng = np.random.default_rng(0)
    features = (rng.normal(size=(400, 6)) * np.array([10, 5, 3, 1, 0.5, 0.1])).astype("float32")
    raw = pca_whiten(features, 3, normalize=False)
    assert raw.shape == (400, 3)
    np.testing.assert_allclose(np.cov(raw.T), np.eye(3), atol=1e-3)  # whitened
    unit = pca_whiten(features, 256)  # fewer dims than 256: all 6 kept
    assert unit.shape == (400, 6)
    np.testing.assert_allclose(np.linalg.norm(unit, axis=1), 1.0, atol=1e-5)
    # A direction with no variance (a copied column) is dropped, not blown up to unit variance.
    assert pca_whiten(np.concatenate([features, features[:, :1]], axis=1), 256).shape == (400, 6)
    # The first component is the largest-variance axis (feature 0), sign fixed.
    assert abs(np.corrcoef(raw[:, 0], features[:, 0])[0, 1]) > 0.99


def test_nmi_matches_scikit_learn_geometric():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 5, 200), rng.integers(0, 7, 200)
    b[:100] = a[:100]
    expected = metrics.normalized_mutual_info_score(a, b, average_method="geometric")
    assert normalized_mutual_info(a, b) == pytest.approx(expected, rel=1e-9)
    assert normalized_mutual_info([0, 0, 1, 1], [3, 3, 9, 9]) == pytest.approx(1.0)
