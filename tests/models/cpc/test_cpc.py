"""CPC v1 / v2 (van den Oord et al. 2018; Henaff et al. 2019) with tiny encoders."""

import math

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.data.synthetic_signal import synthetic_signal
from keras_paperzoo.losses.contrastive import contrastive_accuracy, info_nce_from_logits
from keras_paperzoo.models import CPC
from keras_paperzoo.models.cpc import (
    CPC_PRESETS,
    ColumnGRUContext,
    CPCAugmentation,
    CPCResNet,
    PatchAugmentation,
    PatchGrid,
    PixelCNNContext,
    StridedConvEncoder,
)
from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model


def _np(x):
    return np.asarray(ops.convert_to_numpy(x)).copy()


@pytest.fixture(autouse=True)
def _seeded():
    keras.utils.set_random_seed(0)


def _patch_encoder(patch=4, norm=None, width=8):
    """A conv on 4 x 4 patches -> (b, 2, 2, width) maps (mean-pooled by the grid encoder)."""
    layers = [keras.Input((patch, patch, 3)), keras.layers.Conv2D(width, 3, strides=2, padding="same", name="conv")]
    if norm == "batch":
        layers.append(keras.layers.BatchNormalization(name="bn"))
    elif norm == "layer":
        layers.append(keras.layers.GroupNormalization(groups=1, name="ln"))
    return keras.Sequential(layers + [keras.layers.ReLU()], name=f"patch_{norm}")


def _cpc(backbone=None, **kwargs):
    arguments = dict(image_shape=(16, 16, 3), context_blocks=1, context_units=8, prediction_steps=2,
                     augmentation=None, patch_jitter=0, seed=0)
    arguments.update(kwargs)
    return CPC(backbone or _patch_encoder(), **arguments)


def _images(n, size=16, seed=0):
    return np.random.default_rng(seed).random((n, size, size, 3)).astype("float32")


def _log_softmax(logits):
    top = logits.max(axis=-1, keepdims=True)
    return logits - top - np.log(np.exp(logits - top).sum(axis=-1, keepdims=True))


def test_patch_grid_patches_are_the_image_crops_and_a_grid_that_does_not_fit_is_refused():
    images = _images(2, size=16)
    patches = _np(PatchGrid(4, 2)(images))
    assert patches.shape == (2, 7, 7, 4, 4, 3)  # (16 - 4) / 2 + 1 = 7: v1's proportions (256, 64, 32)
    for r in range(7):
        for c in range(7):
            np.testing.assert_array_equal(patches[:, r, c], images[:, 2 * r: 2 * r + 4, 2 * c: 2 * c + 4])
    rectangular = _np(PatchGrid((4, 2), (4, 1))(_images(1, size=8)))  # 2 rows of 4, 7 columns of 2
    assert rectangular.shape == (1, 2, 7, 4, 2, 3)
    assert PatchGrid(64, 32).compute_output_shape((None, 256, 256, 3)) == (None, 7, 7, 64, 64, 3)
    with pytest.raises(ValueError, match=r"image height 250 does not fit 64-pixel patches at stride 32: .* "
                                         r"250 - 64 = 186; 256 fits \(7 patches\)"):
        PatchGrid(64, 32)(np.zeros((1, 250, 256, 3), "float32"))
    with pytest.raises(ValueError, match="image width 3 does not fit 4-pixel patches"):
        PatchGrid(4, 2)(np.zeros((1, 8, 3, 3), "float32"))
    with pytest.raises(ValueError, match="CPC: image height 17 does not fit 4-pixel patches at stride 2"):
        _cpc(image_shape=(17, 16, 3))


