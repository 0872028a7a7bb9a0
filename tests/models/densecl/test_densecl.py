"""The DenseCL trainer (Wang et al. 2021) with tiny backbones."""

import math

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.models import DenseCL, MoCo
from keras_paperzoo.models.densecl import DENSECL_PRESETS, dense_correspondence
from tests.model_checks import InterruptAfterFirstEpoch, check_config_roundtrip, check_fit, check_saved_model


def _np(x):
    return np.asarray(ops.convert_to_numpy(x)).copy()


def _backbone(batch_norm=True, size=8, filters=4, strides=2, padding="valid"):
    layers = [keras.Input((size, size, 3)), keras.layers.Conv2D(filters, 3, strides=strides, padding=padding,
                                                                name="conv")]
    if batch_norm:
        layers.append(keras.layers.BatchNormalization(name="bn"))
    layers.append(keras.layers.ReLU())
    return keras.Sequential(layers, name="tiny")  # (B, 3, 3, 4) maps at 8 x 8


def _densecl(backbone=None, **kwargs):
    args = dict(queue_size=32, projection_dim=8, projection_hidden_dim=16, shuffle_bn_splits=1, seed=0)
    args.update(kwargs)
    return DenseCL(backbone or _backbone(), **args)


def _views(n, size=8, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.random((n, size, size, 3)).astype("float32") for _ in range(2)]


def _log_softmax_positive(logits):
    """-log softmax(logits)[:, 0], NumPy, float64."""
    top = logits.max(axis=1, keepdims=True)
    return (np.log(np.exp(logits - top).sum(axis=1)) + top[:, 0]) - logits[:, 0]


def test_correspondence_finds_a_known_shift():
    # Two crops of one scene, the second shifted by (2, 1) pixels. A stride-1 'valid'
    # convolution is translation-equivariant, so backbone location (i, j) of view 1
    # equals location (i - 2, j - 1) of view 2 wherever both exist.
    keras.utils.set_random_seed(0)
    model = _densecl(_backbone(batch_norm=False, size=12, filters=16, strides=1), queue_size=8)
    scene = np.random.default_rng(3).random((2, 14, 14, 3)).astype("float32")
    view_1, view_2 = scene[:, 0:12, 0:12], scene[:, 2:14, 1:13]
    features_1 = model.query_encoder(view_1)["features"]  # (2, 10, 10, 16)
    features_2 = model.key_encoder(view_2)["features"]
    matches = _np(dense_correspondence(features_1, features_2)).reshape(2, 10, 10)
    rows, cols = np.meshgrid(np.arange(2, 10), np.arange(1, 10), indexing="ij")  # seen in both views
    expected = (rows - 2) * 10 + (cols - 1)
    np.testing.assert_array_equal(matches[:, 2:, 1:], np.broadcast_to(expected, (2, 8, 9)))
    # A permutation of the locations is recovered exactly too (the notes' Sec. 18.8 test).
    perm = np.random.default_rng(1).permutation(100)
    flat = _np(features_1).reshape(2, 100, 16)
    np.testing.assert_array_equal(_np(dense_correspondence(flat, flat[:, perm])), np.tile(np.argsort(perm), (2, 1)))


def test_loss_matches_a_numpy_reference_of_the_authors_step():
    # m = 1 freezes the key encoder at the query encoder's initial weights and one group of
    # batch norm-free encoders gives keys computable outside the step.
    model = _densecl(_backbone(batch_norm=False, filters=8), momentum=1.0, augmentation=None)
    view_q, view_k = _views(8, seed=1)
    queue, dense_queue = _np(model.queue), _np(model.dense_queue.queue)
    query = {k: _np(v).astype("float64") for k, v in model.query_encoder(view_q).items()}
    key = {k: _np(v).astype("float64") for k, v in model.key_encoder(view_k).items()}
    loss = float(_np(model.compute_loss(x=(view_q, view_k), training=True)))
    # The authors' densecl.py, in NumPy.
    q_b = query["features"].reshape(8, 9, 8)
    k_b = key["features"].reshape(8, 9, 8)
    q_b /= np.maximum(np.linalg.norm(q_b, axis=-1, keepdims=True), 1e-12)  # F.normalize
    k_b /= np.maximum(np.linalg.norm(k_b, axis=-1, keepdims=True), 1e-12)
    ind = np.argmax(q_b @ k_b.transpose(0, 2, 1), axis=2)  # (8, 9)
    q_grid, k_grid = query["dense"].reshape(8, 9, 8), key["dense"].reshape(8, 9, 8)
    indexed_k_grid = np.take_along_axis(k_grid, ind[..., None], axis=1)  # (8, 9, 8)
    l_pos_dense = (q_grid * indexed_k_grid).sum(-1).reshape(-1, 1)  # (72, 1)
    l_neg_dense = q_grid.reshape(-1, 8) @ dense_queue.T  # (72, 32)
    l_pos = (query["q"] * key["q"]).sum(-1, keepdims=True)
    l_neg = query["q"] @ queue.T
    loss_single = _log_softmax_positive(np.concatenate([l_pos, l_neg], 1) / 0.2).mean()
    loss_dense = _log_softmax_positive(np.concatenate([l_pos_dense, l_neg_dense], 1) / 0.2).mean()
    assert loss == pytest.approx(0.5 * loss_single + 0.5 * loss_dense, rel=1e-5)
    assert not np.all(ind == np.arange(9))  # the views differ: the matching is not the identity
    # Both queues then hold this batch's keys: k, and the pooled dense keys (not the global ones).
    np.testing.assert_allclose(_np(model.queue)[:8], key["q"], atol=1e-6)
    np.testing.assert_allclose(_np(model.dense_queue.queue)[:8], key["dense_pooled"], atol=1e-6)
    np.testing.assert_allclose(_np(model.queue)[8:], queue[8:])


