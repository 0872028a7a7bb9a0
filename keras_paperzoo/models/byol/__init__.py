"""BYOL (Grill et al. 2020): an online network predicting a momentum target network, no negatives.

    from keras_paperzoo.models.byol import BYOL
    byol = BYOL.from_preset("byol_resnet20_cifar")
"""

from keras_paperzoo.models.byol.byol import BYOL
from keras_paperzoo.models.byol.byol_augmentation import byol_augmentation, byol_views
from keras_paperzoo.models.byol.byol_presets import BYOL_PRESETS
