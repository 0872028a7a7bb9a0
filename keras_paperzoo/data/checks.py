"""The data error type and the small argument checks every loader shares.

Every mistake a user can make when naming a dataset raises `DatasetError`, a
`ValueError` whose message is one line naming the offending value and the rule.
"""

SPLIT_ALIASES = {"train": "train", "test": "test", "validation": "validation", "val": "validation"}


class DatasetError(ValueError):
    """A dataset cannot be found, read or used as asked.

    Example:
        >>> try:
        ...     raise DatasetError("Dataset 'foo' is unknown")
        ... except ValueError as err:
        ...     print(err)
        Dataset 'foo' is unknown
    """


def require_labels(y, recipe, dataset=None):
    """Stop a recipe that needs labels when the dataset has none.

    Args:
        y: the labels returned by `load_dataset`, or None.
        recipe: the recipe's name, used in the message.
        dataset: optional name or path of the dataset, used in the message.

    Returns:
        `y` unchanged, so the call can wrap an assignment.

    Example:
        >>> import numpy as np
        >>> require_labels(np.array([0, 1], "int32"), "resnet").tolist()
        [0, 1]
        >>> try:
        ...     require_labels(None, "resnet", "photos/")
        ... except DatasetError as err:
        ...     print(str(err).split(";")[0])
        Recipe 'resnet' needs labels, but dataset 'photos/' has none
    """
    if y is None:
        name = "" if dataset is None else f" {str(dataset)!r}"
        raise DatasetError(
            f"Recipe {recipe!r} needs labels, but dataset{name} has none; use a folder of "
            "class sub-folders, a .npz with y_train/y_test, 'digits' or a labelled "
            "tensorflow-datasets name"
        )
    return y


def check_split(split, available, dataset):
    """Return the canonical split name, or raise naming the splits there are.

    Args:
        split: "train", "test", "validation" or "val" (case-insensitive).
        available: canonical split names the source has.
        dataset: name or path of the dataset, used in the message.

    Example:
        >>> check_split("VAL", ("train", "validation"), "x.npz")
        'validation'
    """
    canonical = SPLIT_ALIASES.get(split.lower()) if isinstance(split, str) else None
    if canonical is None or canonical not in available:
        names = ", ".join(repr(s) for s in available)
        raise DatasetError(
            f"split={split!r} is not available for dataset {str(dataset)!r}; "
            f"available splits: {names}"
        )
    return canonical


def first_line(err, limit=200):
    """The first line of an exception's message, shortened, for one-line errors.

    Example:
        >>> first_line(OSError("no network\\nmore detail"))
        'OSError: no network'
    """
    text = str(err).strip().splitlines()
    line = text[0] if text else ""
    if len(line) > limit:
        line = line[: limit - 3] + "..."
    return f"{type(err).__name__}: {line}" if line else type(err).__name__


def unknown_dataset(name, reason=None):
    """The one-line message for a name that is neither a path nor a known dataset.

    Args:
        name: the value the user passed.
        reason: optional exception whose first line is appended.

    Example:
        >>> unknown_dataset("foo")[:45]
        "Dataset 'foo' is neither a file/folder nor a "
    """
    message = (
        f"Dataset {str(name)!r} is neither a file/folder nor a known name; use 'digits', a "
        "tensorflow-datasets name, a .npz with x_train/y_train/x_test/y_test, a folder of "
        "class sub-folders or a .zip of them"
    )
    return message if reason is None else f"{message} ({first_line(reason)})"


