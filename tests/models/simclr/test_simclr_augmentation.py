"""SimCLR's views (models/simclr/simclr_augmentation.py), and the chain it shares with BYOL's.

The tests that run both papers' recipes (BYOL's views are SimCLR's chain with other parameters) are here;
BYOL's own are in tests/models/byol/test_byol_augmentation.py.
"""

import re

import numpy as np
import pytest

import keras

from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds
from keras_paperzoo.data.views import MultiViewAugmentation
from keras_paperzoo.models.byol import byol_augmentation, byol_views
from keras_paperzoo.models.simclr import simclr_augmentation, simclr_views
from tests.data.views.view_checks import N_STAT, SIZE_STAT, binomial_tolerance, draw, random_images, to_numpy


@pytest.mark.parametrize("make", [simclr_views, byol_views])
def test_views_differ_from_each_other_and_the_input_and_stay_in_range(make):
    x = random_images(8)
    view_1, view_2 = draw(make(16, seed=1), x)
    assert view_1.shape == view_2.shape == x.shape
    for i in range(len(x)):  # every image, not only on average
        assert np.abs(view_1[i] - x[i]).mean() > 0.01
        assert np.abs(view_2[i] - x[i]).mean() > 0.01
        assert np.abs(view_1[i] - view_2[i]).mean() > 0.01
    for view in (view_1, view_2):
        assert view.min() >= 0.0 and view.max() <= 1.0
    # The same seed draws the same views; normalisation comes last.
    mean, std = [0.4, 0.5, 0.6], [0.2, 0.25, 0.3]
    normalized = draw(make(16, mean=mean, std=std, seed=1), x)
    for plain, norm in zip((view_1, view_2), normalized):
        np.testing.assert_allclose(norm, (plain - np.array(mean)) / np.array(std), atol=1e-5)
    other = draw(make(16, seed=2), x)
    assert np.abs(other[0] - view_1).mean() > 0.01


def test_the_recipe_matches_the_paper():
    simclr = simclr_views(224, seed=0)
    view = simclr.view_augmentations[0]
    assert simclr.views == 2 and simclr.num_views == 2  # one pipeline, two independent draws
    assert view.crop.scale == (0.08, 1.0) and view.crop.ratio == pytest.approx((3 / 4, 4 / 3))
    assert (view.jitter.brightness, view.jitter.contrast, view.jitter.saturation) == pytest.approx((0.8,) * 3)
    assert view.jitter.hue == pytest.approx(0.2) and view.jitter.probability == 0.8 and view.jitter.random_order
    assert view.grayscale.factor == 0.2 and view.solarize is None
    assert view.blur.probability == 0.5 and view.blur.sigma == (0.1, 2.0) and view.blur.kernel_size == 22
    cifar = simclr_augmentation(32, color_strength=0.5, blur=False)  # Appendix B.9
    assert cifar.jitter.brightness == pytest.approx(0.4) and cifar.jitter.hue == pytest.approx(0.1)
    assert cifar.blur is None


def _gray_fraction(views):
    spread = views.max(axis=-1) - views.min(axis=-1)  # (B, H, W): 0 where R = G = B
    return (spread.max(axis=(1, 2)) < 1e-4).mean()


@pytest.mark.parametrize("pipeline", ["simclr", "byol_1", "byol_2"])
def test_grayscale_probability_over_constant_colour_images(pipeline):
    # Colour jitter keeps an orange image coloured, so an image is gray only when RandomGrayscale hit it.
    x = np.broadcast_to(np.array([0.6, 0.4, 0.2], "float32"), (N_STAT, SIZE_STAT, SIZE_STAT, 3))
    make = {"simclr": simclr_augmentation, "byol_1": lambda *a, **k: byol_augmentation(1, *a, **k),
            "byol_2": lambda *a, **k: byol_augmentation(2, *a, **k)}[pipeline]
    fraction = _gray_fraction(to_numpy(make(SIZE_STAT, seed=3)(x)))
    assert abs(fraction - 0.2) < binomial_tolerance(0.2)


def test_same_seed_same_views_for_a_shared_pipeline():
    x = random_images(8)
    one, two = draw(simclr_views(16, seed=3), x), draw(simclr_views(16, seed=3), x)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
    assert np.abs(one[0] - one[1]).mean() > 0.01  # the shared pipeline draws anew for each view
    # `seed=` overrides the pipelines' own seeds: differently seeded pipelines, one wrapper seed.
    left = MultiViewAugmentation(simclr_augmentation(16, seed=10), views=2, seed=5)
    right = MultiViewAugmentation(simclr_augmentation(16, seed=20), views=2, seed=5)
    for a, b in zip(draw(left, x), draw(right, x)):
        np.testing.assert_array_equal(a, b)


def test_views_inside_a_traced_train_step():
    x = random_images(8)
    inputs = keras.Input((16, 16, 3))
    view_1, view_2 = simclr_views(16, color_strength=0.5, blur=False, seed=0)(inputs)
    pool, dense = keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(4)
    model = keras.Model(inputs, keras.layers.Subtract()([dense(pool(view_1)), dense(pool(view_2))]))
    model.compile(optimizer="sgd", loss="mse")  # jit on JAX, tf.function on TensorFlow
    history = model.fit(x, np.zeros((8, 4), "float32"), batch_size=4, epochs=2, verbose=0,
                        callbacks=[EpochSeeds(0)])
    losses = history.history["loss"]
    assert all(np.isfinite(losses)) and min(losses) > 0  # the two views differ inside the step


def test_bad_arguments_name_the_value():
    with pytest.raises(ValueError, match=re.escape("color_strength must be a number in [0.0, 2.5]; got -0.5")):
        simclr_augmentation(16, color_strength=-0.5)
