"""Random draws inside the model that a resumed run repeats: seeds set from (seed, epoch).

A model that draws its own randomness in the training step (MoCo's two views and
key permutation, masks, noise) keeps it in `keras.random.SeedGenerator` states,
Keras variables that neither `save_weights` nor `BackupAndRestore` hold: a run
resumed at epoch e starts them again from the constructor's seed and draws epoch
0's augmentations a second time. This callback sets every such state at the start
of each epoch from (seed, epoch, index), as `EpochShuffledBatches` does for an
augmentation applied to the data, so a resumed epoch draws exactly what the
uninterrupted run drew. `BackupAndRestore` resumes at an epoch boundary (with an
integer `save_freq` too, it re-runs the interrupted epoch from its start), so
per-epoch seeds are all it needs. On PyTorch, Keras's dropout without a layer seed
draws from torch's global generator instead of a seed state; the callback seeds that
generator from (seed, epoch) too (`training.global_seed`).
"""

import numpy as np

import keras

from keras_paperzoo.training.global_seed import seed_global_generator


def seed_generator_states(model):
    """The `SeedGenerator` state variables of `model` and its layers, in a fixed order."""
    return [v for v in model.variables if "seed_generator_state" in v.path]


class EpochSeeds(keras.callbacks.Callback):
    """At each epoch's start, set the model's `SeedGenerator` states from (seed, epoch).

    Works on every backend: on JAX, `fit` reads the variables into its state after
    `on_epoch_begin`.

    Args:
        seed: int, the run's seed.

    Example:

    ```python
    moco.fit(batches, epochs=30, callbacks=[EpochSeeds(seed=0), keras.callbacks.BackupAndRestore(path)])
    ```
    """

    def __init__(self, seed):
        super().__init__()
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"EpochSeeds needs an int seed >= 0; got {seed!r}.")
        self.seed = int(seed)

    def on_epoch_begin(self, epoch, logs=None):
        for index, state in enumerate(seed_generator_states(self.model)):
            draw = np.random.default_rng([self.seed, int(epoch), index]).integers(0, 2**31, size=2)
            state.assign(draw.astype(state.dtype))
        seed_global_generator(np.random.default_rng([self.seed, int(epoch)]).integers(0, 2**31))
