"""Multi-view augmentation (MultiViewAugmentation) and SimCLR's / BYOL's per-view pipelines."""

import colorsys
import re

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds, seed_generator_states
from keras_paperzoo.data import (
    MultiViewAugmentation,
    RandomSolarization,
    ViewAugmentation,
    byol_augmentation,
    byol_views,
    simclr_augmentation,
    simclr_views,
)
from keras_paperzoo.data.ssl_augmentation import ColorJitter, GaussianBlur, RandomResizedCrop
from tests.model_checks import check_config_roundtrip, check_saved_model

LUMA = np.array([0.2989, 0.587, 0.114])
# Few distinct shapes: JAX compiles each eager op once per shape (seconds each for the crop and the jitter).
N_STAT, SIZE_STAT = 400, 24  # the statistical tests: 400 images of 24 x 24 (blur kernel 2 taps, radius 1)


def _binomial_tolerance(p, n=N_STAT):
    return 4 * np.sqrt(p * (1 - p) / n)  # 4 standard deviations


def _images(n=8, size=16, seed=0):
    return np.random.default_rng(seed).random((n, size, size, 3)).astype("float32")


def _np(x):
    return np.asarray(ops.convert_to_numpy(x))


def _draw(augment, x, training=True):
    return [_np(view) for view in augment(x, training=training)]


def _multi_size(seed=0):
    """Two pipelines: 16 x 16 views drawn twice, 8 x 8 crops drawn three times (multi-crop's shape).

    Any layer can be a pipeline; the small views are bare crops (fewer shapes for JAX to compile).
    """
    large = ViewAugmentation(16, crop_scale=(0.3, 1.0), blur_probability=0.0, name="large")
    small = RandomResizedCrop(8, 8, scale=(0.05, 0.3), name="small")
    return MultiViewAugmentation([large, small], views=[2, 3], seed=seed)


def test_views_have_their_pipelines_sizes_in_training_and_inference():
    x = _images(8)
    augment = _multi_size()
    views = _draw(augment, x)
    assert [v.shape for v in views] == [(8, 16, 16, 3)] * 2 + [(8, 8, 8, 3)] * 3
    assert augment.num_views == 5 and augment.view_pipeline == (0, 0, 1, 1, 1)
    assert augment.compute_output_shape((None, 16, 16, 3)) == [(None, 16, 16, 3)] * 2 + [(None, 8, 8, 3)] * 3
    symbolic = augment(keras.Input((16, 16, 3)))
    assert [tuple(v.shape) for v in symbolic] == [(None, 16, 16, 3)] * 2 + [(None, 8, 8, 3)] * 3
    # Inference: the same list, each view its pipeline's deterministic path (resize, no randomness).
    inference = _draw(augment, x, training=False)
    assert [v.shape for v in inference] == [v.shape for v in views]
    for view in inference[:2]:
        np.testing.assert_array_equal(view, x)
    resized = _np(ops.image.resize(x, (8, 8), interpolation="bilinear"))
    for view in inference[2:]:
        np.testing.assert_allclose(view, resized, atol=1e-5)
    # Training: every view is its own draw.
    for a in range(5):
        for b in range(a + 1, 5):
            if views[a].shape == views[b].shape:
                assert np.abs(views[a] - views[b]).mean() > 0.01


@pytest.mark.parametrize("make", [simclr_views, byol_views])
def test_views_differ_from_each_other_and_the_input_and_stay_in_range(make):
    x = _images(8)
    view_1, view_2 = _draw(make(16, seed=1), x)
    assert view_1.shape == view_2.shape == x.shape
    for i in range(len(x)):  # every image, not only on average
        assert np.abs(view_1[i] - x[i]).mean() > 0.01
        assert np.abs(view_2[i] - x[i]).mean() > 0.01
        assert np.abs(view_1[i] - view_2[i]).mean() > 0.01
    for view in (view_1, view_2):
        assert view.min() >= 0.0 and view.max() <= 1.0
    # The same seed draws the same views; normalisation comes last.
    mean, std = [0.4, 0.5, 0.6], [0.2, 0.25, 0.3]
    normalized = _draw(make(16, mean=mean, std=std, seed=1), x)
    for plain, norm in zip((view_1, view_2), normalized):
        np.testing.assert_allclose(norm, (plain - np.array(mean)) / np.array(std), atol=1e-5)
    other = _draw(make(16, seed=2), x)
    assert np.abs(other[0] - view_1).mean() > 0.01


