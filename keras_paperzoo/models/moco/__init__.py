"""MoCo v1/v2 (He et al. 2020; Chen et al. 2020): momentum contrast with a queue of keys.

    from keras_paperzoo.models.moco import MoCo
    moco = MoCo.from_preset("moco_v2_resnet20_cifar")
"""

from keras_paperzoo.models.moco.moco import MoCo, moco_optimizer
from keras_paperzoo.models.moco.moco_augmentation import MoCoAugmentation
from keras_paperzoo.models.moco.moco_presets import MOCO_PRESETS