def test_context_at_row_r_does_not_depend_on_rows_below():
    rng = np.random.default_rng(1)
    z = rng.normal(size=(2, 7, 5, 6)).astype("float32")
    for context in (PixelCNNContext(blocks=3, units=4), ColumnGRUContext(units=4)):
        c = _np(context(z))
        for r in range(6):
            perturbed = z.copy()
            perturbed[:, r + 1:] = rng.normal(size=perturbed[:, r + 1:].shape)
            moved = _np(context(perturbed))
            np.testing.assert_array_equal(moved[:, : r + 1], c[:, : r + 1])  # rows <= r: exactly unchanged
            assert np.abs(moved[:, r + 1:] - c[:, r + 1:]).max() > 1e-3  # rows below do see the change
    # The PixelCNN sees the whole row (1 x 3 convolutions); three blocks reach 3 rows up.
    context = PixelCNNContext(blocks=3, units=4)
    c = _np(context(z))
    perturbed = z.copy()
    perturbed[:, 1] = 0.0
    moved = _np(context(perturbed))
    assert np.abs(moved[:, 4] - c[:, 4]).max() > 1e-4 and np.array_equal(moved[:, 5:], c[:, 5:])


def test_each_direction_sees_only_its_side_and_batch_norm_leaks_the_rows_below():
    images = _images(4, seed=2)
    noise = np.random.default_rng(3).random(images.shape).astype("float32")

    def changed(rows=slice(None), cols=slice(None)):
        out = images.copy()
        out[:, rows, cols] = noise[:, rows, cols]
        return out

    # Patch (r, c) covers pixels 2r..2r+3: pixels 14, 15 lie only in row (column) 6, pixels 0, 1 only in row 0.
    cases = {  # direction: (perturbed images, the grid positions whose context must not move, ones that must)
        "down": (changed(rows=slice(14, None)), np.s_[:, :6], np.s_[:, 6]),
        "up": (changed(rows=slice(0, 2)), np.s_[:, 1:], np.s_[:, 0]),
        "right": (changed(cols=slice(14, None)), np.s_[:, :, :6], np.s_[:, :, 6]),
        "left": (changed(cols=slice(0, 2)), np.s_[:, :, 1:], np.s_[:, :, 0]),
    }
    for norm in (None, "layer"):
        model = _cpc(_patch_encoder(norm=norm), directions=list(cases))
        z = model.encode(images, training=True)
        for direction, (perturbed, still, moved) in cases.items():
            before = _np(model.context_of(z, direction))
            after = _np(model.context_of(model.encode(perturbed, training=True), direction))
            np.testing.assert_array_equal(after[still], before[still], err_msg=f"{norm} {direction}")
            assert np.abs(after[moved] - before[moved]).max() > 1e-4, (norm, direction)
    # Batch norm in training mode mixes the batch's patches: the rows below reach row 0 (v2's reason for LN).
    model = _cpc(_patch_encoder(norm="batch"))
    perturbed = cases["down"][0]
    z, z_moved = model.encode(images, training=True), model.encode(perturbed, training=True)
    assert np.abs(_np(model.context_of(z_moved))[:, 0] - _np(model.context_of(z))[:, 0]).max() > 1e-4


def _numpy_cpc_loss(model, z):
    """Eq. 4 in NumPy, written from the paper: every (b, r, col, k, direction), all B R C candidates."""
    losses, hits = [], []
    z = _np(z).astype("float64")
    for d, direction in enumerate(model.directions):
        grid = {"down": z, "up": z[:, ::-1], "right": z.transpose(0, 2, 1, 3),
                "left": z.transpose(0, 2, 1, 3)[:, ::-1]}[direction]
        c = _np(model.contexts[d](grid.astype("float32"))).astype("float64")
        targets = grid if model.target_projection is None else grid @ _np(model.target_projection.kernel)
        batch, rows, cols = grid.shape[:3]
        flat = targets.reshape(batch * rows * cols, -1)
        for i, k in enumerate(model.steps):
            w = _np(model.predictors[d * len(model.steps) + i].kernel).astype("float64")
            per_k, hit_k = [], []
            for b in range(batch):
                for r in range(rows - k):
                    for col in range(cols):
                        scores = flat @ (model.prediction_scale * c[b, r, col] @ w)  # z_j^T W_k c
                        positive = (b * rows + r + k) * cols + col
                        per_k.append(-_log_softmax(scores)[positive])
                        hit_k.append(float(np.argmax(scores) == positive))
            losses.append(np.mean(per_k))
            hits.append(np.mean(hit_k))
    return float(np.mean(losses)), float(np.mean(hits))


