"""Minibatches in a fresh, reproducible order every epoch.

The order of epoch e is a permutation drawn from (seed, e), and the random state of
the augmentation for batch i of epoch e is set from (seed, e, i), so a run resumed at
epoch e sees exactly the batches, augmented alike, that the uninterrupted run saw.
`StreamBatches` does the same for a deterministic stream (a seeded `tf.data`
pipeline): epoch e is a fixed slice of it. Both are meant for `fit(shuffle=False)`:
with Keras's default `shuffle=True`, `fit` reorders a `PyDataset`'s batches with
Python's global `random`, which a resumed run does not repeat unless its state is
checkpointed too (`keras_paperzoo.callbacks.RunCheckpoint` does).
"""

import numpy as np

import keras
from keras_paperzoo.optional import require_tensorflow


def _check_finite(x, name):
    """A float array with NaN or inf would train to NaN weights: refuse it, naming where."""
    x = np.asarray(x)
    if np.issubdtype(x.dtype, np.floating) and x.size:
        bad = ~np.isfinite(x)
        if bad.any():
            first = np.unravel_index(np.argmax(bad), x.shape)
            raise ValueError(
                f"{name} has {int(bad.sum())} non-finite values ({x[first]} at index {tuple(int(i) for i in first)}); "
                "the batches must be finite"
            )



RECENT_BATCHES = 16  # batches kept for a data adapter that asks again for ones already served


class SetEpoch(keras.callbacks.Callback):
    """Calls `batches.set_epoch(epoch)` as each epoch of `fit` begins: the `epoch_callback()` of the batches here."""

    def __init__(self, batches):
        super().__init__()
        self.batches = batches

    def on_epoch_begin(self, epoch, logs=None):
        self.batches.set_epoch(epoch)


