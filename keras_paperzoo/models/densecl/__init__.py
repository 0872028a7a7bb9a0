"""DenseCL (Wang et al. 2021): MoCo v2 plus a dense head and a pixel-level InfoNCE.

    from keras_paperzoo.models.densecl import DenseCL
    model = DenseCL.from_preset("densecl_resnet8_cifar")
"""

from keras_paperzoo.models.densecl.densecl import DenseCL, dense_correspondence
from keras_paperzoo.models.densecl.densecl_presets import DENSECL_PRESETS
