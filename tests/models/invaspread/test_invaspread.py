"""The InvaSpread trainer (Ye et al. 2019) with tiny backbones."""

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.data.views import ViewAugmentation
from keras_paperzoo.models import InvaSpread
from keras_paperzoo.models.invaspread import INVASPREAD_PRESETS
from keras_paperzoo.training.optimizers import ScheduledMomentumSGD
from tests.losses.test_invaspread_loss import _reference as _invaspread_reference
from tests.losses.test_invaspread_loss import _uniform
from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model
from tests.model_tests import fit_probe_only


def _np(x):
    return np.asarray(ops.convert_to_numpy(x)).copy()


def _backbone(size=8, batch_norm=True):
    layers = [keras.Input((size, size, 3)), keras.layers.Conv2D(4, 3, strides=2, name="conv")]
    if batch_norm:
        layers.append(keras.layers.BatchNormalization(name="bn"))
    layers.append(keras.layers.ReLU())
    return keras.Sequential(layers, name="tiny")  # (B, 3, 3, 4) maps: h is 4-d


def _invaspread(backbone=None, **kwargs):
    args = dict(embedding_dim=8, seed=0)
    args.update(kwargs)
    return InvaSpread(backbone or _backbone(), **args)


def _images(n, size=8, seed=0):
    return np.random.default_rng(seed).random((n, size, size, 3)).astype("float32")


