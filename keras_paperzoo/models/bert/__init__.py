"""BERT (Devlin et al. 2019): backbone, presets."""

from keras_paperzoo.models.bert.bert_backbone import BertBackbone
from keras_paperzoo.models.bert.bert_presets import BERT_PRESETS, bert_parameter_count
