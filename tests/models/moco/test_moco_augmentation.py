"""MoCo's augmentation (models/moco/moco_augmentation.py): v1's and v2's ("aug+") one-view pipelines."""

import numpy as np
import pytest

from keras import ops

from keras_paperzoo.models.moco import MoCoAugmentation
from tests.model_checks import check_config_roundtrip


def _images(n=8, size=16, channels=3, seed=0):
    return np.random.default_rng(seed).random((n, size, size, channels)).astype("float32")


def _np(x):
    return np.asarray(ops.convert_to_numpy(x))


@pytest.mark.parametrize("version", [1, 2])
def test_two_views_differ_from_the_input_and_from_each_other(version):
    x = _images()
    augment = MoCoAugmentation(version=version, image_size=16, seed=1)
    view_q, view_k = _np(augment(x)), _np(augment(x))
    assert view_q.shape == view_k.shape == x.shape
    for i in range(len(x)):  # every image, not only on average
        assert np.abs(view_q[i] - x[i]).mean() > 0.01
        assert np.abs(view_k[i] - x[i]).mean() > 0.01
        assert np.abs(view_q[i] - view_k[i]).mean() > 0.01
    assert view_q.min() >= 0.0 and view_q.max() <= 1.0
    # Inference: no randomness, only resizing (here none) and normalisation.
    np.testing.assert_array_equal(_np(augment(x, training=False)), x)
    clone = check_config_roundtrip(augment)
    assert clone.version == version and clone.image_size == (16, 16)
    assert (clone.blur is None) == (version == 1)


@pytest.mark.needs_tensorflow
def test_views_in_tf_data_on_any_backend():
    import tensorflow as tf

    augment = MoCoAugmentation(version=2, image_size=12, mean=[0.5] * 3, std=[0.25] * 3, seed=0)
    dataset = tf.data.Dataset.from_tensor_slices(_images(6)).batch(3).map(lambda x: ((augment(x), augment(x)),))
    (view_q, view_k), = next(iter(dataset))
    assert tuple(view_q.shape) == (3, 12, 12, 3)
    assert float(tf.reduce_mean(tf.abs(view_q - view_k))) > 0.01
    assert float(tf.reduce_min(view_q)) >= -2.0 - 1e-6 and float(tf.reduce_max(view_q)) <= 2.0 + 1e-6


def test_bad_arguments_name_the_value():
    with pytest.raises(ValueError, match="version must be 1 or 2; got 3"):
        MoCoAugmentation(version=3)
    with pytest.raises(ValueError, match="mean and std go together"):
        MoCoAugmentation(mean=[0.5, 0.5, 0.5])
