"""SwAV (Caron et al. 2020): codes from an equipartitioned clustering predicted across multi-crop views.

    from keras_paperzoo.models.swav import SwAV
    swav = SwAV.from_preset("swav_resnet20_cifar")
"""

from keras_paperzoo.models.swav.swav import SwAV
from keras_paperzoo.models.swav.swav_augmentation import swav_crop_sizes, swav_views
from keras_paperzoo.models.swav.swav_presets import SWAV_PRESETS
