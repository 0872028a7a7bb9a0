"""AlexNet (Krizhevsky, Sutskever and Hinton 2012)."""

from keras_paperzoo.models.alexnet.alexnet_backbone import AlexNetBackbone
from keras_paperzoo.models.alexnet.alexnet_presets import ALEXNET_PRESETS
