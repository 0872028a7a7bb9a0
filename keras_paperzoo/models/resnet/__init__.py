"""ResNet (He et al. 2016, "Deep Residual Learning for Image Recognition").

    from keras_paperzoo.models.resnet import ResNetBackbone
    backbone = ResNetBackbone.from_preset("resnet50")   # (B, 7, 7, 2048) on 224x224
"""

from keras_paperzoo.models.resnet.resnet_backbone import ResNetBackbone
from keras_paperzoo.models.resnet.resnet_convert import resnet_from_torch_state_dict
from keras_paperzoo.models.resnet.resnet_layers import (
    ZeroPadShortcut,
    apply_basic_block,
    apply_bottleneck_block,
)
from keras_paperzoo.models.resnet.resnet_presets import RESNET_PRESETS