def test_recipes_match_the_papers():
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
    byol = byol_views(224, seed=0)
    first, second = byol.view_augmentations
    for v in (first, second):
        assert (v.jitter.brightness, v.jitter.contrast, v.jitter.saturation, v.jitter.hue) == (0.4, 0.4, 0.2, 0.1)
        assert v.jitter.probability == 0.8 and v.grayscale.factor == 0.2 and v.crop.scale == (0.08, 1.0)
        assert v.blur.kernel_size == 22  # 23 taps, as BYOL's int(22.4 / 2) * 2 + 1
    assert first.blur.probability == 1.0 and first.solarize is None
    assert second.blur.probability == 0.1 and second.solarize.probability == 0.2
    assert all(v.blur is None for v in byol_views(32, blur=False).view_augmentations)


def _gray_fraction(views):
    spread = views.max(axis=-1) - views.min(axis=-1)  # (B, H, W): 0 where R = G = B
    return (spread.max(axis=(1, 2)) < 1e-4).mean()


@pytest.mark.parametrize("pipeline", ["simclr", "byol_1", "byol_2"])
def test_grayscale_probability_over_constant_colour_images(pipeline):
    # Colour jitter keeps an orange image coloured, so an image is gray only when RandomGrayscale hit it.
    x = np.broadcast_to(np.array([0.6, 0.4, 0.2], "float32"), (N_STAT, SIZE_STAT, SIZE_STAT, 3))
    make = {"simclr": simclr_augmentation, "byol_1": lambda *a, **k: byol_augmentation(1, *a, **k),
            "byol_2": lambda *a, **k: byol_augmentation(2, *a, **k)}[pipeline]
    fraction = _gray_fraction(_np(make(SIZE_STAT, seed=3)(x)))
    assert abs(fraction - 0.2) < _binomial_tolerance(0.2)


def test_byol_solarises_the_second_view_only():
    # A flat gray image at 0.9 stays flat and gray through crop, jitter (brightness in [0.54, 1]), grayscale
    # and blur; it ends below 0.5 only if solarised (x >= 0.5 -> 1 - x).
    x = np.full((N_STAT, SIZE_STAT, SIZE_STAT, 3), 0.9, "float32")
    view_1, view_2 = _draw(byol_views(SIZE_STAT, seed=4), x)
    assert view_1.min() >= 0.5 - 1e-4
    fraction = (view_2.reshape(N_STAT, -1).max(axis=1) < 0.5).mean()
    assert abs(fraction - 0.2) < _binomial_tolerance(0.2)


def test_random_solarization_formula_and_probability():
    x = _images(8)
    np.testing.assert_allclose(_np(RandomSolarization(probability=1.0)(x)), np.where(x < 0.5, x, 1.0 - x))
    np.testing.assert_array_equal(_np(RandomSolarization(probability=0.0)(x)), x)
    wide = _np(RandomSolarization(probability=1.0, threshold=0.3, value_range=(0, 255))(x * 255))
    np.testing.assert_allclose(wide, np.where(x * 255 < 76.5, x * 255, 255 - x * 255), rtol=1e-6)
    flat = np.full((N_STAT, SIZE_STAT, SIZE_STAT, 3), 0.8, "float32")
    solarised = _np(RandomSolarization(probability=0.2, seed=0)(flat))[:, 0, 0, 0]
    assert np.all(np.isclose(solarised, 0.2) | np.isclose(solarised, 0.8))
    assert abs((solarised < 0.5).mean() - 0.2) < _binomial_tolerance(0.2)


def _roughness(views):
    """Mean squared difference of horizontal neighbours over the variance, per image: 2 for white noise."""
    return ((views[:, :, 1:] - views[:, :, :-1]) ** 2).mean(axis=(1, 2, 3)) / views.var(axis=(1, 2, 3))


def test_byol_blur_probability_shows_in_the_roughness_of_white_noise():
    # Jitter, grayscale, flips and solarisation act per pixel (white noise stays white); only the blur
    # correlates neighbours. sigma ~ U[0.1, 2] with 3 taps at 24 px: sigma > ~0.4 (84 %) is measurable.
    x = _images(N_STAT, SIZE_STAT, seed=5)
    blurred = [
        (_roughness(_np(byol_augmentation(view, SIZE_STAT, crop_scale=(1.0, 1.0), seed=view)(x))) < 1.8).mean()
        for view in (1, 2)
    ]
    assert (_roughness(x) > 1.85).all()
    assert abs(blurred[0] - 0.84) < _binomial_tolerance(0.84) + 0.05  # p = 1.0
    assert abs(blurred[1] - 0.084) < _binomial_tolerance(0.084) + 0.05  # p = 0.1


