"""The MoCo trainer (He et al. 2020; Chen et al. 2020) with tiny backbones."""

import math

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.models.moco import MOCO_PRESETS, MoCo
from tests.model_checks import InterruptAfterFirstEpoch, check_config_roundtrip, check_fit, check_saved_model


def _np(x):
    return np.asarray(ops.convert_to_numpy(x)).copy()


def _backbone(batch_norm=True, size=8):
    layers = [keras.Input((size, size, 3)), keras.layers.Conv2D(4, 3, strides=2, name="conv")]
    if batch_norm:
        layers.append(keras.layers.BatchNormalization(name="bn"))
    layers.append(keras.layers.ReLU())
    return keras.Sequential(layers, name="tiny")


def _moco(backbone=None, **kwargs):
    args = dict(version=2, queue_size=32, projection_dim=8, projection_hidden_dim=16, shuffle_bn_splits=1, seed=0)
    args.update(kwargs)
    return MoCo(backbone or _backbone(), **args)


def _views(n, size=8, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.random((n, size, size, 3)).astype("float32") for _ in range(2)]


def _keys(moco, view_k):
    """normalize(f_k(x_k)) computed outside the trainer (a backbone without batch norm)."""
    return _np(moco.key_encoder(view_k, training=True))


def test_queue_is_a_fifo_ring_of_the_last_keys():
    # m = 1 freezes the key encoder, so every batch's keys can be recomputed afterwards.
    moco = _moco(_backbone(batch_norm=False), momentum=1.0)
    moco.compile(optimizer=keras.optimizers.SGD(0.1))
    initial = _np(moco.queue)
    np.testing.assert_allclose(np.linalg.norm(initial, axis=1), 1.0, rtol=1e-5)  # random unit vectors
    view_q, view_k = _views(48)
    moco.fit([view_q, view_k], batch_size=8, epochs=1, shuffle=False, verbose=0)  # 6 batches of 8, K = 32
    assert int(_np(moco.queue_pointer)) == 48 % 32  # advanced by the batch and wrapped
    keys = _keys(moco, view_k)  # (48, 8)
    queue = _np(moco.queue)
    # Batches 4 and 5 overwrote rows 0-15 (the oldest); batches 2 and 3 still fill rows 16-31.
    np.testing.assert_allclose(queue[0:16], keys[32:48], atol=1e-5)
    np.testing.assert_allclose(queue[16:32], keys[16:32], atol=1e-5)
    moco.fit([view_q[:24], view_k[:24]], batch_size=8, epochs=1, shuffle=False, verbose=0)
    assert int(_np(moco.queue_pointer)) == (48 + 24) % 32


def test_momentum_update_follows_the_formula():
    moco = _moco(momentum=0.9)
    rng = np.random.default_rng(1)
    for weight in moco.key_encoder.weights:  # make theta_k differ from theta_q
        if weight.trainable is False and "moving" not in weight.path:
            weight.assign(_np(weight) + rng.normal(0, 0.1, weight.shape).astype("float32"))
    pairs = moco._momentum_pairs
    assert len(pairs) == len(moco.query_encoder.trainable_weights) > 0
    theta_k = [_np(k) for k, _ in pairs]
    theta_q = [_np(q) for _, q in pairs]
    moco.compile(optimizer=keras.optimizers.SGD(0.5))
    moco.fit(_views(8), batch_size=8, epochs=1, verbose=0)  # one step
    for (k, q), k0, q0 in zip(pairs, theta_k, theta_q):
        # eq. 2 with theta_q before this step's gradient update.
        np.testing.assert_allclose(_np(k), 0.9 * k0 + 0.1 * q0, atol=1e-6, rtol=0)
    assert any(not np.allclose(_np(q), q0) for (_, q), q0 in zip(pairs, theta_q))  # q did learn


def test_key_encoder_gets_no_gradient():
    moco = _moco(momentum=1.0)
    assert moco.key_encoder.trainable_weights == []
    key_ids = {id(v) for v in moco.key_encoder.weights}
    assert not key_ids & {id(v) for v in moco.trainable_variables}
    assert len(moco.trainable_variables) == len(moco.query_encoder.trainable_weights)
    key_params = [_np(k) for k, _ in moco._momentum_pairs]
    query_params = [_np(q) for _, q in moco._momentum_pairs]
    # A large step with coupled weight decay: anything seen by the optimizer would move.
    moco.compile(batch_size=8, learning_rate=1.0, weight_decay=0.1)
    moco.fit(_views(16), batch_size=8, epochs=1, verbose=0)
    for (k, q), k0, q0 in zip(moco._momentum_pairs, key_params, query_params):
        np.testing.assert_array_equal(_np(k), k0)
    assert all(not np.array_equal(_np(q), q0) for (_, q), q0 in zip(moco._momentum_pairs, query_params))