def check_class_ids(y_train, y_test=None, dataset=None):
    """The number of classes of integer labels, or a `DatasetError` naming a label that cannot be a class id.

    Class ids are 0..K-1. A negative id, or ids so sparse that most of 0..max have no
    example (one stray label 5000 among ten classes would build a 5,001-class head),
    are refused with the offending value.

    Args:
        y_train: int labels (N,). y_test: optional int labels.
        dataset: name or path of the dataset, used in the message.

    Example:
        >>> import numpy as np
        >>> check_class_ids(np.array([0, 2, 1]), np.array([1]))
        3
        >>> try:
        ...     check_class_ids(np.array([0, 1, 5000]))
        ... except DatasetError as err:
        ...     print(str(err).split(";")[0])
        Label 5000 leaves 4998 of the 5001 classes 0..5000 without a training example
    """
    import numpy as np

    name = "" if dataset is None else f" of dataset {str(dataset)!r}"
    labels = [np.asarray(y) for y in (y_train, y_test) if y is not None]
    for y in labels:
        if y.size and not np.issubdtype(y.dtype, np.integer):
            raise DatasetError(f"Labels{name} have dtype {y.dtype}; class ids must be integers 0..K-1")
        if y.size and y.min() < 0:
            raise DatasetError(f"Label {int(y.min())}{name} is negative; class ids must be 0..K-1")
    if not labels or labels[0].size == 0:
        raise DatasetError(f"The training split{name} has no labels")
    highest = int(max(y.max() for y in labels if y.size))
    present = np.unique(labels[0]).size
    if present < (highest + 1) / 2:
        raise DatasetError(
            f"Label {highest} leaves {highest + 1 - present} of the {highest + 1} classes 0..{highest} without a "
            f"training example{name}; class ids must be 0..K-1 (renumber the labels)"
        )
    return highest + 1


def check_token_ids(ids, vocabulary_size, name="token_ids"):
    """Return `ids` when every id is in [0, vocabulary_size), else a `DatasetError` naming the first that is not.

    On JAX an embedding lookup clamps an out-of-range id silently and a cross-entropy
    target equal to the vocabulary size gives loss 0; the traced step cannot check, so
    data paths and models call this on the host.

    Example:
        >>> check_token_ids([[1, 2], [3, 0]], 4)
        [[1, 2], [3, 0]]
        >>> try:
        ...     check_token_ids([[1, 2], [4, 0]], 4)
        ... except DatasetError as err:
        ...     print(err)
        token_ids has id 4 at (1, 0); ids must be in [0, 4), the vocabulary's size
    """
    import numpy as np

    array = np.asarray(ids)
    if array.size == 0:
        return ids
    if not np.issubdtype(array.dtype, np.integer):
        raise DatasetError(f"{name} has dtype {array.dtype}; token ids must be integers")
    bad = (array < 0) | (array >= vocabulary_size)
    if bad.any():
        where = np.unravel_index(np.argmax(bad), array.shape)
        raise DatasetError(
            f"{name} has id {int(array[where])} at {tuple(int(i) for i in where)}; ids must be in "
            f"[0, {vocabulary_size}), the vocabulary's size"
        )
    return ids


def _first(bad, array):
    """(value, index) of the first True of `bad` in `array`."""
    import numpy as np

    where = np.unravel_index(np.argmax(bad), array.shape)
    return array[where].item(), tuple(int(i) for i in where)


def check_finite(array, name="x"):
    """Return `array` when it holds no NaN or infinity, else a `DatasetError` naming the first and where it is.

    A NaN or infinite pixel, feature or target trains every weight it reaches to NaN.
    One pass of `min` and `max` (NaN and infinity propagate to them), so it is cheap
    enough to run on every array given to `fit`; integer arrays pass untouched.

    Example:
        >>> import numpy as np
        >>> try:
        ...     check_finite(np.array([[0.0, 1.0], [np.inf, 2.0]]), "images")
        ... except DatasetError as err:
        ...     print(err)
        images has 1 non-finite value (inf at (1, 0)); inputs must be finite numbers
    """
    import numpy as np

    array = np.asarray(array)
    if array.size == 0 or not np.issubdtype(array.dtype, np.floating):
        return array
    if np.isfinite(array.min()) and np.isfinite(array.max()):
        return array
    bad = ~np.isfinite(array)
    value, where = _first(bad, array)
    count = int(bad.sum())
    raise DatasetError(f"{name} has {count} non-finite value{'s' if count > 1 else ''} ({value} at {where}); "
                       "inputs must be finite numbers")


