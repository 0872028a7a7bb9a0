"""What the view tests share (tests/data/views/ and the papers' augmentation tests beside their models).

    random_images(n, size, seed)     # (n, size, size, 3) float32 in [0, 1)
    to_numpy(x); draw(augment, x)    # a tensor, and every view of one call, as NumPy
    N_STAT, SIZE_STAT, binomial_tolerance(p)   # the statistical tests' sample and 4-s.d. tolerance
"""

import numpy as np

from keras import ops

# Few distinct shapes: JAX compiles each eager op once per shape (seconds each for the crop and the jitter).
N_STAT, SIZE_STAT = 400, 24  # the statistical tests: 400 images of 24 x 24 (blur kernel 2 taps, radius 1)


def binomial_tolerance(p, n=N_STAT):
    return 4 * np.sqrt(p * (1 - p) / n)  # 4 standard deviations


def random_images(n=8, size=16, seed=0):
    return np.random.default_rng(seed).random((n, size, size, 3)).astype("float32")


def to_numpy(x):
    return np.asarray(ops.convert_to_numpy(x))


def draw(augment, x, training=True):
    """The views of one call of `augment` on `x`, as NumPy arrays."""
    return [to_numpy(view) for view in augment(x, training=training)]
