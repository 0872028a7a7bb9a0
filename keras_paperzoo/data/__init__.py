"""Dataset loaders: NumPy image arrays from 'digits', tensorflow-datasets, .npz, folders and zips.

Example:
    >>> from keras_paperzoo.data import load_dataset, class_names
    >>> x, y = load_dataset("digits", "train")
    >>> x.shape, y.shape, class_names("digits")[9]
    ((1500, 8, 8, 1), (1500,), '9')
"""

from keras_paperzoo.data.checks import DatasetError, require_labels
from keras_paperzoo.data.datasets import class_names, load_dataset
from keras_paperzoo.data.multi_view import MultiViewAugmentation
from keras_paperzoo.data.ssl_augmentation import RandomSolarization
from keras_paperzoo.data.view_recipes import (
    ViewAugmentation,
    byol_augmentation,
    byol_views,
    simclr_augmentation,
    simclr_views,
)

__all__ = ["DatasetError", "class_names", "load_dataset", "require_labels"]
__all__ += ["MultiViewAugmentation", "RandomSolarization", "ViewAugmentation", "byol_augmentation", "byol_views",
            "simclr_augmentation", "simclr_views"]
