"""Dataset loaders: NumPy image arrays from 'digits', tensorflow-datasets, .npz, folders and zips.

Example:
    >>> from keras_paperzoo.data import load_dataset, class_names
    >>> x, y = load_dataset("digits", "train")
    >>> x.shape, y.shape, class_names("digits")[9]
    ((1500, 8, 8, 1), (1500,), '9')
"""

from keras_paperzoo.data.checks import DatasetError, require_labels
from keras_paperzoo.data.datasets import class_names, load_dataset

# The view layers (keras_paperzoo.data.views) import Keras: loaded on first use, so that the loaders
# above import no framework (tests/data/test_datasets.py::test_import_pulls_in_no_framework). The
# papers' own view recipes (simclr_views, byol_views, ...) live beside their models, in keras_paperzoo.models.
_LAZY = {
    "MultiViewAugmentation": "keras_paperzoo.data.views",
    "RandomSolarization": "keras_paperzoo.data.views",
    "ViewAugmentation": "keras_paperzoo.data.views",
}

__all__ = ["DatasetError", "class_names", "load_dataset", "require_labels", *_LAZY]


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'keras_paperzoo.data' has no attribute {name!r}")