def test_one_linear_embedding_normalised_and_the_authors_augmentation():
    model = InvaSpread(_backbone())
    # f = normalize(W h + b): one Dense (the authors' nn.Linear 512 -> 128, bias, no ReLU, no BN).
    assert model.head.widths == (128,) and not model.head.batch_norm and not model.head.output_batch_norm
    assert model.head.count_params() == 4 * 128 + 128
    assert len(model.trainable_variables) == 4 + 2  # backbone conv (2) and BN (2), head kernel and bias
    assert model.temperature == pytest.approx(0.1) and not model.original_view
    assert model.embedding_network.output_shape == (None, 128) and model.encoder.output_shape == (None, 4)
    x = _images(4)
    f = _np(model(x))
    np.testing.assert_allclose(np.linalg.norm(f, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(f, _np(model.embedding_network(x)), atol=1e-6)  # inference: f of the image
    # The authors' transform_train: crop 0.2-1, jitter 0.4 x 4 on every image, grayscale 0.2, flip.
    view = model.augmentation
    assert isinstance(view, ViewAugmentation) and view.image_size == (8, 8)
    assert view.crop_scale == (0.2, 1.0) and view.jitter_strengths == (0.4, 0.4, 0.4, 0.4)
    assert (view.jitter_probability, view.grayscale_probability, view.blur_probability) == (1.0, 0.2, 0.0)
    assert view.solarize_probability == 0.0 and view.seed is None
    override = _invaspread(augmentation={"crop_scale": (0.5, 1.0), "mean": [0.5] * 3, "std": [0.25] * 3})
    assert override.augmentation.crop_scale == (0.5, 1.0) and override.augmentation.mean == [0.5] * 3


def test_presets():
    cifar = INVASPREAD_PRESETS["invaspread_cifar_resnet18"]
    # The authors' README command: --batch-t 0.1 --low-dim 128; demo_seen.py's Normalize.
    assert cifar["arguments"]["temperature"] == 0.1 and cifar["arguments"]["embedding_dim"] == 128
    assert cifar["arguments"]["augmentation"]["std"] == [0.2023, 0.1994, 0.2010]
    overrides = cifar["backbone"]["overrides"]  # their CIFAR ResNet-18: 3x3 stem, 4 x 2 blocks, 1x1 shortcuts
    assert (overrides["stem"], overrides["stage_blocks"], overrides["shortcut"]) == ("cifar", [2, 2, 2, 2], "B")
    for name in ("invaspread_resnet20_cifar", "invaspread_tiny"):
        assert INVASPREAD_PRESETS[name]["arguments"]["temperature"] == 0.1
    model = InvaSpread.from_preset("invaspread_cifar_resnet18", backbone=_backbone())  # its arguments, our backbone
    assert model.embedding_dim == 128 and model.augmentation.std == [0.2023, 0.1994, 0.2010]


def test_loss_at_initialisation_is_the_uniform_value_and_j_of_the_embeddings():
    # lr 0, zero-mean random images as both views, a random linear backbone and a wide embedding: f of
    # different images are nearly orthogonal, so every input's 2N - 1 classes are nearly equally likely:
    # J ~ log(2N - 1) + (2N - 2) log((2N - 1) / (2N - 2)) = 4.11 at N = 12. Counting the masked
    # self-similarity (logit 1 / tau = 10) as a class would give about 10 + 1; classes from one view only
    # (N of them) log(12) + 11 log(12 / 11) = 3.44.
    keras.utils.set_random_seed(0)
    n, size = 12, 16
    backbone = keras.Sequential([keras.Input((size, size, 3)), keras.layers.Flatten(),
                                 keras.layers.Dense(1024, name="dense")], name="linear")
    model = InvaSpread(backbone, embedding_dim=2048, augmentation=None, seed=0)
    model.compile(optimizer=keras.optimizers.SGD(0.0))
    rng = np.random.default_rng(1)
    view_a, view_b = (rng.normal(size=(n, size, size, 3)).astype("float32") for _ in range(2))
    f = _np(model.forward_pass((view_a, view_b), training=True)["f"])  # (2N, C)
    history = model.fit((view_a, view_b), batch_size=n, epochs=1, verbose=0).history
    # The logged loss is the authors' criterion over the 2N embeddings.
    assert history["loss"][0] == pytest.approx(_invaspread_reference(f[:n], f[n:], 0.1), rel=1e-4)
    # The cosines of different images spread by ~0.05 (logits +- 0.5): over 5 initialisations (JAX) the
    # loss sat -0.02 to +0.15 from the uniform value.
    assert _uniform(n) - 0.05 <= history["loss"][0] <= _uniform(n) + 0.25
    assert history["contrastive_accuracy"][0] <= 0.25  # chance is 1 / 23
    # The same images as both views: each input finds its positive (logit 10 against ~0).
    same = model.fit((view_a, view_a), batch_size=n, epochs=1, verbose=0).history
    assert same["contrastive_accuracy"][0] == 1.0 and same["loss"][0] < 0.05


def test_original_view_feeds_the_image_itself_to_the_first_branch():
    noise = keras.layers.GaussianNoise(0.5, seed=1)  # the augmentation; at inference it leaves images alone
    x = _images(6)
    for original_view in (True, False):
        model = _invaspread(_backbone(batch_norm=False), augmentation=noise, original_view=original_view)
        f = _np(model.forward_pass(x, training=True)["f"])  # (2N, C)
        first_is_image = np.allclose(f[:6], _np(model.embedding_network(x)), atol=1e-6)
        assert first_is_image == original_view
        assert not np.allclose(f[6:], f[:6], atol=1e-3)  # the second branch is augmented either way


def test_online_probe_trains_and_does_not_change_the_representation():
    # tau = 1e30 makes J's gradient (about 1 / tau) vanish in float32: what moves the backbone or the head
    # now is the probe's cross-entropy, which the stop-gradient on h must stop.
    model = _invaspread(augmentation=None, num_classes=3, temperature=1e30)
    model.compile(optimizer=keras.optimizers.SGD(0.5))
    views = (_images(16, seed=2), _images(16, seed=3))
    history = fit_probe_only(model, views, np.arange(16) % 3)  # the probe learns, h stays
    assert history["loss"][0] > _uniform(8) + 0.5  # its cross-entropy (about log 3) is in the loss


def test_fit_on_raw_images_moves_every_weight_then_config_and_saved_model(tmp_path):
    model = _invaspread(num_classes=3)  # the default augmentation: both views drawn inside the step
    model.compile(steps_per_epoch=2, epochs=2)  # the authors' SGD and step schedule
    representation = model.backbone.trainable_weights + model.head.trainable_weights
    start = [_np(w) for w in representation]
    images = _images(16, seed=4)
    history = check_fit(model, images, np.arange(16) % 3, batch_size=8, epochs=2)
    assert set(history.history) == {"loss", "contrastive_accuracy", "probe_accuracy"}
    for w, s in zip(representation, start):  # the one gradient path reaches backbone and head
        assert not np.allclose(_np(w), s), w.path
    clone = check_config_roundtrip(model)
    assert (clone.embedding_dim, clone.temperature, clone.num_classes, clone.seed) == (8, 0.1, 3, 0)
    assert not clone.original_view and clone.augmentation.crop_scale == (0.2, 1.0)
    loaded = check_saved_model(model, images[:4], tmp_path)  # outputs, weights, optimizer state
    assert isinstance(loaded.optimizer, ScheduledMomentumSGD) and loaded.optimizer.l2 == pytest.approx(5e-4)
    np.testing.assert_allclose(_np(loaded.encoder(images[:4])), _np(model.encoder(images[:4])), atol=1e-6)
    with pytest.raises(ValueError, match="image-shaped y"):  # views given as (x, y)
        model.fit(images, images, batch_size=8, verbose=0)


def test_compile_defaults_are_the_authors_cifar_recipe():
    model = _invaspread()
    model.compile()  # demo_seen.py: 301 epochs of CIFAR-10 at batch 128, 390 updates each
    optimizer = model.optimizer
    assert isinstance(optimizer, ScheduledMomentumSGD)
    assert optimizer.momentum == pytest.approx(0.9) and optimizer.l2 == pytest.approx(5e-4)
    assert not optimizer.nesterov and optimizer.weight_decay is None  # decay added to the gradient only

    def rate(step):
        return float(_np(optimizer._learning_rate(step)))

    # adjust_learning_rate: 0.03 for epochs 0-119, x0.1 from 120, x0.05 from 160, x0.01 from 200.
    for epoch, expected in ((0, 0.03), (119, 0.03), (120, 0.003), (159, 0.003), (160, 0.0015), (199, 0.0015),
                            (200, 0.0003), (300, 0.0003)):
        assert rate(epoch * 390) == pytest.approx(expected), epoch
        if epoch in (120, 160, 200):
            assert rate(epoch * 390 - 1) > rate(epoch * 390)  # the drop comes at the epoch's first update
    model.compile(steps_per_epoch=10, epochs=30, learning_rate=0.06)  # a shorter run: the same fractions
    # 300 updates x (120, 160, 200) / 301 = 119.6, 159.5, 199.3: drops at updates 120, 159, 199.
    assert model.optimizer._learning_rate.boundaries == [119, 158, 198]
    assert float(_np(model.optimizer._learning_rate(0))) == pytest.approx(0.06)
    with pytest.raises(ValueError, match="loss .* fixed"):
        model.compile(loss="mse")
    with pytest.raises(ValueError, match="learning_rate must be a number > 0; got 0"):
        model.compile(learning_rate=0)


def test_bad_input_names_the_value_and_rule():
    for temperature in (0, -0.5, "0.1", True):
        with pytest.raises(ValueError, match=f"temperature must be a number > 0; got {temperature!r}"):
            _invaspread(temperature=temperature)
    for dim in (0, 2.5, True):
        with pytest.raises(ValueError, match=f"embedding_dim must be an int >= 1; got {dim!r}"):
            _invaspread(embedding_dim=dim)
    with pytest.raises(ValueError, match="original_view must be True or False; got 1"):
        _invaspread(original_view=1)
    with pytest.raises(ValueError, match="known image input shape"):
        InvaSpread(keras.Sequential([keras.layers.Dense(3)]))
    with pytest.raises(ValueError, match="num_classes .* must be an int >= 2 or None; got 1"):
        _invaspread(num_classes=1)
    model = _invaspread(augmentation=None)
    view_a, view_b = _images(8), _images(8, seed=1)
    with pytest.raises(ValueError, match=r"views must hold the same images; got batch sizes \[8, 4\]"):
        model.compute_loss(x=(view_a, view_b[:4]))
    with pytest.raises(ValueError, match="takes 2 views; got 3"):
        model.compute_loss(x=(view_a, view_b, view_b))
    with pytest.raises(ValueError, match=r"needs two views: x=\(view_1, view_2\)"):
        model(view_a, training=True)
    fresh = _invaspread(augmentation=None)
    fresh.compile(optimizer=keras.optimizers.SGD(0.1))
    with pytest.raises(ValueError, match=r"InvaSpread: batch size 1 is too small; its batches need at least 2 \(its "
                                         r"negatives are the batch's other images\)"):
        fresh.fit((view_a[:1], view_b[:1]), batch_size=1, verbose=0)
