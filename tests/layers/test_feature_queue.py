"""FeatureQueue: MoCo's ring buffer of keys (read before write, stop-gradient, float32, saved)."""

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.layers.feature_queue import FeatureQueue
from tests.model_checks import check_config_roundtrip


def _np(x):
    return np.asarray(ops.convert_to_numpy(x)).copy()


def _keys(n, dim=3, seed=0):
    return np.random.default_rng(seed).normal(size=(n, dim)).astype("float32")


class RingModel:
    """The queue in NumPy: K rows, the B oldest overwritten by each batch, pointer mod K."""

    def __init__(self, initial):
        self.queue, self.pointer = initial.copy(), 0

    def enqueue(self, keys):
        for key in keys:
            self.queue[self.pointer] = key
            self.pointer = (self.pointer + 1) % len(self.queue)


def test_starts_as_seeded_unit_vectors():
    queue = FeatureQueue(size=12, dim=3, seed=0)
    initial = _np(queue.queue)
    assert initial.shape == (12, 3) and int(_np(queue.pointer)) == 0
    np.testing.assert_allclose(np.linalg.norm(initial, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(_np(FeatureQueue(size=12, dim=3, seed=0).queue), initial)
    assert not np.allclose(_np(FeatureQueue(size=12, dim=3, seed=1).queue), initial)
    assert not queue.trainable_weights and len(queue.non_trainable_weights) == 2


def test_fifo_order_with_wrap_around_matches_numpy():
    queue = FeatureQueue(size=12, dim=3, seed=0)
    model = RingModel(_np(queue.queue))
    # Batches of 4, 6, 3 and 2 (each divides 12) wrap around the end three times.
    for step, batch in enumerate((4, 6, 3, 4, 2, 6, 12, 3)):
        keys = _keys(batch, seed=step)
        queue.enqueue(keys)
        model.enqueue(keys)
        np.testing.assert_array_equal(_np(queue.queue), model.queue)
        assert int(_np(queue.pointer)) == model.pointer
    assert model.pointer == (4 + 6 + 3 + 4 + 2 + 6 + 12 + 3) % 12 == 4


def test_call_reads_before_it_writes():
    queue = FeatureQueue(size=8, dim=3, seed=0)
    before = _np(queue.queue)
    keys = _keys(4)
    negatives = queue(keys)
    # The returned keys are the queue from before this call, and stay so after the write
    # (a copy, not a view of the variable: on PyTorch the write is in place).
    np.testing.assert_array_equal(_np(negatives), before)
    np.testing.assert_array_equal(_np(queue.queue)[:4], keys)
    np.testing.assert_array_equal(_np(queue.queue)[4:], before[4:])
    read = queue.read()
    queue.enqueue(_keys(4, seed=1))
    np.testing.assert_array_equal(_np(read)[:4], keys)


class _QueueProbe(keras.Model):
    """keys = x (through a frozen scale); loss = sum of what `queue(keys)` returns: the queue before the step."""

    def __init__(self, size, dim, **kwargs):
        super().__init__(name="queue_probe", **kwargs)
        self.scale = self.add_weight(shape=(), initializer="ones", name="scale")
        self.queue = FeatureQueue(size, dim, seed=0, name="queue")

    def call(self, x, training=False):
        return x * self.scale

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        negatives = self.queue(y_pred)  # (K, C) before this step's keys
        return ops.sum(negatives) + 0.0 * ops.sum(y_pred)


def test_read_before_write_inside_a_compiled_fit():
    model = _QueueProbe(8, 3)
    model.compile(optimizer=keras.optimizers.SGD(0.0))  # default jit_compile: traced on every backend
    ring = RingModel(_np(model.queue.queue))
    keys = _keys(12, seed=3)
    for start in range(0, 12, 4):
        batch = keys[start:start + 4]
        loss = model.fit(batch, batch_size=4, epochs=1, shuffle=False, verbose=0).history["loss"][0]
        np.testing.assert_allclose(loss, ring.queue.sum(), rtol=1e-5, atol=1e-5)  # without this batch's keys
        ring.enqueue(batch)
        np.testing.assert_allclose(_np(model.queue.queue), ring.queue, atol=1e-6)
    assert int(_np(model.queue.pointer)) == 12 % 8


class _RawReader(keras.Model):
    """keys = Dense(x); enqueue them, then read the variable *raw* (no stop-gradient of read())."""

    def __init__(self, **kwargs):
        super().__init__(name="raw_reader", **kwargs)
        self.dense = keras.layers.Dense(3, name="dense")
        self.queue = FeatureQueue(4, 3, seed=0, name="queue")

    def call(self, x, training=False):
        return self.dense(x)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        self.queue.enqueue(y_pred)
        stored = ops.convert_to_tensor(self.queue.queue)  # on JAX: the traced value just written
        return ops.sum(stored * stored) + 0.0 * ops.sum(y_pred)


def test_keys_enter_under_stop_gradient():
    model = _RawReader()
    model(np.ones((1, 2), "float32"))  # builds the Dense
    before = [_np(w) for w in model.dense.weights]
    model.compile(optimizer=keras.optimizers.SGD(1.0))
    model.fit(np.ones((4, 2), "float32"), batch_size=4, epochs=1, verbose=0)
    # The loss is the stored keys' energy: any gradient reaching the Dense through them would move it.
    for a, b in zip(model.dense.weights, before):
        np.testing.assert_array_equal(_np(a), b)
    np.testing.assert_allclose(_np(model.queue.queue), _np(model(np.ones((4, 2), "float32"))), atol=1e-6)


@pytest.fixture
def mixed_precision():
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_float16")
    try:
        yield
    finally:
        keras.config.set_dtype_policy(previous)


def test_float32_under_mixed_precision(mixed_precision):
    queue = FeatureQueue(size=8, dim=3, seed=0)
    assert queue.queue.dtype == "float32" and queue.pointer.dtype == "int32"
    keys = _keys(4, seed=5)
    initial = _np(queue.queue)
    # Called at top level (where Keras opens an autocast scope for a mixed layer) ...
    out = queue(ops.cast(keys, "float16"))
    assert keras.backend.standardize_dtype(out.dtype) == "float32"
    np.testing.assert_array_equal(_np(out), initial)  # not rounded to float16
    np.testing.assert_array_equal(_np(queue.queue)[:4], keys.astype("float16").astype("float32"))
    # ... and inside a float16 layer's call.
    dense = keras.layers.Dense(3, name="keys")

    class Encoder(keras.layers.Layer):
        def call(self, x):
            k = dense(x)
            return k, queue(k)

    keys16, negatives = Encoder(name="encoder")(keys)
    assert keras.backend.standardize_dtype(keys16.dtype) == "float16"
    assert keras.backend.standardize_dtype(negatives.dtype) == "float32"
    assert keras.backend.standardize_dtype(queue.read().dtype) == "float32"
    assert keras.backend.standardize_dtype(queue.queue.dtype) == "float32"


@keras.saving.register_keras_serializable(package="test_feature_queue")
class _Queued(keras.Model):
    def __init__(self, size=8, dim=3, **kwargs):
        super().__init__(**kwargs)
        self.size, self.dim = size, dim
        self.queue = FeatureQueue(size, dim, seed=0, name="queue")

    def call(self, x, training=False):
        return self.queue(x) if training else self.queue.read()

    def get_config(self):
        return {**super().get_config(), "size": self.size, "dim": self.dim}


def test_queue_and_pointer_saved_and_restored(tmp_path):
    model = _Queued()
    model(_keys(4), training=True)
    model(_keys(2, seed=1), training=True)  # pointer 6: mid-ring
    path = tmp_path / "queued.keras"
    model.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    assert int(_np(loaded.queue.pointer)) == 6
    np.testing.assert_array_equal(_np(loaded.queue.queue), _np(model.queue.queue))
    # The restored ring continues where it stopped: rows 6, 7, then 0, 1.
    keys = _keys(4, seed=2)
    loaded.queue.enqueue(keys)
    np.testing.assert_array_equal(_np(loaded.queue.queue)[[6, 7, 0, 1]], keys)
    assert int(_np(loaded.queue.pointer)) == 2


def test_config_roundtrip():
    clone = check_config_roundtrip(FeatureQueue(size=16, dim=4, seed=3, name="queue"))
    assert (clone.size, clone.dim, clone.seed) == (16, 4, 3)
    np.testing.assert_array_equal(_np(clone.queue), _np(FeatureQueue(size=16, dim=4, seed=3).queue))


def test_bad_input_names_the_numbers():
    queue = FeatureQueue(size=12, dim=3, seed=0)
    with pytest.raises(ValueError, match="size 12 must be divisible by the batch size 5"):
        queue.enqueue(_keys(5))
    with pytest.raises(ValueError, match=r"width 3 got keys of shape \(4, 2\)"):
        queue.enqueue(_keys(4, dim=2))
    with pytest.raises(ValueError, match=r"size must be an int >= 1; got size=0"):
        FeatureQueue(size=0, dim=3)
    with pytest.raises(ValueError, match=r"dim must be an int >= 1; got dim=2.5"):
        FeatureQueue(size=4, dim=2.5)
    assert int(_np(queue.pointer)) == 0  # nothing written by the refused calls