def test_gaussian_blur_kernel_size_truncates_the_gaussian():
    impulse = np.zeros((8, 16, 16, 3), "float32")
    impulse[:, 8, 8] = 1.0
    out = _np(GaussianBlur(sigma=(2.0, 2.0), probability=1.0, kernel_size=3)(impulse))
    taps = np.exp(-np.arange(-1, 2) ** 2 / 8.0)  # 3 taps of sigma 2, renormalised
    taps /= taps.sum()
    expected = np.zeros((16, 16))
    expected[7:10, 7:10] = np.outer(taps, taps)
    np.testing.assert_allclose(out, np.broadcast_to(expected[None, :, :, None], out.shape), atol=1e-6)


def _jitter_reference(x, u, u_order, strengths, hue):
    """torchvision's ColorJitter on one image at a time, in the order argsort(u_order[b])."""
    out = x.astype("float64").copy()
    for b in range(len(x)):
        factors = [max(0.0, 1 - s) + (1 + s - max(0.0, 1 - s)) * u[b, i] for i, s in enumerate(strengths)]
        y = out[b]
        for operation in np.argsort(u_order[b]):
            gray = y @ LUMA
            if operation == 0:
                y = y * factors[0]
            elif operation == 1:
                y = factors[1] * y + (1 - factors[1]) * gray.mean()
            elif operation == 2:
                y = factors[2] * y + (1 - factors[2]) * gray[..., None]
            else:
                shift = (2 * u[b, 3] - 1) * hue
                hsv = [colorsys.rgb_to_hsv(*pixel) for pixel in y.reshape(-1, 3)]
                y = np.array([colorsys.hsv_to_rgb((h + shift) % 1.0, s, v) for h, s, v in hsv]).reshape(y.shape)
            y = np.clip(y, 0.0, 1.0)
        out[b] = y
    return out


def test_color_jitter_random_order_matches_a_per_image_reference():
    x = _images(8, seed=6)
    jitter = ColorJitter(0.8, 0.8, 0.8, 0.2, random_order=True, seed=7)
    # The layer's draws, repeated from a generator in the same state: (B, 5) factors, then (B, 4) for the order.
    generator = keras.random.SeedGenerator(7)
    u = _np(keras.random.uniform((8, 5), seed=generator))
    u_order = _np(keras.random.uniform((8, 4), seed=generator))
    out = _np(jitter(x))
    np.testing.assert_allclose(out, _jitter_reference(x, u, u_order, (0.8, 0.8, 0.8), 0.2), atol=2e-4)
    fixed = _jitter_reference(x, u, np.tile(np.arange(4.0), (8, 1)), (0.8, 0.8, 0.8), 0.2)
    differs = np.abs(out - fixed).reshape(8, -1).max(axis=1) > 1e-3
    assert differs.sum() >= 3  # the order matters (through clipping and the hue rotation)
    clone = check_config_roundtrip(jitter)
    assert clone.random_order


def _in_model(augment, size=16):
    inputs = keras.Input((size, size, 3))
    return keras.Model(inputs, augment(inputs))


def test_epoch_seeds_make_the_views_a_function_of_seed_and_epoch():
    x = _images(8)
    model_a, model_b = _in_model(byol_views(16, seed=1)), _in_model(byol_views(16, seed=2))
    assert len(seed_generator_states(model_a)) == 11  # crop, flip, jitter, grayscale, blur (+ solarise in view 2)
    callback = EpochSeeds(7)

    def views_at(model, epoch):
        callback.set_model(model)
        callback.on_epoch_begin(epoch)
        return [_np(v) for v in model(x, training=True)]

    first = views_at(model_a, 3)
    for a, b in zip(first, views_at(model_b, 3)):  # other constructor seeds, same (seed, epoch)
        np.testing.assert_array_equal(a, b)
    model_a(x, training=True)  # more draws advance the generators ...
    for a, b in zip(first, views_at(model_a, 3)):  # ... and a resumed epoch 3 draws the same views again
        np.testing.assert_array_equal(a, b)
    for a, b in zip(first, views_at(model_a, 4)):
        assert np.abs(a - b).mean() > 0.01


