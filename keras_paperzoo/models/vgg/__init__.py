"""VGG (Simonyan and Zisserman 2015)."""

from keras_paperzoo.models.vgg.vgg_backbone import VGGBackbone
from keras_paperzoo.models.vgg.vgg_presets import PAPER_PARAMETER_MILLIONS, VGG_CONFIGURATIONS, VGG_PRESETS
from keras_paperzoo.models.vgg.vgg_converter import vgg_from_torch_state_dict