def test_dense_weight_zero_is_moco_v2_on_the_same_weights():
    backbone_d, backbone_m = _backbone(batch_norm=False), _backbone(batch_norm=False)
    densecl = _densecl(backbone_d, dense_weight=0.0, augmentation=None, momentum=0.9)
    moco = MoCo(backbone_m, version=2, queue_size=32, projection_dim=8, projection_hidden_dim=16,
                shuffle_bn_splits=1, augmentation=None, momentum=0.9, seed=0)
    for source, target in ((densecl.backbone, moco.backbone), (densecl.head, moco.head)):
        for a, b in zip(source.weights, target.weights):
            b.assign(_np(a))
    for model in (densecl, moco):
        for key_weight, query_weight in model._momentum_pairs:
            key_weight.assign(_np(query_weight))
    moco.key_queue.queue.assign(_np(densecl.queue))
    views = tuple(_views(8, seed=2))
    for step in range(2):  # the second step after a momentum update and an enqueue
        loss_d = float(_np(densecl.compute_loss(x=views, training=True)))
        loss_m = float(_np(moco.compute_loss(x=views, training=True)))
        assert loss_d == pytest.approx(loss_m, rel=1e-6)
    assert float(_np(densecl.dense_loss_tracker.result())) > 1.0  # computed, weighted 0
    np.testing.assert_allclose(_np(densecl.queue), _np(moco.queue), atol=1e-6)


def test_loss_at_initialisation_is_log_k_plus_1_per_term():
    # lr 0 keeps the encoders at initialisation; once both queues hold their keys and the key
    # view is an unrelated image, the global term's K + 1 logits are near exchangeable:
    # ~ log(K + 1). The dense positive is the best match of S = 9 locations of that image,
    # so it is the largest of S near-exchangeable logits: the dense term lies between
    # log(K / S + 1) (the positive as likely as all S together) and log(K + 1).
    keras.utils.set_random_seed(0)
    k = 64
    model = _densecl(queue_size=k, projection_dim=128, shuffle_bn_splits=2, augmentation=None)
    model.compile(optimizer=keras.optimizers.SGD(0.0))
    view_q, view_k = _views(k + 16, seed=2)
    model.fit([view_q[16:], view_k[16:]], batch_size=16, verbose=0, shuffle=False)  # fill both queues
    later = model.fit([view_q[:16], view_k[:16]], batch_size=16, verbose=0).history
    assert math.log(k + 1) - 0.3 <= later["global_loss"][0] <= math.log(k + 1) + 0.3, later
    assert math.log(k / 9 + 1) <= later["dense_loss"][0] <= math.log(k + 1), later
    assert later["loss"][0] == pytest.approx(0.5 * later["global_loss"][0] + 0.5 * later["dense_loss"][0], rel=1e-5)
    assert later["contrastive_accuracy"][0] <= 0.2


def test_bad_arguments_name_the_value_and_rule():
    with pytest.raises(ValueError, match=r"dense_weight \(lambda\) must be a number in \[0, 1\]; got 1.5"):
        _densecl(dense_weight=1.5)
    pooled = keras.Sequential([keras.Input((8, 8, 3)), keras.layers.Conv2D(4, 3), keras.layers.GlobalAveragePooling2D()],
                              name="pooled")
    with pytest.raises(ValueError, match=r"spatial feature map .* pooled returns \(None, 4\)"):
        _densecl(pooled)
    with pytest.raises(ValueError, match="queue_size must be an int >= 1; got 0"):
        _densecl(queue_size=0)
    with pytest.raises(ValueError, match="temperature must be > 0"):
        _densecl(temperature=0.0)
    with pytest.raises(ValueError, match="DenseCL's queue_size 32 must be divisible by the batch size 12"):
        model = _densecl(augmentation=None)
        model.compile(optimizer="sgd")
        model.fit(_views(12), batch_size=12, verbose=0)
    with pytest.raises(ValueError, match="Unknown DenseCL preset 'densecl_v2'"):
        DenseCL.from_preset("densecl_v2")


