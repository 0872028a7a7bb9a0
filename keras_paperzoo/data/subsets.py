"""Seeded class-balanced subsets: the same images for every run of a CPU-budget reproduction."""

import numpy as np


def balanced_subset(labels, count, seed):
    """Sorted indices of `count` examples, as equal a share of every class as possible, seeded.

    `count` of 0, None or at least `len(labels)` gives every index.

    Example:

    ```python
    rows = balanced_subset(y_train, 5000, seed=0)   # 500 per class of CIFAR-10
    x_small, y_small = x_train[rows], y_train[rows]
    ```
    """
    labels = np.asarray(labels).reshape(-1)
    if not count or count >= len(labels):
        return np.arange(len(labels))
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
        raise ValueError(f"count must be an int >= 0; got {count!r}.")
    rng = np.random.default_rng(seed)
    per_class = [rng.permutation(np.flatnonzero(labels == c)) for c in np.unique(labels)]
    share = count // len(per_class)
    chosen = [rows[:share] for rows in per_class]
    rest = rng.permutation(np.concatenate([rows[share:] for rows in per_class]))
    chosen.append(rest[: count - share * len(per_class)])
    return np.sort(np.concatenate(chosen))
