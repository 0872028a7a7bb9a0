"""tensorflow-datasets sources ("mnist", "cifar10", "fashion_mnist", ...).

tensorflow_datasets is imported only when such a name is used, so importing
`keras_paperzoo.data` stays fast and framework-free. tensorflow-datasets downloads
a dataset on first use; when it cannot, the failure becomes a one-line `DatasetError`
chained to the original exception that names the real cause: a module that is not
installed (tensorflow-datasets comes with the `tf` extra, `pip install -e ".[tf]"`), a
connection that failed (then: use a local dataset), or the first line of another error.
"""

import socket

import numpy as np

from keras_paperzoo.data.checks import DatasetError, check_split, first_line, unknown_dataset
from keras_paperzoo.data.images import resize_uint8
from keras_paperzoo.optional import install_hint

SPLIT_ORDER = ("train", "validation", "test")
_BATCH = 1024


def _tfds(name):
    try:
        import tensorflow_datasets as tfds
    except ImportError as err:
        raise DatasetError(_missing_module(name, err)) from err
    return tfds


def _chain(err):
    """`err` and the exceptions it was raised from."""
    seen = []
    while err is not None and err not in seen:
        seen.append(err)
        err = err.__cause__ or err.__context__
    return seen


_NETWORK_ERRORS = {"ConnectionError", "ConnectTimeout", "ReadTimeout", "Timeout", "NewConnectionError",
                   "MaxRetryError", "URLError", "gaierror", "DownloadError"}


def _is_network(err):
    return isinstance(err, (ConnectionError, TimeoutError, socket.gaierror)) or type(err).__name__ in _NETWORK_ERRORS


def _missing_module(name, err):
    """The one line for a module that tensorflow-datasets (or `name`'s builder) needs and lacks."""
    module = (getattr(err, "name", None) or "").split(".")[0]
    if not module:
        return f"Dataset {name!r} needs tensorflow-datasets, which cannot be imported ({first_line(err)})"
    if module == "tensorflow_datasets":
        return (f"Dataset {name!r} is a tensorflow-datasets name, and tensorflow-datasets is not installed: "
                f"{install_hint(module)}")
    return (f"Dataset {name!r} (tensorflow-datasets) needs the module {module!r}, which is not installed: "
            f"{install_hint(module)}")


def _load_error(name, split, err):
    """A `DatasetError` naming the real cause: a missing module, the network, or the first line of `err`."""
    chain = _chain(err)
    imports = [e for e in chain if isinstance(e, ImportError)]
    if imports:
        return DatasetError(_missing_module(name, imports[-1]))
    if any(_is_network(e) for e in chain):
        return DatasetError(
            f"Could not download tensorflow-datasets dataset {name!r} split {split!r} ({first_line(err)}): it "
            "downloads on first use, so without internet use 'digits', a local .npz, a folder of class "
            "sub-folders or a .zip of them"
        )
    return DatasetError(f"Could not load tensorflow-datasets dataset {name!r} split {split!r} ({first_line(err)})")


def _builder(tfds, name):
    try:
        return tfds.builder(name)
    except Exception as err:  # DatasetNotFoundError, bad config or version, ...
        known = type(err).__name__ == "DatasetNotFoundError"
        raise DatasetError(unknown_dataset(name, None if known else err)) from err


def _feature_keys(tfds, info, name):
    """(image key, label key or None) of a tfds dataset's features."""
    features = info.features
    keys = list(features.keys()) if hasattr(features, "keys") else []
    is_image = lambda k: isinstance(features[k], tfds.features.Image)  # noqa: E731
    is_label = lambda k: isinstance(features[k], tfds.features.ClassLabel)  # noqa: E731
    pair = info.supervised_keys
    if (
        isinstance(pair, tuple)
        and len(pair) == 2
        and all(isinstance(k, str) and k in keys for k in pair)
        and is_image(pair[0])
    ):
        return pair[0], (pair[1] if is_label(pair[1]) else None)
    images = [k for k in keys if is_image(k)]
    if not images:
        raise DatasetError(
            f"Dataset {name!r} from tensorflow-datasets has no image feature (features: "
            f"{', '.join(keys)}); load_dataset reads image datasets"
        )
    image_key = "image" if "image" in images else images[0]
    return image_key, ("label" if "label" in keys and is_label("label") else None)


def load_tfds(name, split, image_size=None):
    """Load one split of a tensorflow-datasets image dataset as NumPy.

    Args:
        name: a tensorflow-datasets name, e.g. "mnist" or "cifar10".
        split: "train", "test" or "validation" (when the dataset has it).
        image_size: (h, w); required when the dataset's images vary in size.

    Returns:
        (x, y): uint8 (N, H, W, C) and int32 (N,) labels, or None when unlabelled.

    Example:
        >>> import tensorflow_datasets as tfds
        >>> with tfds.testing.mock_data(num_examples=3):
        ...     x, y = load_tfds("mnist", "train")
        >>> x.shape, y.shape
        ((3, 28, 28, 1), (3,))
    """
    tfds = _tfds(name)
    info = _builder(tfds, name).info
    known = tuple(s for s in SPLIT_ORDER if s in info.splits)
    split = check_split(split, known or SPLIT_ORDER, name)
    image_key, label_key = _feature_keys(tfds, info, name)
    variable = None in tuple(info.features[image_key].shape)[:2]
    if variable and image_size is None:
        raise DatasetError(
            f"Dataset {name!r} has images of different sizes; pass image_size=(height, width)"
        )
    images, labels = [], []
    try:
        ds = tfds.load(name, split=split)
        ds = ds.map(lambda ex: (ex[image_key], ex[label_key] if label_key else 0))
        for image, label in tfds.as_numpy(ds if variable else ds.batch(_BATCH)):
            images.append(resize_uint8(image, image_size)[None] if variable else image)
            labels.append(np.reshape(label, -1))
    except Exception as err:
        raise _load_error(name, split, err) from err
    if not images:
        raise DatasetError(f"Dataset {name!r} split {split!r} from tensorflow-datasets is empty")
    x = np.concatenate(images)
    y = np.concatenate(labels).astype(np.int32) if label_key else None
    return x, y


def tfds_class_names(name):
    """Class names tensorflow-datasets records for `name` (no download needed).

    Some datasets (e.g. cifar10) only learn their names when prepared; before that
    tensorflow-datasets reports the label ids "0", "1", ...

    Example:
        >>> tfds_class_names("mnist")[:3]
        ['0', '1', '2']
    """
    tfds = _tfds(name)
    info = _builder(tfds, name).info
    _, label_key = _feature_keys(tfds, info, name)
    return [] if label_key is None else list(info.features[label_key].names)