def test_presets_and_compile_defaults_are_the_papers():
    assert DENSECL_PRESETS["densecl_resnet50"]["arguments"] == {
        "queue_size": 65536, "momentum": 0.999, "temperature": 0.2, "dense_weight": 0.5}
    model = DenseCL.from_preset("densecl_resnet8_cifar", backbone=_backbone(size=16), queue_size=64)
    assert model.dense_weight == 0.5 and model.momentum == 0.99 and model.shuffle_bn_splits == 8
    spec = model.query_encoder.compute_output_spec(keras.KerasTensor((None, 16, 16, 3)))
    assert tuple(spec["dense"].shape) == (None, 7, 7, 128) and tuple(spec["q"].shape) == (None, 128)
    assert model.augmentation.version == 2  # MoCo v2's aug+
    # Heads: global 4 -> 64 -> 128 on the pooled map, dense the same as 1 x 1 convolutions.
    assert model.dense_head.count_params() == model.head.count_params() == 4 * 64 + 64 + 64 * 128 + 128
    model.compile()
    schedule = model.optimizer._learning_rate
    assert type(schedule).__name__ == "WarmupCosineDecay" and schedule.peak_learning_rate == pytest.approx(0.03)
    assert model.optimizer.momentum == pytest.approx(0.9) and model.optimizer.l2 == pytest.approx(1e-4)
    assert model.temperature == pytest.approx(0.2)


def test_fit_save_load_config_and_exact_resume(tmp_path):
    """Interrupted after epoch 0 and resumed with BackupAndRestore: the uninterrupted run's end state.

    Given views (drawing them inside is MoCo's code, tested there; trainer_zoo runs it for
    DenseCL); the key permutation of Shuffling BN comes from a SeedGenerator that EpochSeeds sets."""
    from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds

    views = _views(16, seed=5)

    def run(name, interrupt=False):
        keras.utils.set_random_seed(0)
        model = _densecl(shuffle_bn_splits=2, momentum=0.9, queue_size=16, augmentation=None)
        model.compile(optimizer=keras.optimizers.SGD(0.1, momentum=0.9))
        callbacks = [keras.callbacks.BackupAndRestore(str(tmp_path / name)), EpochSeeds(7)]
        callbacks += [InterruptAfterFirstEpoch()] if interrupt else []
        history = check_fit(model, views, batch_size=8, epochs=2, shuffle=False, callbacks=callbacks)
        return model, history.history

    model, history = run("straight")
    assert set(history) == {"loss", "global_loss", "dense_loss", "contrastive_accuracy", "dense_accuracy"}
    assert int(_np(model.dense_queue.pointer)) == 32 % 16
    clone = check_config_roundtrip(model)
    assert clone.dense_weight == 0.5 and clone.queue_size == 16
    loaded = check_saved_model(model, views[0][:4], tmp_path)  # safe mode: same outputs, weights, optimizer
    np.testing.assert_array_equal(_np(loaded.dense_queue.queue), _np(model.dense_queue.queue))
    straight = [_np(w) for w in model.weights if "seed_generator" not in w.path]
    with pytest.raises(RuntimeError, match="interrupted"):
        run("broken", interrupt=True)
    resumed, _ = run("broken")
    resumed = [_np(w) for w in resumed.weights if "seed_generator" not in w.path]
    assert len(straight) == len(resumed)
    for a, b in zip(straight, resumed):  # both queues and pointers, both encoders, BN statistics
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_keras_hub_backbone_gives_its_map():
    keras_hub = pytest.importorskip("keras_hub")
    backbone = keras_hub.models.ResNetBackbone(
        input_conv_filters=[64], input_conv_kernel_sizes=[3], stackwise_num_filters=[64, 16],
        stackwise_num_blocks=[1, 1], stackwise_num_strides=[1, 2], block_type="basic_block",
        image_shape=(16, 16, 3),
    )
    model = DenseCL(backbone, queue_size=16, projection_dim=8, projection_hidden_dim=8, shuffle_bn_splits=1,
                    seed=0)
    h, w = backbone.output_shape[1:3]
    spec = model.query_encoder.compute_output_spec(keras.KerasTensor((None, 16, 16, 3)))
    assert tuple(spec["dense"].shape) == (None, h, w, 8) and h * w > 1  # (fit: as any backbone's, above)
