"""MultiViewAugmentation (data/views/multiview.py): several views of each image from per-view pipelines.

The papers' two-view recipes are tested beside their models (tests/models/simclr/test_simclr_augmentation.py,
tests/models/byol/test_byol_augmentation.py): seeding, traced train steps, tf.data.
"""

import re

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.data.views import MultiViewAugmentation, RandomResizedCrop, ViewAugmentation
from tests.data.views.view_checks import draw, random_images, to_numpy
from tests.model_checks import check_config_roundtrip, check_saved_model


def _multi_size(seed=0):
    """Two pipelines: 16 x 16 views drawn twice, 8 x 8 crops drawn three times (multi-crop's shape).

    Any layer can be a pipeline; the small views are bare crops (fewer shapes for JAX to compile).
    """
    large = ViewAugmentation(16, crop_scale=(0.3, 1.0), blur_probability=0.0, name="large")
    small = RandomResizedCrop(8, 8, scale=(0.05, 0.3), name="small")
    return MultiViewAugmentation([large, small], views=[2, 3], seed=seed)


def test_views_have_their_pipelines_sizes_in_training_and_inference():
    x = random_images(8)
    augment = _multi_size()
    views = draw(augment, x)
    assert [v.shape for v in views] == [(8, 16, 16, 3)] * 2 + [(8, 8, 8, 3)] * 3
    assert augment.num_views == 5 and augment.view_pipeline == (0, 0, 1, 1, 1)
    assert augment.compute_output_shape((None, 16, 16, 3)) == [(None, 16, 16, 3)] * 2 + [(None, 8, 8, 3)] * 3
    symbolic = augment(keras.Input((16, 16, 3)))
    assert [tuple(v.shape) for v in symbolic] == [(None, 16, 16, 3)] * 2 + [(None, 8, 8, 3)] * 3
    # Inference: the same list, each view its pipeline's deterministic path (resize, no randomness).
    inference = draw(augment, x, training=False)
    assert [v.shape for v in inference] == [v.shape for v in views]
    for view in inference[:2]:
        np.testing.assert_array_equal(view, x)
    resized = to_numpy(ops.image.resize(x, (8, 8), interpolation="bilinear"))
    for view in inference[2:]:
        np.testing.assert_allclose(view, resized, atol=1e-5)
    # Training: every view is its own draw.
    for a in range(5):
        for b in range(a + 1, 5):
            if views[a].shape == views[b].shape:
                assert np.abs(views[a] - views[b]).mean() > 0.01


def _in_model(augment, size=16):
    inputs = keras.Input((size, size, 3))
    return keras.Model(inputs, augment(inputs))


def test_config_roundtrip_and_saved_model(tmp_path):
    x = random_images(8)
    multi = check_config_roundtrip(_multi_size(seed=1))
    assert multi.views == [2, 3] and multi.view_pipeline == (0, 0, 1, 1, 1)
    model = _in_model(_multi_size(seed=1))

    def flat(m, images):
        return ops.concatenate([ops.reshape(v, (len(images), -1)) for v in m(images, training=False)], axis=1)

    check_saved_model(model, x, tmp_path, outputs_of=flat)  # saves to tmp_path / "model.keras"
    loaded = keras.saving.load_model(tmp_path / "model.keras", safe_mode=True)
    for a, b in zip(model(x, training=True), loaded(x, training=True)):  # and redraw the same training views
        np.testing.assert_array_equal(to_numpy(a), to_numpy(b))


def test_bad_arguments_name_the_value():
    view = ViewAugmentation(16)
    cases = [
        (lambda: MultiViewAugmentation(view, views=1), "at least 2 views; got views=1"),
        (lambda: MultiViewAugmentation([view]), "at least 2 views; got views=None"),
        (lambda: MultiViewAugmentation([]), "view_augmentations is empty; got []"),
        (lambda: MultiViewAugmentation([view, view]), "view_augmentations[0] and [1] are the same layer"),
        (lambda: MultiViewAugmentation([view, "crop"]), "view_augmentations[1] must be a Keras layer; got str"),
        (lambda: MultiViewAugmentation([view, ViewAugmentation(8)], views=3), "got 2 pipelines"),
        (lambda: MultiViewAugmentation(view, views=[2, 6]), "1 pipelines, got views=[2, 6]"),
        (lambda: MultiViewAugmentation(view, views=2, seed=-1), "seed must be an int >= 0 or None; got -1"),
    ]
    for make, message in cases:
        with pytest.raises(ValueError, match=re.escape(message)):
            make()