def test_info_nce_matches_numpy_for_v1_and_v2_settings():
    images = _images(3, seed=4)
    v1 = _cpc(prediction_steps=3)
    v2 = _cpc(_patch_encoder(norm="layer"), directions=["down", "up", "right", "left"], target_dim=5,
              prediction_scale=0.1, prediction_steps=3, steps_to_ignore=1)
    rng = np.random.default_rng(8)
    for model in (v1, v2):
        for predictor in model.predictors:  # (they start at zero: every score 0)
            predictor.kernel.assign(rng.normal(size=predictor.kernel.shape).astype("float32"))
        z = model.forward_pass(images, training=False)["z"]
        expected, accuracy = _numpy_cpc_loss(model, z)
        loss = float(_np(model.compute_loss(x=images, y_pred={"z": z}, training=False)))
        assert loss == pytest.approx(expected, rel=1e-5)
        assert float(_np(model.contrastive_accuracy_tracker.result())) == pytest.approx(accuracy, abs=1e-6)
        n = 3 * 7 * 7
        assert float(_np(model.mi_bound_tracker.result())) == pytest.approx(math.log(n) - expected, abs=1e-5)
    assert v1.steps == [1, 2, 3] and v2.steps == [2, 3] and len(v2.predictors) == 4 * 2
    # The loss function itself: labels pick each row's positive column.
    logits = np.random.default_rng(5).normal(size=(6, 9)).astype("float32")
    labels = np.array([0, 3, 8, 1, 1, 5])
    numpy = -_log_softmax(logits.astype("float64"))[np.arange(6), labels].mean()
    assert float(_np(info_nce_from_logits(logits, labels))) == pytest.approx(numpy, rel=1e-6)
    np.testing.assert_array_equal(_np(contrastive_accuracy(logits, labels)), np.argmax(logits, 1) == labels)
    rolled = np.roll(logits, -2, axis=1)  # labels None: column 0 is the positive (MoCo)
    assert float(_np(info_nce_from_logits(rolled[:1]))) == pytest.approx(-_log_softmax(rolled[:1])[0, 0], rel=1e-6)


def test_loss_at_initialisation_is_log_n():
    # W_k start at zero: all B x rows x cols = 8 x 49 candidates score alike, so the loss is log N (the
    # mean over the two steps, not their sum; every position of every image a candidate) and the bound 0.
    model = CPC.from_preset("cpc_tiny", augmentation=None, seed=0)
    model.compile(optimizer=keras.optimizers.SGD(0.0))
    history = model.fit(_images(8, seed=6), batch_size=8, epochs=1, verbose=0).history
    log_n = CPC.log_candidates(8, model.grid_size)
    assert log_n == pytest.approx(math.log(392)) and model.steps == [1, 2] and model.grid_size == (7, 7)
    assert history["loss"][0] == pytest.approx(log_n, abs=1e-5)
    assert history["mi_bound"][0] == pytest.approx(0.0, abs=1e-5)
    # Random W_k of the usual scale (Glorot): unequal scores, the loss within a few tenths of log N.
    for predictor in model.predictors:
        predictor.kernel.assign(keras.initializers.GlorotUniform(seed=1)(predictor.kernel.shape))
    history = model.fit(_images(8, seed=6), batch_size=8, epochs=1, verbose=0).history
    assert log_n - 0.05 <= history["loss"][0] <= log_n + 0.3 and history["contrastive_accuracy"][0] < 0.05
    assert history["mi_bound"][0] == pytest.approx(log_n - history["loss"][0], abs=1e-5)


def test_fit_on_raw_images_config_and_saved_model(tmp_path):
    model = _cpc(num_classes=3, augmentation={"crop_scale": (0.5, 1.0), "grayscale": 0.5}, patch_jitter=1,
                 color_dropping=True, directions=["down", "left"], target_dim=4, prediction_scale=0.1)
    model.compile()
    images = _images(16, seed=7)
    history = check_fit(model, images, np.arange(16) % 3, batch_size=8, epochs=1)
    assert set(history.history) == {"loss", "mi_bound", "contrastive_accuracy", "probe_accuracy"}
    clone = check_config_roundtrip(model)
    assert clone.directions == ["down", "left"] and clone.patch_jitter == 1 and clone.color_dropping
    assert clone.grid_size == (7, 7) and clone.patch_stride == [2, 2] and clone.target_dim == 4
    loaded = check_saved_model(model, images[:4], tmp_path)  # the representation, weights, optimizer state
    np.testing.assert_allclose(_np(loaded.encoder(model.inference_view(images[:4]))),
                               _np(model(images[:4])), atol=1e-6)
    assert model.encoder.output_shape == (None, 8)


