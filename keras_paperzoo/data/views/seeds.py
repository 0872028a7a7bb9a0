"""The seeds of the view layers: a pipeline's steps' seeds, and re-seeding the layers inside a pipeline.

`offset_seed` numbers the random steps of one pipeline (seed, seed + 1, ...);
`derived_seed` draws unrelated seeds from (seed, *indices), as
`MultiViewAugmentation` and the recipes do for their pipelines; `random_layers`
and `reseed` find and set the generators inside a pipeline (see
`multiview.py`).
"""

import numpy as np

import keras


def offset_seed(seed, offset):
    """The seed of a pipeline's `offset`-th random step (None stays None: unseeded)."""
    return None if seed is None else int(seed) + offset


def derived_seed(seed, *indices):
    """A seed in [0, 2**31 - 1) drawn from (seed, *indices): unrelated streams for different indices.

    Unlike `seed + index`, two parents' children never share a stream by
    accident (seed 0's second child is not seed 1's first).
    """
    return int(np.random.default_rng([int(seed), *indices]).integers(0, 2**31 - 1))


def random_layers(layer):
    """The layers in `layer` (itself included) that draw from a `SeedGenerator` `generator`, in a fixed order.

    Keras's random preprocessing layers and ours follow `DataLayer`'s convention:
    an int-or-None `seed` attribute and the generator it seeds, `generator`.
    """
    return [
        sub for sub in layer._flatten_layers(include_self=True, recursive=True)
        if isinstance(getattr(sub, "generator", None), keras.random.SeedGenerator)
    ]


def reseed(layer, seed):
    """Set `layer`'s generator as if the layer had been built with `seed` (an int)."""
    layer.seed = seed
    state = layer.generator.state
    state.assign(np.array([seed, 0], dtype=state.dtype))  # SeedGenerator(seed) starts at [seed, 0]
    if hasattr(layer, "_backend_generators"):  # DataLayer's generators for tf.data under another backend
        del layer._backend_generators  # rebuilt from the new `seed` on the next call
