"""The DeepCluster trainer (Caron et al. 2018) with tiny backbones: the sampler, the re-clustering, resume."""

import numpy as np
import pytest

import keras

from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds
from keras_paperzoo.clustering import normalized_mutual_info
from keras_paperzoo.models import DeepCluster
from keras_paperzoo.models.deepcluster import ClusterBalancedBatches, Reclustering, uniform_cluster_sample
from keras_paperzoo.training.optimizers import ScheduledMomentumSGD
from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model
from tests.model_tests import random_images as _images
from tests.model_tests import seeded  # noqa: F401 (autouse: the same initial weights in every test)
from tests.model_tests import tiny_backbone
from tests.model_tests import to_numpy as _np


def _backbone():
    return tiny_backbone(filters=8, batch_norm=False)  # (B, 3, 3, 8): h is 8-d


def _model(num_data=16, **kwargs):
    args = dict(num_clusters=4, augmentation=None, seed=0)
    args.update(kwargs)
    return DeepCluster(_backbone(), num_data, **args)


def test_uniform_sampler_draws_every_non_empty_cluster_equally_often():
    # Clusters of 50, 5, 1 and 24 images (cluster 3 empty): 80 draws, 20 from each non-empty one.
    assignments = np.repeat([0, 1, 2, 4], [50, 5, 1, 24])
    rows = uniform_cluster_sample(assignments, 80, np.random.default_rng(0))
    assert rows.shape == (80,)
    np.testing.assert_array_equal(np.bincount(assignments[rows], minlength=5), [20, 20, 20, 0, 20])
    assert len(np.unique(rows[assignments[rows] == 0])) == 20  # without replacement where the cluster is large
    assert len(np.unique(rows[assignments[rows] == 2])) == 1  # with replacement where it is not
    # 81 draws: one cluster gives one more, never two.
    counts = np.bincount(assignments[uniform_cluster_sample(assignments, 81, np.random.default_rng(1))])
    assert sorted(counts[counts > 0]) == [20, 20, 20, 21]


def test_balanced_batches_follow_the_assignments_and_repeat_from_seed_and_epoch():
    images = _images(12)
    batches = ClusterBalancedBatches(images, batch_size=4, seed=3)
    batches.set_epoch(2)
    batches.set_assignments(np.repeat([0, 1], [10, 2]))
    seen = np.concatenate([batches[i]["index"] for i in range(len(batches))])
    np.testing.assert_array_equal(np.bincount(np.repeat([0, 1], [10, 2])[seen]), [6, 6])
    np.testing.assert_array_equal(batches[0]["images"], images[batches[0]["index"]])
    again = ClusterBalancedBatches(images, batch_size=4, seed=3)
    again.set_epoch(2)
    again.set_assignments(np.repeat([0, 1], [10, 2]))
    np.testing.assert_array_equal(again[1]["index"], batches[1]["index"])