def test_presets_and_the_paper_optimizer():
    v1, v2 = CPC_PRESETS["cpc_v1_imagenet"], CPC_PRESETS["cpc_v2_imagenet"]
    assert v1["arguments"]["image_shape"] == (256, 256, 3) and v1["arguments"]["prediction_steps"] == 5
    assert v1["arguments"]["directions"] == ["down"] and v1["arguments"]["context_units"] == 256
    encoder = CPCResNet.presets[v1["backbone"]["preset"]]["config"]
    assert encoder["stage_blocks"] == [3, 4, 23] and encoder["stage_outputs"][-1] == 1024  # ResNet-101, 3 stacks
    assert encoder["normalization"] is None and encoder["patch_shape"] == (64, 64, 3)  # "We did not use Batch-Norm"
    big = CPCResNet.presets[v2["backbone"]["preset"]]["config"]
    assert big["stage_blocks"] == [3, 4, 46] and big["stage_outputs"][-1] == 4096 and big["stage_filters"][-1] == 512
    assert big["normalization"] == "layer" and len(v2["arguments"]["directions"]) == 4
    assert (v2["arguments"]["target_dim"], v2["arguments"]["prediction_scale"]) == (64, 0.1)  # A.2
    audio = StridedConvEncoder.presets["cpc_audio_encoder"]["config"]
    assert audio["strides"] == [5, 4, 2, 2, 2] and audio["kernel_sizes"] == [10, 8, 4, 4, 4]
    assert CPC_PRESETS["cpc_audio"]["arguments"]["prediction_steps"] == 12
    model = CPC.from_preset("cpc_v1_cifar", backbone=_patch_encoder(patch=8), image_shape=(32, 32, 3))
    assert model.grid_size == (7, 7) and model.patch_stride == [4, 4]  # 32 px, 8-px patches at stride 4
    assert model.contexts[0].blocks == 3 and model.augmentation.grayscale == 0.0
    v1_model = CPC(_patch_encoder(patch=64), image_shape=(256, 256, 3))
    assert v1_model.grid_size == (7, 7) and v1_model.patch_jitter == 4  # 60 x 60 subcrops of 64 x 64
    assert v1_model.augmentation.crop_scale == pytest.approx(((256 / 300) ** 2,) * 2)
    v1_model.compile()
    assert isinstance(v1_model.optimizer, keras.optimizers.Adam)
    assert float(_np(v1_model.optimizer.learning_rate)) == pytest.approx(2e-4)


def test_patch_augmentation_jitters_and_drops_colours_per_patch():
    patches = np.ones((2, 3, 3, 8, 8, 3), "float32")
    jittered = _np(PatchAugmentation(jitter=2, seed=1)(patches, training=True))
    window = np.zeros((8, 8), bool)
    window[1:7, 1:7] = True
    assert np.all(jittered[..., ~window, :] == 0)  # outside the centred 6 x 6 subcrop
    assert np.all(jittered[..., window, :] == 1)  # the subcrop of a constant patch is the constant
    ramp = np.broadcast_to(np.arange(8, dtype="float32")[:, None, None], (8, 8, 3))
    moved = _np(PatchAugmentation(jitter=2, seed=1)(np.broadcast_to(ramp, (2, 3, 3, 8, 8, 3)), training=True))
    shifts = moved[..., 3, 3, 0] - 3.0  # the row each patch's centre reads, minus 3: in [-1, 1]
    assert set(np.unique(shifts)) <= {-1.0, 0.0, 1.0} and len(np.unique(shifts)) > 1
    dropped = _np(PatchAugmentation(color_dropping=True, seed=2)(patches, training=True))
    kept = (dropped != 0).any(axis=(3, 4))  # (2, 3, 3, C): which channels each patch kept
    assert np.all(kept.sum(-1) == 1) and len(np.unique(np.argmax(kept, -1))) > 1
    np.testing.assert_array_equal(_np(PatchAugmentation(2, True)(patches, training=False)), patches)
    with pytest.raises(ValueError, match="jitter 8 must be smaller than the patch side 8"):
        PatchAugmentation(jitter=8)(patches, training=True)
    augment = CPCAugmentation(16, mean=[0.5] * 3, std=[0.25] * 3)
    np.testing.assert_allclose(_np(augment(np.full((1, 16, 16, 3), 0.75, "float32"), training=False)), 1.0)


