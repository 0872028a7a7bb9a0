"""Array sources: the embedded 'digits' default and Keras-layout .npz files.

Both return raw pixels (uint8, or float in [0, 1]) shaped (N, H, W, C) and int32
labels; `load_dataset` does the scaling, colour conversion and resizing.
"""

import zipfile

import numpy as np

from keras_paperzoo.data.checks import DatasetError, check_split

DIGITS_TRAIN = 1500  # of 1,797; the remaining 297 are the test split
DIGITS_SEED = 0
NPZ_KEYS = ("x_train", "y_train", "x_test", "y_test")
_NPZ_VALIDATION = (("x_val", "y_val"), ("x_validation", "y_validation"))


def load_digits(split):
    """scikit-learn's 1,797 real 8x8 handwritten digits, split 1,500 / 297.

    The split is a fixed permutation (`numpy.random.RandomState(0)`), so it is the
    same on every machine; pixels 0..16 are divided by 16.

    Args:
        split: "train" or "test".

    Returns:
        (x, y): float32 (N, 8, 8, 1) in [0, 1] and int32 (N,) digits 0..9.

    Example:
        >>> x, y = load_digits("test")
        >>> x.shape, y.shape
        ((297, 8, 8, 1), (297,))
    """
    from sklearn.datasets import load_digits as sklearn_digits

    split = check_split(split, ("train", "test"), "digits")
    bunch = sklearn_digits()
    order = np.random.RandomState(DIGITS_SEED).permutation(len(bunch.target))
    keep = order[:DIGITS_TRAIN] if split == "train" else order[DIGITS_TRAIN:]
    x = (bunch.images[keep] / 16.0).astype(np.float32)[..., None]
    return x, bunch.target[keep].astype(np.int32)


def digits_class_names():
    """The digits' class names, "0" to "9".

    Example:
        >>> digits_class_names()[:3]
        ['0', '1', '2']
    """
    return [str(i) for i in range(10)]


def _open_npz(path):
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError, zipfile.BadZipFile) as err:
        raise DatasetError(f"Dataset {str(path)!r} is not a readable .npz file ({err})") from err


def _npz_splits(path, keys):
    missing = [k for k in NPZ_KEYS if k not in keys]
    if missing:
        raise DatasetError(
            f"Dataset {str(path)!r} has keys {sorted(keys)} but needs "
            f"{', '.join(NPZ_KEYS)} (the keras.datasets layout); missing {', '.join(missing)}"
        )
    splits = {"train": ("x_train", "y_train"), "test": ("x_test", "y_test")}
    for pair in _NPZ_VALIDATION:
        if all(k in keys for k in pair):
            splits["validation"] = pair
            break
    return splits


def load_npz(path, split):
    """Read one split of a .npz in the keras.datasets layout.

    The file holds `x_train`, `y_train`, `x_test`, `y_test` (and optionally
    `x_val`/`y_val` or `x_validation`/`y_validation`); 3-D image arrays get a
    channel axis, labels shaped (N, 1) are flattened.

    Args:
        path: the .npz file.
        split: "train", "test", or "validation" when the file has one.

    Returns:
        (x, y): raw pixels (N, H, W, C) and int32 labels (N,).

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "tiny.npz")
        >>> z = np.zeros((2, 4, 4), "uint8")
        >>> np.savez(path, x_train=z, y_train=[0, 1], x_test=z, y_test=[1, 0])
        >>> [a.shape for a in load_npz(path, "test")]
        [(2, 4, 4, 1), (2,)]
    """
    with _open_npz(path) as data:
        splits = _npz_splits(path, list(data.keys()))
        split = check_split(split, tuple(splits), path)
        x_key, y_key = splits[split]
        x, y = data[x_key], data[y_key]
    if x.ndim == 3:
        x = x[..., None]
    if x.ndim != 4:
        raise DatasetError(
            f"Dataset {str(path)!r}: {x_key} has shape {x.shape}; use (N, H, W) or (N, H, W, C)"
        )
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.shape != (len(x),) or not np.issubdtype(y.dtype, np.integer):
        raise DatasetError(
            f"Dataset {str(path)!r}: {y_key} has shape {y.shape} and dtype {y.dtype}; "
            f"use {len(x)} integer class ids"
        )
    if len(x) == 0:
        raise DatasetError(f"Dataset {str(path)!r}: {x_key} has no images (shape {x.shape})")
    if y.min() < 0:
        raise DatasetError(f"Dataset {str(path)!r}: {y_key} has label {int(y.min())}; class ids must be 0..K-1")
    return x, y.astype(np.int32)


def npz_class_names(path):
    """Class names of a .npz dataset: the label ids "0" .. str(max label).

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "tiny.npz")
        >>> z = np.zeros((2, 4, 4), "uint8")
        >>> np.savez(path, x_train=z, y_train=[0, 2], x_test=z, y_test=[1, 0])
        >>> npz_class_names(path)
        ['0', '1', '2']
    """
    with _open_npz(path) as data:
        splits = _npz_splits(path, list(data.keys()))
        labels = [data[y_key] for _, y_key in splits.values()]
        top = max((int(y.max()) for y in labels if y.size), default=-1)
    return [str(i) for i in range(top + 1)]