class EpochShuffledBatches(keras.utils.PyDataset):
    """A `PyDataset` over in-memory arrays, reshuffled each epoch from (seed, epoch).

    Args:
        x: array (N, ...), or a dict of such arrays (a model's named inputs). y: optional
            array (N, ...).
        batch_size: int. drop_remainder: drop the last partial batch (default
            True: the GAN splits each batch into k equal minibatches).
        seed: int.
        steps_per_epoch: optional int, use only the first this-many batches of
            each epoch's permutation (pass it here, not to `fit`: `fit` would carry
            its iterator across epochs, so a resumed run would see other batches).
        augment: optional callable applied to each batch of `x` (e.g. a Keras
            augmentation layer, called with `training=True`, its `SeedGenerator`s
            reset from (seed, epoch, batch)); one with an `augment_numpy(x, rng)`
            method (`CifarAugmentation`) runs that instead, with a NumPy
            generator seeded from (seed, epoch, batch).
        with_index: yield x as {"images": batch, "index": the batch's rows in `x`}
            (InstDisc's and CMC's memory bank reads each image's own row;
            `keras_paperzoo/data/indexed.py`).

    Example:

    ```python
    batches = EpochShuffledBatches(images, batch_size=100, seed=0)
    model.fit(batches, epochs=5, shuffle=False, callbacks=[batches.epoch_callback()])
    ```
    """

    def __init__(self, x, y=None, batch_size=32, drop_remainder=True, seed=0, steps_per_epoch=None, augment=None,
                 with_index=False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int; got {batch_size!r}.")
        if isinstance(x, dict) and (augment is not None or with_index):
            raise ValueError("augment and with_index take an array x (images), not a dict of inputs.")
        if isinstance(x, dict):
            sizes = {name: len(v) for name, v in x.items()}
            if len(set(sizes.values())) != 1:
                raise ValueError(f"x's inputs must have one number of examples; got {sizes}.")
            for name, v in x.items():
                _check_finite(v, f"x[{name!r}]")
        else:
            _check_finite(x, "x")
        self.size = len(next(iter(x.values()))) if isinstance(x, dict) else len(x)
        if self.size < batch_size and drop_remainder:
            raise ValueError(
                f"batch_size {batch_size} is larger than the dataset ({self.size} examples)."
            )
        self.x, self.y = x, y
        self.batch_size = batch_size
        self.drop_remainder = drop_remainder
        self.seed = seed
        self.epoch = 0
        self._order = None
        if steps_per_epoch is not None and (not isinstance(steps_per_epoch, int) or steps_per_epoch < 1):
            raise ValueError(f"steps_per_epoch must be a positive int; got {steps_per_epoch!r}.")
        self.steps_per_epoch = steps_per_epoch
        self.augment = augment
        self.with_index = bool(with_index)

    def __len__(self):
        n = self.size / self.batch_size
        batches = int(np.floor(n)) if self.drop_remainder else int(np.ceil(n))
        return min(batches, self.steps_per_epoch or batches)

    def set_epoch(self, epoch):
        self.epoch = int(epoch)
        self._order = None

    def _permutation(self):
        if self._order is None:
            rng = np.random.default_rng([self.seed, self.epoch])
            self._order = rng.permutation(self.size)
        return self._order

    def __getitem__(self, index):
        rows = self._permutation()[index * self.batch_size : (index + 1) * self.batch_size]
        if isinstance(self.x, dict):
            x = {name: v[rows] for name, v in self.x.items()}
            return x if self.y is None else (x, self.y[rows])
        x = self.x[rows]
        if hasattr(self.augment, "augment_numpy"):  # NumPy fast path (CifarAugmentation), drawn from (seed, epoch, index)
            x = self.augment.augment_numpy(x, np.random.default_rng([self.seed, self.epoch, index]))
        elif self.augment is not None:
            self._reseed_augmentation(index)
            x = np.asarray(keras.ops.convert_to_numpy(self.augment(x, training=True)))
        if self.with_index:
            x = {"images": x, "index": rows.astype("int32")}
        return x if self.y is None else (x, self.y[rows])

    def _reseed_augmentation(self, index):
        """Set the augmentation's `SeedGenerator` states from (seed, epoch, index).

        Keras random layers keep their state in a `seed_generator_state` variable that
        no checkpoint of the model holds; deriving it from the batch's position makes
        the augmentation as reproducible as the order.
        """
        states = [v for v in getattr(self.augment, "variables", ()) if "seed_generator_state" in v.path]
        for k, state in enumerate(states):
            draw = np.random.default_rng([self.seed, self.epoch, index, k]).integers(0, 2**31, size=2)
            state.assign(draw.astype(state.dtype))

    def epoch_callback(self):
        """A callback keeping `epoch` in step with `fit` (resumed runs included)."""
        return SetEpoch(self)


class StreamBatches(keras.utils.PyDataset):
    """Epochs of `steps_per_epoch` batches cut from one deterministic stream, resumable at any epoch.

    Epoch e is batches e*S ... (e+1)*S - 1 of the stream that `make_iterator()`
    yields (the same sequence at every call: a seeded `tf.data` pipeline, a
    generator of NumPy batches). A run resumed at epoch e starts a fresh stream and
    skips e*S batches, so it sees what the uninterrupted run saw, where `fit` on the
    `tf.data.Dataset` itself would start the stream (and a reshuffled dataset's
    order) over. Batches are served in order: `fit` with `shuffle=False`.

    Args:
        make_iterator: callable returning a fresh iterator over the run's batches.
        steps_per_epoch: batches per epoch, S.

    Example:

    ```python
    batches = StreamBatches.from_dataset(tf_dataset, steps_per_epoch=100)
    model.fit(batches, epochs=5, shuffle=False, callbacks=[batches.epoch_callback()])
    ```
    """

    def __init__(self, make_iterator, steps_per_epoch, **kwargs):
        super().__init__(**kwargs)
        if not callable(make_iterator):
            raise ValueError(f"make_iterator must be callable; got {make_iterator!r}.")
        if isinstance(steps_per_epoch, bool) or not isinstance(steps_per_epoch, (int, np.integer)) or steps_per_epoch < 1:
            raise ValueError(f"steps_per_epoch must be a positive int; got {steps_per_epoch!r}.")
        self.make_iterator = make_iterator
        self.steps_per_epoch = int(steps_per_epoch)
        self.epoch = 0
        self._iterator = None
        self._position = 0  # stream index of the next batch the iterator yields
        self._last = None  # (stream index, batch) served last
        self._recent = {}  # stream index -> batch, the last RECENT_BATCHES served

    @classmethod
    def from_dataset(cls, dataset, steps_per_epoch=None):
        """A finite `tf.data.Dataset` (repeated, one pass per epoch by default) or an infinite one.

        Build the dataset anew for each run: a seeded `shuffle(reshuffle_each_iteration=True)`
        gives the same stream in a fresh process or a fresh dataset object, but another
        one at each iterator of the same object.
        """
        tf = require_tensorflow("StreamBatches.from_dataset (a tf.data.Dataset)")

        cardinality = int(dataset.cardinality())
        if cardinality == tf.data.INFINITE_CARDINALITY:
            if steps_per_epoch is None:
                raise ValueError("An infinite dataset needs steps_per_epoch.")
            stream = dataset
        else:
            if cardinality == 0:
                raise ValueError("The dataset has no batches.")
            stream = dataset.repeat()
            if steps_per_epoch is None:
                if cardinality < 0:
                    raise ValueError("The dataset's length is unknown; pass steps_per_epoch.")
                steps_per_epoch = cardinality
        return cls(stream.as_numpy_iterator, steps_per_epoch)

    def __len__(self):
        return self.steps_per_epoch

    def set_epoch(self, epoch):
        self.epoch = int(epoch)

    def __getitem__(self, index):
        if not 0 <= index < self.steps_per_epoch:
            raise IndexError(f"batch {index} of an epoch of {self.steps_per_epoch}")
        target = self.epoch * self.steps_per_epoch + int(index)
        if self._last is not None and self._last[0] == target:
            return self._last[1]  # asked again (fit peeks at the first batch to build the model)
        if target in self._recent:
            return self._recent[target]  # TF's PyDataset adapter peeks ahead, then starts the epoch
        if self._iterator is None or target < self._position:
            if self._iterator is not None and self._last is not None and target < self._last[0]:
                raise ValueError(
                    f"StreamBatches serves batches in order; batch {index} of epoch {self.epoch} was asked after "
                    "a later one (fit with shuffle=False)."
                )
            self._iterator, self._position = self.make_iterator(), 0
        while self._position < target:  # a resumed run: skip the epochs already done
            next(self._iterator)
            self._position += 1
        batch = next(self._iterator)
        self._position += 1
        self._last = (target, batch)
        self._recent[target] = batch
        while len(self._recent) > RECENT_BATCHES:
            self._recent.pop(next(iter(self._recent)))
        return batch

    def epoch_callback(self):
        """A callback keeping `epoch` in step with `fit` (resumed runs included)."""
        return SetEpoch(self)