def test_same_seed_same_views_for_a_shared_pipeline():
    x = _images(8)
    one, two = _draw(simclr_views(16, seed=3), x), _draw(simclr_views(16, seed=3), x)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
    assert np.abs(one[0] - one[1]).mean() > 0.01  # the shared pipeline draws anew for each view
    # `seed=` overrides the pipelines' own seeds: differently seeded pipelines, one wrapper seed.
    left = MultiViewAugmentation(simclr_augmentation(16, seed=10), views=2, seed=5)
    right = MultiViewAugmentation(simclr_augmentation(16, seed=20), views=2, seed=5)
    for a, b in zip(_draw(left, x), _draw(right, x)):
        np.testing.assert_array_equal(a, b)


def test_views_inside_a_traced_train_step():
    x = _images(8)
    inputs = keras.Input((16, 16, 3))
    view_1, view_2 = simclr_views(16, color_strength=0.5, blur=False, seed=0)(inputs)
    pool, dense = keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(4)
    model = keras.Model(inputs, keras.layers.Subtract()([dense(pool(view_1)), dense(pool(view_2))]))
    model.compile(optimizer="sgd", loss="mse")  # jit on JAX, tf.function on TensorFlow
    history = model.fit(x, np.zeros((8, 4), "float32"), batch_size=4, epochs=2, verbose=0,
                        callbacks=[EpochSeeds(0)])
    losses = history.history["loss"]
    assert all(np.isfinite(losses)) and min(losses) > 0  # the two views differ inside the step


@pytest.mark.needs_tensorflow
def test_views_in_tf_data_are_seeded():
    tf = pytest.importorskip("tensorflow")
    x = _images(8)

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


def test_config_roundtrip_and_saved_model(tmp_path):
    x = _images(8)
    clone = check_config_roundtrip(byol_views(16, seed=4))
    for a, b in zip(_draw(clone, x), _draw(byol_views(16, seed=4), x)):  # the clone draws the same views
        np.testing.assert_array_equal(a, b)
    multi = check_config_roundtrip(_multi_size(seed=1))
    assert multi.views == [2, 3] and multi.view_pipeline == (0, 0, 1, 1, 1)
    model = _in_model(_multi_size(seed=1))

    def flat(m, images):
        return ops.concatenate([ops.reshape(v, (len(images), -1)) for v in m(images, training=False)], axis=1)

    check_saved_model(model, x, tmp_path, outputs_of=flat)  # saves to tmp_path / "model.keras"
    loaded = keras.saving.load_model(tmp_path / "model.keras", safe_mode=True)
    for a, b in zip(model(x, training=True), loaded(x, training=True)):  # and redraw the same training views
        np.testing.assert_array_equal(_np(a), _np(b))


def test_bad_arguments_name_the_value():
    view = simclr_augmentation(16)
    cases = [
        (lambda: MultiViewAugmentation(view, views=1), "at least 2 views; got views=1"),
        (lambda: MultiViewAugmentation([view]), "at least 2 views; got views=None"),
        (lambda: MultiViewAugmentation([]), "view_augmentations is empty; got []"),
        (lambda: MultiViewAugmentation([view, view]), "view_augmentations[0] and [1] are the same layer"),
        (lambda: MultiViewAugmentation([view, "crop"]), "view_augmentations[1] must be a Keras layer; got str"),
        (lambda: MultiViewAugmentation([view, simclr_augmentation(8)], views=3), "got 2 pipelines"),
        (lambda: MultiViewAugmentation(view, views=[2, 6]), "1 pipelines, got views=[2, 6]"),
        (lambda: MultiViewAugmentation(view, views=2, seed=-1), "seed must be an int >= 0 or None; got -1"),
        (lambda: simclr_augmentation(16, color_strength=-0.5), "color_strength must be a number in [0.0, 2.5]; got -0.5"),
        (lambda: ViewAugmentation(16, blur_probability=1.5), "blur_probability must be a number in [0.0, 1.0]; got 1.5"),
        (lambda: ViewAugmentation(16, solarize_probability=-0.1), "solarize_probability must be a number in [0.0, 1.0]; got -0.1"),
        (lambda: ViewAugmentation(16, grayscale_probability=2), "grayscale_probability must be a number in [0.0, 1.0]; got 2"),
        (lambda: ViewAugmentation(0), "image_size must be an int or (height, width) of ints >= 1; got 0"),
        (lambda: RandomSolarization(probability=1.2), "probability must be a number in [0.0, 1.0]; got 1.2"),
        (lambda: byol_augmentation(3, 16), "view must be 1 or 2; got 3"),
        (lambda: GaussianBlur(kernel_size=0), "kernel_size must be an int >= 1 or None; got 0"),
    ]
    for make, message in cases:
        with pytest.raises(ValueError, match=re.escape(message)):
            make()
