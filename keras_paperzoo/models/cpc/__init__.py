"""CPC v1 / v2 (van den Oord et al. 2018; Henaff et al. 2019): predict the encodings of patches or time steps ahead.

    from keras_paperzoo.models.cpc import CPC
    cpc = CPC.from_preset("cpc_v2_cifar")
"""

from keras_paperzoo.models.cpc.cpc import CPC
from keras_paperzoo.models.cpc.cpc_augmentation import CPCAugmentation, PatchAugmentation
from keras_paperzoo.models.cpc.cpc_encoder import CPCResNet, StridedConvEncoder
from keras_paperzoo.models.cpc.cpc_layers import ColumnGRUContext, GridEncoder, PatchGrid, PixelCNNContext, grid_shape
from keras_paperzoo.models.cpc.cpc_presets import CPC_PRESETS
