"""BERT (Devlin et al. 2019): backbone, presets, pre-training trainer, optimizer, fine-tuning heads."""

from keras_paperzoo.models.bert.bert_backbone import BertBackbone
from keras_paperzoo.models.bert.bert_optimizer import (
    WarmupLinearDecay,
    fine_tuning_optimizer,
    pretraining_optimizer,
)
from keras_paperzoo.models.bert.bert_presets import BERT_PRESETS, bert_parameter_count
from keras_paperzoo.models.bert.bert_pretrainer import BertPretrainer
from keras_paperzoo.models.bert.bert_classifier import BertClassifier
from keras_paperzoo.models.bert.bert_span_extractor import BertSpanExtractor, best_spans, span_loss
from keras_paperzoo.models.bert.bert_token_tagger import BertTokenTagger, tagging_loss
from keras_paperzoo.models.bert.bert_multiple_choice import BertMultipleChoice
