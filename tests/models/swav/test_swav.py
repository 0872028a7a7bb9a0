"""The SwAV trainer (Caron et al. 2020) with tiny backbones: loss, codes, prototypes, queue, resume."""

import math

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.data.views import MultiCropAugmentation
from keras_paperzoo.models import SwAV
from keras_paperzoo.training.lars import LARS
from tests.losses.test_sinkhorn import _numpy_sinkhorn, _numpy_swav_loss
from tests.model_checks import check_config_roundtrip, check_saved_model


def _np(x):
    return np.asarray(ops.convert_to_numpy(x)).copy()


@pytest.fixture(autouse=True)
def _seeded():
    keras.utils.set_random_seed(0)


def _backbone(size=None):
    """(B, H, W, 3) -> (B, h, w, 4) maps, any H and W when size is None."""
    return keras.Sequential([keras.Input((size, size, 3)), keras.layers.Conv2D(4, 3, strides=2, name="conv"),
                             keras.layers.BatchNormalization(name="bn"), keras.layers.ReLU()], name="tiny")


def _swav(backbone=None, **kwargs):
    args = dict(projection_dims=[8, 4], num_prototypes=8, crop_counts=[2, 2], seed=0,
                augmentation={"image_size": 8})
    args.update(kwargs)
    return SwAV(backbone or _backbone(), **args)


def _crops(n, sizes=(8, 8, 5, 5), seed=0):
    rng = np.random.default_rng(seed)
    return [rng.random((n, s, s, 3)).astype("float32") for s in sizes]


def test_heads_prototypes_and_parameter_shapes():
    model = SwAV(_backbone(), augmentation=None)  # the paper's defaults
    assert model.projector.widths == (2048, 128) and model.projector.batch_norm
    assert not model.projector.output_batch_norm
    assert tuple(model.prototypes.kernel.shape) == (128, 3000)
    assert (model.temperature, model.epsilon, model.sinkhorn_iterations) == (0.1, 0.05, 3)
    assert model.crop_counts == [2, 6] and model.crops_for_assign == [0, 1] and model.queue_length == 0
    assert (model.queue_start_epoch, model.freeze_prototypes_epochs) == (15, 1)
    small = _swav(num_classes=3)
    # projector 4x8 (no bias) + BN(8) x4 + 8x4 + 4; prototypes 4x8 (no bias); probe 4x3 + 3
    assert small.projector.count_params() == 32 + 32 + 36
    assert [tuple(v.shape) for v in small.prototypes.trainable_weights] == [(4, 8)]  # no bias
    backbone = 3 * 3 * 3 * 4 + 4 + 2 * 4
    trainable = sum(int(np.prod(v.shape)) for v in small.trainable_variables)
    assert trainable == backbone + (32 + 16 + 36) + 32 + (4 * 3 + 3)
    kernel = _np(small.prototypes.kernel)
    np.testing.assert_allclose(np.linalg.norm(kernel, axis=0), 1.0, rtol=1e-6)  # unit columns at start
    assert isinstance(small.augmentation, MultiCropAugmentation) and small.augmentation.num_views == 4


def test_codes_come_only_from_the_assignment_crops():
    model = _swav(augmentation=None)
    rng = np.random.default_rng(1)
    scores = [ops.convert_to_tensor(rng.standard_normal((8, 8)).astype("float32") * 0.3) for _ in range(4)]
    features = [ops.zeros((8, 4)) for _ in range(4)]
    codes = [_np(c) for c in model.codes(scores, features, training=False)]
    assert len(codes) == 2
    np.testing.assert_allclose(codes[0], _numpy_sinkhorn(_np(scores[0])), rtol=2e-4, atol=1e-6)
    np.testing.assert_allclose(codes[1], _numpy_sinkhorn(_np(scores[1])), rtol=2e-4, atol=1e-6)
    other = scores[:2] + [ops.convert_to_tensor(rng.standard_normal((8, 8)).astype("float32")) for _ in range(2)]
    for a, b in zip(codes, model.codes(other, features, training=False)):  # the small crops change nothing
        np.testing.assert_array_equal(a, _np(b))
    moved = [scores[0] * 2.0] + scores[1:]
    assert not np.allclose(codes[0], _np(model.codes(moved, features, training=False)[0]))