def test_loss_at_initialisation_is_log_k_plus_1():
    # With lr 0 the encoders stay at their initialisation; once the queue holds their keys and the
    # key view is an unrelated image, the K + 1 logits are exchangeable: loss ~ log(K + 1)
    # (above it by Jensen's gap). With the random initial queue it is lower.
    keras.utils.set_random_seed(0)
    k = 256
    moco = _moco(queue_size=k, projection_dim=128, shuffle_bn_splits=4)
    moco.compile(optimizer=keras.optimizers.SGD(0.0))
    view_q, view_k = _views(k + 64, seed=2)
    first = moco.fit([view_q[:64], view_k[:64]], batch_size=64, verbose=0).history["loss"][0]
    moco.fit([view_q[64:], view_k[64:]], batch_size=64, verbose=0, shuffle=False)  # fill the queue
    later = moco.fit([view_q[:64], view_k[:64]], batch_size=64, verbose=0).history
    # Over initialisations (seeds 0-5, torch) the gap was -0.003 to 0.16 and the first loss 1.3-1.8.
    assert math.log(k + 1) - 0.15 <= later["loss"][0] <= math.log(k + 1) + 0.4
    assert first < math.log(k + 1) - 1.0
    assert later["contrastive_accuracy"][0] <= 0.1  # chance is 1 / 257


def test_shuffle_bn_normalises_shuffled_groups_and_restores_the_order():
    moco = _moco(shuffle_bn_splits=4)
    inputs = keras.Input((1,))
    centre = keras.Model(inputs, keras.layers.Lambda(lambda t: t - ops.mean(t, axis=0, keepdims=True))(inputs))
    x = np.arange(16, dtype="float32")[:, None] ** 1.5  # distinct values: group means identify the groups
    for shuffle in (False, True):
        out = _np(moco._encode(centre, x, training=True, shuffle=shuffle))
        means = np.round(x - out, 4)[:, 0]  # each sample's group mean: the output is in input order
        groups = [np.flatnonzero(means == m) for m in np.unique(means)]
        assert sorted(len(g) for g in groups) == [4, 4, 4, 4]
        for g in groups:
            np.testing.assert_allclose(x[g].mean(), means[g[0]], rtol=1e-4)
        contiguous = all(np.array_equal(g, np.arange(g[0], g[0] + 4)) and g[0] % 4 == 0 for g in groups)
        assert contiguous == (not shuffle)  # queries: the given order; keys: a random permutation
    # Inference: one group.
    np.testing.assert_allclose(_np(moco._encode(centre, x, training=False, shuffle=True)), x - x.mean(), rtol=1e-5)


def test_batch_size_rules_name_both_numbers():
    moco = _moco(queue_size=40, shuffle_bn_splits=2)
    moco.compile(optimizer="sgd")
    with pytest.raises(ValueError, match="queue_size 40 must be divisible by the batch size 16"):
        moco.fit(_views(16), batch_size=16, verbose=0)
    moco = _moco(queue_size=36, shuffle_bn_splits=8)
    moco.compile(optimizer="sgd")
    with pytest.raises(ValueError, match="batch size 12 must be divisible by shuffle_bn_splits 8"):
        moco.fit(_views(12), batch_size=12, verbose=0)


def test_bad_arguments_name_the_value_and_rule():
    with pytest.raises(ValueError, match="version must be 1 or 2; got 3"):
        _moco(version=3)
    with pytest.raises(ValueError, match=r"momentum m must be in \[0, 1\]; got 1.5"):
        _moco(momentum=1.5)
    with pytest.raises(ValueError, match="queue_size must be an int >= 1; got 0"):
        _moco(queue_size=0)
    with pytest.raises(ValueError, match="temperature must be > 0"):
        _moco(temperature=-1.0)
    with pytest.raises(ValueError, match="known image input shape"):
        MoCo(keras.Sequential([keras.layers.Dense(3)]))
    with pytest.raises(ValueError, match="needs two views"):
        _moco(augmentation=None).compute_loss(_views(8)[0], y_pred=np.zeros((8, 8), "float32"))
    with pytest.raises(ValueError, match="image-shaped y"):
        _moco().compute_loss(_views(8)[0], _views(8)[1], np.zeros((8, 8), "float32"))
    with pytest.raises(ValueError, match="loss .* fixed"):
        _moco().compile(loss="mse")
    with pytest.raises(ValueError, match="Unknown MoCo preset 'moco_v3'"):
        MoCo.from_preset("moco_v3")
    with pytest.raises(ValueError, match="either backbone= or image_shape="):
        MoCo.from_preset("moco_v1_resnet50", backbone=_backbone(), image_shape=(8, 8, 3))


