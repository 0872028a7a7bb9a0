"""Transformer (Vaswani et al. 2017): backbone, presets, translator, decoding, tokenizer."""

from keras_paperzoo.models.transformer.transformer_backbone import TransformerBackbone, transformer_parameter_count
from keras_paperzoo.models.transformer.transformer_decoding import beam_search, greedy_search, length_penalty
from keras_paperzoo.models.transformer.transformer_layers import TransformerDecoderLayer, TransformerEncoderLayer
from keras_paperzoo.models.transformer.transformer_presets import TRANSFORMER_PRESETS
from keras_paperzoo.models.transformer.transformer_translator import TransformerTranslator, paper_optimizer

# Re-exported where Transformer users look for them; they live with the other losses and schedules.
from keras_paperzoo.losses.label_smoothing import label_smoothed_cross_entropy
from keras_paperzoo.training.schedules import NoamSchedule
