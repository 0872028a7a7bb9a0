"""`load_dataset` and `class_names`: one call for every image-dataset source.

`name_or_path` is looked up in this order:

1. the exact string "digits": scikit-learn's 1,797 real 8x8 digits, embedded, no download;
2. an existing path: a .npz (keras.datasets layout), a .zip of class folders, or a
   folder of class folders (`root/<class>/*.png` or `root/{train,test}/<class>/*`);
3. any other string: a tensorflow-datasets name ("mnist", "cifar10", ...).

Everything comes back as NumPy: float32 pixels in [0, 1] shaped (N, H, W, C) and
int32 labels (or None for unlabelled images).
"""

import os
import pathlib

from keras_paperzoo.data.arrays import digits_class_names, load_digits, load_npz, npz_class_names
from keras_paperzoo.data.checks import DatasetError, unknown_dataset
from keras_paperzoo.data.folders import folder_class_names, load_folder, load_zip, zip_class_names
from keras_paperzoo.data.images import check_color_mode, check_image_size, finish
from keras_paperzoo.data.tfds_source import load_tfds, tfds_class_names

EMBEDDED = "digits"


def _looks_like_path(text):
    return text.startswith(("/", ".", "~", "\\")) or text.lower().endswith((".npz", ".zip"))


def _resolve(name_or_path):
    """Return (kind, source): kind is "digits", "npz", "zip", "folder" or "tfds"."""
    if isinstance(name_or_path, str) and name_or_path == EMBEDDED:
        return "digits", EMBEDDED
    if not isinstance(name_or_path, (str, os.PathLike)) or not os.fspath(name_or_path):
        raise DatasetError(unknown_dataset(name_or_path))
    text = os.fspath(name_or_path)
    path = pathlib.Path(text).expanduser()
    if path.is_dir():
        return "folder", path
    if path.is_file():
        suffix = path.suffix.lower()
        if suffix in (".npz", ".zip"):
            return suffix[1:], path
        raise DatasetError(
            f"Dataset {text!r} is a {suffix or 'extension-less'} file; use a .npz with "
            "x_train/y_train/x_test/y_test, a .zip of class sub-folders, a folder, 'digits' "
            "or a tensorflow-datasets name"
        )
    if not isinstance(name_or_path, str) or _looks_like_path(text):
        raise DatasetError(unknown_dataset(text))
    return "tfds", text


def load_dataset(name_or_path, split="train", image_size=None, color_mode=None):
    """Load an image dataset as NumPy arrays.

    Args:
        name_or_path: "digits" (embedded default), a tensorflow-datasets name, or a
            path to a .npz (x_train/y_train/x_test/y_test), a folder of class
            sub-folders (optionally inside train/ and test/) or a .zip of one.
        split: "train" or "test"; "validation" (or "val") where the source has one.
        image_size: None to keep the size, an int for square images or (height, width);
            resizing is antialiased bilinear.
        color_mode: None to keep the channels, "grayscale" (C=1) or "rgb" (C=3).

    Returns:
        (x, y): x float32 (N, H, W, C) in [0, 1]; y int32 (N,) class ids, or None
        when the source has no labels. Folder and zip images come in sorted path
        order, i.e. grouped by class: shuffle before taking a subset.

    Raises:
        DatasetError: unknown name, missing path, no images, bad split, bad
            image_size or color_mode, or a tensorflow-datasets download that failed.

    Example:
        >>> x, y = load_dataset("digits", "test", image_size=28)
        >>> x.shape, x.dtype, y.shape
        ((297, 28, 28, 1), dtype('float32'), (297,))
    """
    size = check_image_size(image_size)
    check_color_mode(color_mode)
    kind, source = _resolve(name_or_path)
    if kind == "digits":
        x, y = load_digits(split)
    elif kind == "npz":
        x, y = load_npz(source, split)
    elif kind == "folder":
        x, y = load_folder(source, split, size)
    elif kind == "zip":
        x, y = load_zip(source, split, size)
    else:
        x, y = load_tfds(source, split, size)
    return finish(x, source, size, color_mode), y


def class_names(name_or_path):
    """The class names of a dataset; label i of `load_dataset` is `class_names(...)[i]`.

    Args:
        name_or_path: as for `load_dataset`.

    Returns:
        A list of str: "0".."9" for digits, sorted class-folder names for folders and
        zips (empty when unlabelled), label ids "0".."max" for .npz, and the names
        tensorflow-datasets records for its datasets.

    Example:
        >>> class_names("digits")
        ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']
    """
    kind, source = _resolve(name_or_path)
    if kind == "digits":
        return digits_class_names()
    if kind == "npz":
        return npz_class_names(source)
    if kind == "folder":
        return folder_class_names(source)
    if kind == "zip":
        return zip_class_names(source)
    return tfds_class_names(source)
