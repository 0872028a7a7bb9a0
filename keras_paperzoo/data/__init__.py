"""Dataset loaders: NumPy image arrays from 'digits', tensorflow-datasets, .npz, folders and zips.

Example:
    >>> from keras_paperzoo.data import load_dataset, class_names
    >>> x, y = load_dataset("digits", "train")
    >>> x.shape, y.shape, class_names("digits")[9]
    ((1500, 8, 8, 1), (1500,), '9')
"""

from keras_paperzoo.data.checks import DatasetError, require_labels
from keras_paperzoo.data.datasets import class_names, load_dataset

__all__ = ["DatasetError", "class_names", "load_dataset", "require_labels"]