def test_compile_defaults_are_the_papers():
    v1 = _moco(version=1)
    v1.compile(batch_size=512, steps_per_epoch=100, epochs=200)
    optimizer = v1.optimizer
    assert optimizer.momentum == pytest.approx(0.9) and optimizer.l2 == pytest.approx(1e-4)
    schedule = optimizer._learning_rate
    assert schedule.initial_learning_rate == pytest.approx(0.06)  # 0.03 x 512 / 256
    assert schedule.boundaries == [12000, 16000] and schedule.factor == pytest.approx(0.1)  # epochs 120, 160
    assert v1.temperature == pytest.approx(0.07)
    v2 = _moco(version=2)
    v2.compile()
    schedule = v2.optimizer._learning_rate
    assert type(schedule).__name__ == "WarmupCosineDecay" and schedule.warmup_steps == 0
    assert schedule.peak_learning_rate == pytest.approx(0.03)
    assert schedule.total_steps == 200 * (1_281_167 // 256)  # 200 ImageNet epochs
    assert v2.temperature == pytest.approx(0.2)


def test_heads_and_presets():
    v1, v2 = _moco(version=1, projection_dim=128), _moco(version=2, projection_dim=128, projection_hidden_dim=2048)
    # v1: one linear layer 4 -> 128; v2: 4 -> 2048 (ReLU) -> 128. The backbone has 3*3*3*4+4 + 2*4 = 120.
    backbone = 3 * 3 * 3 * 4 + 4 + 2 * 4
    assert v1.query_encoder.count_params() - backbone - 2 * 4 == 4 * 128 + 128
    assert v2.query_encoder.count_params() - backbone - 2 * 4 == 4 * 2048 + 2048 + 2048 * 128 + 128
    assert MOCO_PRESETS["moco_v1_resnet50"]["arguments"] == {
        "version": 1, "queue_size": 65536, "momentum": 0.999, "temperature": 0.07}
    assert MOCO_PRESETS["moco_v2_resnet50"]["arguments"]["temperature"] == 0.2
    assert MOCO_PRESETS["moco_v2_resnet20_cifar"]["backbone"] == {"preset": "resnet20_cifar", "overrides": {}}
    # The MNIST ablation's preset: the paper's m = 0.999 on a ResNet-8 (one block per stage, 16-32-64).
    assert MOCO_PRESETS["moco_v2_resnet8_mnist"]["backbone"] == {
        "preset": "resnet20_cifar", "overrides": {"stage_blocks": [1, 1, 1]}}
    assert MOCO_PRESETS["moco_v2_resnet8_mnist"]["arguments"] == {
        "version": 2, "queue_size": 2048, "momentum": 0.999, "temperature": 0.2, "projection_hidden_dim": 64}
    # A preset's MoCo arguments on another backbone (building ResNets is left to their own tests).
    moco = MoCo.from_preset("moco_v2_resnet20_cifar", backbone=_backbone(size=16), queue_size=64)
    assert moco.queue_size == 64 and moco.momentum == 0.99 and moco.projection_hidden_dim == 64
    assert moco.temperature == pytest.approx(0.2) and moco.shuffle_bn_splits == 8
    assert moco.encoder.output_shape == (None, 4)
    assert moco.query_encoder.output_shape == (None, 128)
    assert moco.augmentation.version == 2 and moco.augmentation.image_size == (16, 16)
    # Key encoder: the same architecture, initialised equal, every variable non-trainable.
    assert moco.key_encoder.count_params() == moco.query_encoder.count_params()
    for k, q in zip(moco.key_encoder.weights, moco.query_encoder.weights):
        np.testing.assert_array_equal(_np(k), _np(q))
        assert k is not q and not k.trainable


def test_fit_on_raw_images_save_load_and_resume(tmp_path):
    moco = _moco(shuffle_bn_splits=2, momentum=0.9)
    moco.compile(batch_size=8, steps_per_epoch=2, epochs=2)
    images = _views(16)[0]
    history = check_fit(moco, images, batch_size=8, epochs=2, shuffle=False)  # views drawn inside
    assert set(history.history) == {"loss", "contrastive_accuracy"}
    assert int(_np(moco.queue_pointer)) == 0  # 4 steps x 8 = 32 = K
    clone = check_config_roundtrip(moco)
    assert clone.queue_size == 32 and clone.temperature == pytest.approx(0.2)
    # Saved and loaded: queue, pointer, key encoder (differing from the query encoder) and optimizer.
    loaded = check_saved_model(moco, images[:4], tmp_path)
    np.testing.assert_array_equal(_np(loaded.queue), _np(moco.queue))
    assert not np.allclose(_np(loaded.key_encoder.weights[0]), _np(loaded.query_encoder.weights[0]))
    for a, b in zip(loaded.key_encoder.weights, moco.key_encoder.weights):
        np.testing.assert_array_equal(_np(a), _np(b))


def test_backup_and_restore_resumes_queue_and_key_encoder(tmp_path):
    views = _views(24, seed=4)
    seen = {}

    class Record(keras.callbacks.Callback):
        """State at the end of epoch 0 (then stop, as a crash would), and when training (re)starts."""

        def __init__(self, interrupt):
            super().__init__()
            self.interrupt = interrupt

        def _state(self):
            model = self.model
            return [_np(model.queue), _np(model.queue_pointer)] + [_np(w) for w in model.key_encoder.weights]

        def on_train_begin(self, logs=None):
            seen.setdefault("begin", []).append(self._state())

        def on_epoch_end(self, epoch, logs=None):
            if self.interrupt and epoch == 0:
                seen["saved"] = self._state()
                raise RuntimeError("interrupted")

    def run(interrupt):
        moco = _moco(momentum=0.9, queue_size=16, seed=None)  # a fresh random queue each run
        moco.compile(optimizer=keras.optimizers.SGD(0.1, momentum=0.9))
        backup = keras.callbacks.BackupAndRestore(str(tmp_path / "backup"))
        moco.fit(views, batch_size=8, epochs=2, shuffle=False, verbose=0, callbacks=[backup, Record(interrupt)])
        return moco

    with pytest.raises(RuntimeError, match="interrupted"):
        run(interrupt=True)
    resumed = run(interrupt=False)
    # The resumed run starts from the queue, pointer and key encoder saved after epoch 0 ...
    assert int(seen["saved"][1]) == 24 % 16
    for restored, saved in zip(seen["begin"][1], seen["saved"]):
        np.testing.assert_array_equal(restored, saved)
    assert not np.allclose(seen["begin"][0][0], seen["saved"][0])  # (the queue did change in epoch 0)
    # ... and trains one more epoch from there.
    assert int(_np(resumed.queue_pointer)) == 48 % 16


def test_any_keras_backbone_including_keras_hub():
    keras_hub = pytest.importorskip("keras_hub")
    backbone = keras_hub.models.ResNetBackbone(
        input_conv_filters=[64], input_conv_kernel_sizes=[3], stackwise_num_filters=[64, 16],
        stackwise_num_blocks=[1, 1], stackwise_num_strides=[1, 2], block_type="basic_block",
        image_shape=(8, 8, 3),
    )
    moco = MoCo(backbone, version=1, queue_size=16, projection_dim=8, shuffle_bn_splits=1, seed=0)
    assert moco.encoder.output_shape[-1] == 16
    moco.compile(optimizer=keras.optimizers.SGD(0.01))
    check_fit(moco, _views(16), batch_size=8, epochs=1)
    assert int(_np(moco.queue_pointer)) == 0


def test_resumed_run_draws_the_same_views_and_key_permutations(tmp_path):
    """Interrupted after epoch 0 and resumed with BackupAndRestore: the uninterrupted run's end state.

    The views (drawn inside the step from raw images) and the key permutation come from
    SeedGenerators, which no checkpoint holds; EpochSeeds sets them from (seed, epoch)."""
    from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds

    images = _views(16, seed=5)[0]

    def run(name, interrupt=False):
        keras.utils.set_random_seed(0)  # the same initial weights in every run
        moco = _moco(shuffle_bn_splits=2, momentum=0.9)  # augmentation "default", seed 0
        moco.compile(optimizer=keras.optimizers.SGD(0.1, momentum=0.9))
        callbacks = [keras.callbacks.BackupAndRestore(str(tmp_path / name)), EpochSeeds(7)]
        callbacks += [InterruptAfterFirstEpoch()] if interrupt else []
        moco.fit(images, batch_size=8, epochs=2, shuffle=False, verbose=0, callbacks=callbacks)
        return [_np(w) for w in moco.weights if "seed_generator" not in w.path]

    straight = run("straight")
    with pytest.raises(RuntimeError, match="interrupted"):
        run("broken", interrupt=True)
    # (Without EpochSeeds the resumed epoch re-draws epoch 0's views and this fails.)
    for a, b in zip(straight, run("broken")):  # queue, pointer, both encoders, BN statistics
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
