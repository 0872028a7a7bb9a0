"""ViT (Dosovitskiy et al. 2021): backbone, presets, position-embedding resizing, timm weights."""

from keras_paperzoo.layers.position_embedding import resize_position_embeddings
from keras_paperzoo.models.vit.vit_analysis import mean_attention_distance
from keras_paperzoo.models.vit.vit_backbone import ViTBackbone
from keras_paperzoo.models.vit.vit_convert import vit_from_timm_state_dict
from keras_paperzoo.models.vit.vit_layers import ConvStem, TokenPooling
from keras_paperzoo.models.vit.vit_presets import VIT_PRESETS