def test_loss_is_the_swapped_prediction_near_ln_k_at_initialisation_and_ln_k_at_collapse():
    k = 16
    model = _swav(projection_dims=[16, 128], num_prototypes=k, augmentation=None)
    crops = _crops(16)
    out = model.forward_pass(crops, training=True)
    loss = float(model.compute_loss(crops, None, out, training=True))
    scores = np.split(_np(out["scores"]), 4)
    z = np.concatenate(np.split(_np(out["z"]), 4))
    np.testing.assert_allclose(np.linalg.norm(z, axis=1), 1.0, rtol=1e-5)  # z normalised
    np.testing.assert_allclose(np.concatenate(scores), z @ _np(model.prototypes.kernel), atol=1e-5)
    codes = [_numpy_sinkhorn(scores[0]), _numpy_sinkhorn(scores[1])]  # from crops 0 and 1 only
    assert loss == pytest.approx(_numpy_swav_loss(scores, codes, (0, 1), 0.1), rel=1e-4)
    # cosines of random 128-d directions are ~N(0, 1/128): logits s / 0.1 of std ~0.9, loss ~ ln K + 0.4
    assert math.log(k) < loss < math.log(k) + 1.0
    model.prototypes.kernel.assign(np.tile(_np(model.prototypes.kernel)[:, :1], (1, k)))  # all prototypes alike
    for metric in model.metrics:
        metric.reset_state()
    loss = float(model.compute_loss(crops, None, model.forward_pass(crops, training=True), training=True))
    assert loss == pytest.approx(math.log(k), rel=1e-5)  # the collapse the authors document: ln K
    logged = {m.name: float(_np(m.result())) for m in model.metrics}
    assert logged["loss_over_ln_k"] == pytest.approx(1.0, rel=1e-5)
    assert logged["prediction_entropy"] == pytest.approx(1.0, rel=1e-5)


def test_compile_defaults_are_the_papers():
    model = _swav()
    model.compile()  # 800 epochs of ImageNet at batch 256
    optimizer = model.optimizer
    steps = 1_281_167 // 256
    assert isinstance(optimizer, LARS) and optimizer.lars_weight_decay == pytest.approx(1e-6)
    assert optimizer.eta == pytest.approx(0.001) and optimizer.momentum == pytest.approx(0.9)
    assert not optimizer.exclude_bias_and_norm_from_decay and not optimizer.exclude_bias_and_norm_from_adaptation
    assert tuple(optimizer.exclude_from_decay_names) == ("prototypes",)
    schedule = optimizer._learning_rate
    assert schedule.peak_learning_rate == pytest.approx(0.6) and schedule.warmup_steps == 0
    assert schedule.total_steps == 800 * steps and schedule.alpha == pytest.approx(0.001)  # to 0.0006
    assert int(_np(model.steps_per_epoch)) == steps and int(_np(model.prototypes.frozen_steps)) == steps
    model.compile(batch_size=64, steps_per_epoch=10, epochs=5)
    assert model.optimizer._learning_rate.peak_learning_rate == pytest.approx(0.15)
    assert int(_np(model.prototypes.frozen_steps)) == 10
    optimizer.build(model.trainable_variables)
    assert not optimizer.decays(model.prototypes.kernel) and optimizer.decays(model.projector.blocks[0][0].kernel)


