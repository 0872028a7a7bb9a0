"""BYOL's views (models/byol/byol_augmentation.py): the asymmetric pair, blur and solarisation per view.

The tests shared with SimCLR's views are in tests/models/simclr/test_simclr_augmentation.py.
"""

import re

import numpy as np
import pytest

import keras

from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds, seed_generator_states
from keras_paperzoo.models.byol import byol_augmentation, byol_views
from tests.data.views.view_checks import N_STAT, SIZE_STAT, binomial_tolerance, draw, random_images, to_numpy
from tests.model_checks import check_config_roundtrip


def test_the_recipe_matches_the_paper():
    byol = byol_views(224, seed=0)
    first, second = byol.view_augmentations
    for v in (first, second):
        assert (v.jitter.brightness, v.jitter.contrast, v.jitter.saturation, v.jitter.hue) == (0.4, 0.4, 0.2, 0.1)
        assert v.jitter.probability == 0.8 and v.grayscale.factor == 0.2 and v.crop.scale == (0.08, 1.0)
        assert v.blur.kernel_size == 22  # 23 taps, as BYOL's int(22.4 / 2) * 2 + 1
    assert first.blur.probability == 1.0 and first.solarize is None
    assert second.blur.probability == 0.1 and second.solarize.probability == 0.2
    assert all(v.blur is None for v in byol_views(32, blur=False).view_augmentations)


def test_byol_solarises_the_second_view_only():
    # A flat gray image at 0.9 stays flat and gray through crop, jitter (brightness in [0.54, 1]), grayscale
    # and blur; it ends below 0.5 only if solarised (x >= 0.5 -> 1 - x).
    x = np.full((N_STAT, SIZE_STAT, SIZE_STAT, 3), 0.9, "float32")
    view_1, view_2 = draw(byol_views(SIZE_STAT, seed=4), x)
    assert view_1.min() >= 0.5 - 1e-4
    fraction = (view_2.reshape(N_STAT, -1).max(axis=1) < 0.5).mean()
    assert abs(fraction - 0.2) < binomial_tolerance(0.2)


def _roughness(views):
    """Mean squared difference of horizontal neighbours over the variance, per image: 2 for white noise."""
    return ((views[:, :, 1:] - views[:, :, :-1]) ** 2).mean(axis=(1, 2, 3)) / views.var(axis=(1, 2, 3))


def test_byol_blur_probability_shows_in_the_roughness_of_white_noise():
    # Jitter, grayscale, flips and solarisation act per pixel (white noise stays white); only the blur
    # correlates neighbours. sigma ~ U[0.1, 2] with 3 taps at 24 px: sigma > ~0.4 (84 %) is measurable.
    x = random_images(N_STAT, SIZE_STAT, seed=5)
    blurred = [
        (_roughness(to_numpy(byol_augmentation(view, SIZE_STAT, crop_scale=(1.0, 1.0), seed=view)(x))) < 1.8).mean()
        for view in (1, 2)
    ]
    assert (_roughness(x) > 1.85).all()
    assert abs(blurred[0] - 0.84) < binomial_tolerance(0.84) + 0.05  # p = 1.0
    assert abs(blurred[1] - 0.084) < binomial_tolerance(0.084) + 0.05  # p = 0.1


def _in_model(augment, size=16):
    inputs = keras.Input((size, size, 3))
    return keras.Model(inputs, augment(inputs))


def test_epoch_seeds_make_the_views_a_function_of_seed_and_epoch():
    x = random_images(8)
    model_a, model_b = _in_model(byol_views(16, seed=1)), _in_model(byol_views(16, seed=2))
    assert len(seed_generator_states(model_a)) == 11  # crop, flip, jitter, grayscale, blur (+ solarise in view 2)
    callback = EpochSeeds(7)

    def views_at(model, epoch):
        callback.set_model(model)
        callback.on_epoch_begin(epoch)
        return [to_numpy(v) for v in model(x, training=True)]

    first = views_at(model_a, 3)
    for a, b in zip(first, views_at(model_b, 3)):  # other constructor seeds, same (seed, epoch)
        np.testing.assert_array_equal(a, b)
    model_a(x, training=True)  # more draws advance the generators ...
    for a, b in zip(first, views_at(model_a, 3)):  # ... and a resumed epoch 3 draws the same views again
        np.testing.assert_array_equal(a, b)
    for a, b in zip(first, views_at(model_a, 4)):
        assert np.abs(a - b).mean() > 0.01


@pytest.mark.needs_tensorflow
def test_views_in_tf_data_are_seeded():
    tf = pytest.importorskip("tensorflow")
    x = random_images(8)

    def run():
        augment = byol_views(16, mean=[0.5] * 3, std=[0.25] * 3, seed=6)
        dataset = tf.data.Dataset.from_tensor_slices(x).batch(4).map(lambda images: tuple(augment(images)))
        return [(v1.numpy(), v2.numpy()) for v1, v2 in dataset]

    first, second = run(), run()
    assert len(first) == 2 and first[0][0].shape == (4, 16, 16, 3)
    for (a1, a2), (b1, b2) in zip(first, second):
        np.testing.assert_array_equal(a1, b1)
        np.testing.assert_array_equal(a2, b2)
        assert np.abs(a1 - a2).mean() > 0.01
        assert a1.min() >= -2.0 - 1e-5 and a1.max() <= 2.0 + 1e-5  # [0, 1] normalised by (0.5, 0.25)


def test_config_roundtrip():
    x = random_images(8)
    clone = check_config_roundtrip(byol_views(16, seed=4))
    for a, b in zip(draw(clone, x), draw(byol_views(16, seed=4), x)):  # the clone draws the same views
        np.testing.assert_array_equal(a, b)


def test_bad_arguments_name_the_value():
    with pytest.raises(ValueError, match=re.escape("view must be 1 or 2; got 3")):
        byol_augmentation(3, 16)