class _Watch(keras.callbacks.Callback):
    """After `Reclustering` at each epoch's start: the classifier as it was just reset."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def on_epoch_begin(self, epoch, logs=None):
        m = self.model
        self.seen.append((epoch, _np(m.classifier.kernel), _np(m.classifier.bias), m.assignments()))


def test_fit_reclusters_resets_the_classifier_logs_nmi_and_saves(tmp_path):
    images, labels = _images(16, seed=1), np.arange(16) % 4
    model = _model(pca_dim=4, kmeans_iterations=5, kmeans_init="k-means++", num_classes=4)
    model.compile()
    assert isinstance(model.optimizer, ScheduledMomentumSGD)
    assert float(_np(model.optimizer.learning_rate)) == pytest.approx(0.05) and model.optimizer.l2 == 1e-5
    watch = _Watch()
    history = check_fit(model, images, labels, batch_size=4, epochs=2, callbacks=[Reclustering(), watch])
    logs = history.history
    assert set(logs) == {"loss", "pseudo_label_accuracy", "probe_accuracy", "kmeans_inertia", "clusters_used",
                         "nmi_labels", "nmi_previous"}
    assert len(logs["nmi_labels"]) == 2 and len(logs["nmi_previous"]) == 1  # no previous clustering at epoch 0
    assert logs["clusters_used"] == [4.0, 4.0]
    for epoch, kernel, bias, assignments in watch.seen:  # re-initialised from (seed, epoch) before each epoch
        expected = np.random.default_rng([0, epoch, 1]).normal(0.0, 0.01, size=kernel.shape)
        np.testing.assert_allclose(kernel, expected, rtol=1e-6)
        np.testing.assert_array_equal(bias, 0.0)
        assert normalized_mutual_info(assignments, labels) == pytest.approx(logs["nmi_labels"][epoch])
    assert not np.allclose(_np(model.classifier.kernel), watch.seen[-1][1])  # then trained

    # The config and a .keras file (safe mode) keep the arguments, the outputs and the pseudo-labels.
    clone = check_config_roundtrip(model)
    assert (clone.num_data, clone.num_clusters, clone.pca_dim, clone.kmeans_iterations, clone.kmeans_init,
            clone.num_classes) == (16, 4, 4, 5, "k-means++", 4)
    loaded = check_saved_model(model, _images(4, seed=3), tmp_path)
    np.testing.assert_array_equal(loaded.assignments(), model.assignments())

    # The optimizer's slots of the classifier are zeroed with it, the backbone's kept.
    model.reset_classifier(5)
    slots = {v.name: _np(v) for v in model.optimizer.variables if "momentum" in v.name}
    assert all(not value.any() for name, value in slots.items() if "top_layer" in name)
    assert any(value.any() for name, value in slots.items() if "conv" in name)


def test_exact_resume_of_weights_assignments_and_sampling(tmp_path):
    """2 epochs straight = 1 epoch, save, load, 1 more: weights, optimizer, pseudo-labels, logged NMI."""
    images, labels = _images(16, seed=6), np.arange(16) % 4

    def fit(model, epochs, initial_epoch=0):
        return model.fit(images, labels, batch_size=4, epochs=epochs, initial_epoch=initial_epoch, verbose=0,
                         callbacks=[EpochSeeds(7)])

    model = _model(augmentation=keras.layers.GaussianNoise(0.1, seed=2))
    model.compile()
    model.optimizer.build(model.trainable_variables)
    start = [_np(v) for v in model.weights + model.optimizer.variables]
    straight_logs = fit(model, 2).history
    straight = [_np(v) for v in model.weights + model.optimizer.variables]
    for v, value in zip(model.weights + model.optimizer.variables, start):
        v.assign(value)
    fit(model, 1)
    model.save(tmp_path / "epoch1.keras")
    resumed = keras.saving.load_model(tmp_path / "epoch1.keras", safe_mode=True)
    resumed_logs = fit(resumed, 2, initial_epoch=1).history
    for a, b in zip(resumed.weights + resumed.optimizer.variables, straight):
        np.testing.assert_allclose(_np(a), b, rtol=1e-5, atol=1e-6, err_msg=a.path)
    assert resumed_logs["nmi_previous"] == pytest.approx(straight_logs["nmi_previous"])


def test_bad_arguments_get_one_message():
    with pytest.raises(ValueError, match=r"num_clusters=20 clusters of num_data=16 images"):
        _model(num_clusters=20)
    with pytest.raises(ValueError, match=r"kmeans_init must be 'random' or 'k-means\+\+'; got kmeans_init='kmeans'"):
        _model(kmeans_init="kmeans")
    with pytest.raises(ValueError, match=r"num_clusters \(k\) must be an int >= 2; got num_clusters=1"):
        _model(num_clusters=1)
    with pytest.raises(ValueError, match=r"pca_dim must be an int >= 1; got pca_dim=0"):
        _model(pca_dim=0)
    model = _model()
    model.compile()
    with pytest.raises(ValueError, match=r"num_data=16 training images .*fit got 12"):
        model.fit(_images(12), batch_size=4, epochs=1, verbose=0)
    with pytest.raises(ValueError, match=r"needs them in memory.*got int"):
        model.fit(3, epochs=1, verbose=0)