def check_labels_in_range(labels, num_classes, name="y", owner="the classifier"):
    """Return `labels` when they are integer class ids in [0, num_classes), else a `DatasetError` naming the first
    that is not (out-of-range labels train silently on JAX and fail deep in the graph elsewhere).

    Example:
        >>> import numpy as np
        >>> try:
        ...     check_labels_in_range(np.array([0, 9, 10]), 10)
        ... except DatasetError as err:
        ...     print(err)
        y has label 10 at (2,); class ids must be integers in [0, 10), the classifier's num_classes
    """
    import numpy as np

    array = np.asarray(labels)
    if array.size == 0:
        return labels
    if not np.issubdtype(array.dtype, np.integer):
        if not np.issubdtype(array.dtype, np.floating):
            raise DatasetError(f"{name} has dtype {array.dtype}; class ids must be integers in [0, {num_classes})")
        check_finite(array, name)
        if not np.array_equal(array, np.round(array)):
            bad = array != np.round(array)
            value, where = _first(bad, array)
            raise DatasetError(f"{name} has label {value} at {where}; class ids must be integers in "
                               f"[0, {num_classes})")
    low, high = array.min(), array.max()
    if low < 0 or high >= num_classes:
        bad = (array < 0) | (array >= num_classes)
        value, where = _first(bad, array)
        value = int(value) if float(value).is_integer() else value
        raise DatasetError(f"{name} has label {value} at {where}; class ids must be integers in [0, {num_classes}), "
                           f"{owner}'s num_classes")
    return labels


def check_sequence_length(ids, max_length, name="token_ids", owner="the backbone"):
    """Return `ids` (B, T) when T <= max_length, else a `DatasetError` naming T and the limit (a longer sequence
    has no position embedding: a backend-specific slice error deep in the graph).

    Example:
        >>> import numpy as np
        >>> try:
        ...     check_sequence_length(np.zeros((2, 9), "int32"), 8)
        ... except DatasetError as err:
        ...     print(err)
        token_ids has sequences of 9 tokens; at most 8, the backbone's max_sequence_length
    """
    import numpy as np

    shape = np.shape(ids)
    if len(shape) >= 2 and shape[1] > max_length:
        raise DatasetError(f"{name} has sequences of {shape[1]} tokens; at most {max_length}, {owner}'s "
                           "max_sequence_length")
    return ids


def check_batching(examples, batch_size, minimum, owner, rule, drop_remainder=False):
    """Refuse a batch size, or a last batch, smaller than a trainer's `minimum` (one line naming both and `rule`).

    Args:
        examples: N, the number of training examples (None: only `batch_size` is checked).
        batch_size: the batch size `fit` will use.
        minimum: the smallest batch the objective is defined on.
        owner: the trainer's name; rule: why (e.g. "NT-Xent's negatives are the batch's other images").
        drop_remainder: the last partial batch is dropped (`EpochShuffledBatches`' default).

    Example:
        >>> try:
        ...     check_batching(10, 3, 2, "SimCLR", "its negatives are the batch's other images")
        ... except DatasetError as err:
        ...     print(err)
        SimCLR: 10 examples in batches of 3 leave a last batch of 1; its batches need at least 2 (its negatives are \
the batch's other images): drop the last batch (EpochShuffledBatches(drop_remainder=True)) or pick a batch size \
that leaves none or at least 2
    """
    if batch_size is not None and batch_size < minimum:
        raise DatasetError(f"{owner}: batch size {batch_size} is too small; its batches need at least {minimum} "
                           f"({rule})")
    if examples is None or batch_size is None:
        return
    last = 0 if drop_remainder and examples >= batch_size else examples % batch_size
    if 0 < last < minimum:
        raise DatasetError(
            f"{owner}: {examples} examples in batches of {batch_size} leave a last batch of {last}; its batches need "
            f"at least {minimum} ({rule}): drop the last batch (EpochShuffledBatches(drop_remainder=True)) or pick a "
            f"batch size that leaves none or at least {minimum}"
        )