def test_compile_with_a_user_optimizer_still_sets_the_runs_epochs():
    """compile(optimizer=X, steps_per_epoch=) counts the prototypes' freeze and the queue's start in the run's epochs."""
    model = _swav(freeze_prototypes_epochs=2)
    model.compile(optimizer=keras.optimizers.SGD(0.1), batch_size=8, steps_per_epoch=3, epochs=4)
    assert isinstance(model.optimizer, keras.optimizers.SGD)
    assert int(_np(model.steps_per_epoch)) == 3 and int(_np(model.prototypes.frozen_steps)) == 6
    model.compile(optimizer=keras.optimizers.SGD(0.1), batch_size=64)  # ImageNet's epoch at batch 64
    assert int(_np(model.steps_per_epoch)) == 1_281_167 // 64
    assert int(_np(model.prototypes.frozen_steps)) == 2 * (1_281_167 // 64)


def test_the_queue_joins_sinkhorn_once_refilled_after_its_start_epoch():
    model = _swav(augmentation=None, queue_length=16, queue_start_epoch=1)
    model.set_steps_per_epoch(2)  # the queue starts at step 2; refilled (16 / 8 batches) from step 4
    rng = np.random.default_rng(3)
    scores = [ops.convert_to_tensor(rng.standard_normal((8, 8)).astype("float32") * 0.3) for _ in range(4)]
    features = [ops.convert_to_tensor(rng.standard_normal((8, 4)).astype("float32")) for _ in range(4)]
    alone = [_np(c) for c in model.codes(scores, features, training=False)]  # the batch alone
    for step in range(6):
        model.prototypes.step.assign(step + 1)  # as the step's forward pass leaves it
        before = _np(model.feature_queues[0].queue)
        codes = [_np(c) for c in model.codes(scores, features, training=True)]
        if step < 4:  # epoch 0, then the refill: written, not read
            for a, b in zip(codes, alone):
                np.testing.assert_array_equal(a, b)
        else:  # codes over [queue; batch], the batch's rows
            past = before @ _np(model.prototypes.kernel)
            expected = _numpy_sinkhorn(np.concatenate([past, _np(scores[0])]))[16:]
            np.testing.assert_allclose(codes[0], expected, rtol=2e-4, atol=1e-6)
            assert not np.allclose(codes[0], alone[0])
    written = _np(model.feature_queues[1].queue)  # crop 1's queue holds crop 1's features
    np.testing.assert_allclose(written[:8], _np(features[1]), rtol=1e-6)


def test_config_round_trip_and_keras_file(tmp_path):
    model = _swav(num_classes=3, queue_length=16)
    clone = check_config_roundtrip(model)
    assert clone.num_prototypes == 8 and clone.crop_counts == [2, 2] and clone.queue_length == 16
    assert type(clone.augmentation) is MultiCropAugmentation
    loaded = check_saved_model(model, _crops(4)[0], tmp_path)
    assert loaded.augmentation.get_config() == model.augmentation.get_config()


def _index(variables, variable):
    return [id(v) for v in variables].index(id(variable))


@pytest.mark.needs_tensorflow
def test_exact_resume_from_a_saved_model(tmp_path):
    """2 epochs straight = 1 epoch (prototypes frozen), save, load, 1 more: weights, step, queue, optimizer."""
    import tensorflow as tf

    crops = tuple(_crops(16, seed=5))  # 2 x 8 + 2 x 5 crops, from tf.data: views of two sizes
    labels = np.arange(16) % 3
    dataset = tf.data.Dataset.from_tensor_slices((crops, labels)).batch(8)

    def fit(model, epochs, initial_epoch=0):
        return model.fit(dataset, epochs=epochs, initial_epoch=initial_epoch, verbose=0).history

    model = _swav(num_classes=3, queue_length=16, queue_start_epoch=0, augmentation=None)
    model.compile(batch_size=8, steps_per_epoch=2, epochs=2)  # prototypes frozen for epoch 0
    model.optimizer.build(model.trainable_variables)
    start = [_np(v) for v in model.weights + model.optimizer.variables]
    fit(model, 2)
    straight = [_np(v) for v in model.weights], [_np(v) for v in model.optimizer.variables]
    kernel = model.prototypes.kernel
    assert np.abs(straight[0][_index(model.weights, kernel)] - start[_index(model.weights, kernel)]).max() > 0
    np.testing.assert_allclose(np.linalg.norm(_np(kernel), axis=0), 1.0, rtol=1e-5)  # unit after updates
    for v, value in zip(model.weights + model.optimizer.variables, start):
        v.assign(value)
    history = fit(model, 1)
    assert set(history) == {"loss", "loss_over_ln_k", "prediction_entropy", "probe_accuracy"}
    assert all(np.isfinite(v[0]) for v in history.values())
    np.testing.assert_array_equal(_np(kernel), start[_index(model.weights, kernel)])  # frozen: not moved
    momentum = model.optimizer.momentums[model.optimizer._get_variable_index(kernel)]
    np.testing.assert_array_equal(_np(momentum), 0.0)  # and its optimizer state untouched
    resumed = check_saved_model(model, crops[0][:4], tmp_path)
    assert int(_np(resumed.prototypes.step)) == 2 and int(_np(resumed.prototypes.frozen_steps)) == 2
    fit(resumed, 2, initial_epoch=1)
    assert len(resumed.weights) == len(straight[0])
    for a, b in zip(resumed.weights, straight[0]):  # backbone, heads, prototypes, queues, seeds, step
        np.testing.assert_array_equal(_np(a), b, err_msg=a.path)
    for a, b in zip(resumed.optimizer.variables, straight[1]):
        np.testing.assert_array_equal(_np(a), b, err_msg=a.path)


def test_bad_input_names_the_value_and_rule():
    with pytest.raises(ValueError, match=r"epsilon \(the entropy weight eps\) must be a number > 0; got epsilon=0"):
        _swav(epsilon=0)
    with pytest.raises(ValueError, match=r"epsilon .* must be a number > 0; got epsilon=-0.05"):
        _swav(epsilon=-0.05)
    with pytest.raises(ValueError, match=r"crop_counts must be a non-empty list of ints >= 1; got crop_counts=\[\]"):
        _swav(crop_counts=[])
    with pytest.raises(ValueError, match=r"distinct crops_for_assign"):
        _swav(crops_for_assign=[0, 4])
    with pytest.raises(ValueError, match=r"crops of size \[\(3, 3\)\] do not fit backbone tiny, whose input is fixed "
                                         r"at \(8, 8\)"):
        _swav(backbone=_backbone(8))  # 2 x 8 + 2 x 3 crops on a backbone that takes 8 x 8 only
    model = _swav(augmentation=None, num_prototypes=20)  # 20 > queue 0 + batch 8
    scores, features = [ops.zeros((8, 20))] * 4, [ops.zeros((8, 4))] * 4
    with pytest.raises(ValueError, match=r"20 prototypes are more than the queue \(0\) and batch \(8\) can assign"):
        model.codes(scores, features, training=True)
    queued = _swav(augmentation=None, num_prototypes=20, queue_length=16)  # 20 <= 16 + 8: accepted
    assert len(queued.codes(scores, features, training=False)) == 2
    with pytest.raises(ValueError, match=r"view 0 is a 8 x 8 crop, larger than the 6 x 6 images"):
        _swav()(np.zeros((2, 6, 6, 3), "float32"), training=True)
