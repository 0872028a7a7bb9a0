"""SimCLR v1/v2 (Chen et al. 2020a, 2020b): two views, a projection head, NT-Xent.

    from keras_paperzoo.models.simclr import SimCLR
    simclr = SimCLR.from_preset("simclr_resnet20_cifar")
"""

from keras_paperzoo.models.simclr.simclr import SimCLR
from keras_paperzoo.models.simclr.simclr_augmentation import simclr_augmentation, simclr_jitter, simclr_views
from keras_paperzoo.models.simclr.simclr_presets import SIMCLR_PRESETS