def test_sequence_preset_learns_a_synthetic_signal():
    signals, speakers = synthetic_signal(64, length=1280, seed=0)
    assert signals.shape == (64, 1280, 1) and np.bincount(speakers).tolist() == [16] * 4
    # Two long "phonemes" per window (of two harmonics): the bound rises within a few updates.
    signals, speakers = synthetic_signal(64, length=1280, segment=640, harmonics=2, seed=0)
    model = CPC.from_preset("cpc_sequence_tiny", seed=0)
    assert model.grid_size == (32, 1) and model.steps == list(range(1, 13))  # 1280 / 40 steps, 12 ahead
    model.compile(optimizer=keras.optimizers.Adam(1e-2))  # a larger step than the paper's 2e-4 for a short test
    history = model.fit(signals, batch_size=16, epochs=4, shuffle=False, verbose=0).history
    log_n = math.log(16 * 32)
    assert abs(history["mi_bound"][0]) < 0.2  # near 0 at the start (loss ~ log N)
    # The bound rises (0.01 -> 0.59 on TensorFlow, 0.50 on JAX, 0.61 on PyTorch): the encodings predict the
    # signal's future.
    assert history["mi_bound"][-1] > history["mi_bound"][0] + 0.3
    assert history["loss"][-1] == pytest.approx(log_n - history["mi_bound"][-1], abs=1e-4)
    assert model.encoder.output_shape == (None, 32)  # the context c, mean over time


def test_bad_inputs_name_the_value_and_rule():
    with pytest.raises(ValueError, match=r"prediction_steps 7 needs at least 8 rows to predict 'down'; the 7 x 7 "
                                         r"grid of 16-pixel images \(7 rows\) has fewer"):
        _cpc(prediction_steps=7)
    with pytest.raises(ValueError, match="steps_to_ignore must be smaller than prediction_steps"):
        _cpc(prediction_steps=2, steps_to_ignore=2)
    with pytest.raises(ValueError, match=r"directions must be distinct names among .*; got \['down', 'sideways'\]"):
        _cpc(directions=["down", "sideways"])
    with pytest.raises(ValueError, match="context must be one of"):
        _cpc(context="lstm")
    with pytest.raises(ValueError, match="needs image_shape"):
        CPC(_patch_encoder())
    with pytest.raises(ValueError, match="backbone's 3 channels; got \\(16, 16, 1\\)"):
        _cpc(image_shape=(16, 16, 1))
    with pytest.raises(ValueError, match="prediction_scale must be a number > 0; got 0"):
        _cpc(prediction_scale=0)
    with pytest.raises(ValueError, match="patches .* or sequences"):
        CPC(keras.Sequential([keras.Input((5,)), keras.layers.Dense(3)]))
    sequence = StridedConvEncoder(strides=[4], kernel_sizes=[4], filters=4, input_length=64)
    with pytest.raises(ValueError, match="takes no image_shape or patch_stride"):
        CPC(sequence, image_shape=(16, 16, 3))
    with pytest.raises(ValueError, match="prediction_steps 16 needs at least 17 steps"):
        CPC(sequence, context="gru", prediction_steps=16)
    with pytest.raises(ValueError, match="input_length 100 must be a multiple of the total stride 160"):
        StridedConvEncoder(input_length=100)
    with pytest.raises(ValueError, match="normalization must be one of"):
        CPCResNet([1], [4], normalization="group")
    with pytest.raises(ValueError, match="takes one batch of images, not views"):
        _cpc().compute_loss(x=(_images(2), _images(2)))
