"""Models: one folder per paper (backbones, trainers, presets)."""

from keras_paperzoo.models.alexnet import AlexNetBackbone
from keras_paperzoo.models.beit import BEiT, BEiTBackbone, BEiTClassifier, VisualTokenizer
from keras_paperzoo.models.byol import BYOL
from keras_paperzoo.models.cpc import CPC
from keras_paperzoo.models.bert import (
    BertBackbone,
    BertClassifier,
    BertMultipleChoice,
    BertPretrainer,
    BertSpanExtractor,
    BertTokenTagger,
)
from keras_paperzoo.models.cmc import CMC
from keras_paperzoo.models.deepcluster import DeepCluster
from keras_paperzoo.models.densecl import DenseCL
from keras_paperzoo.models.gan import GAN
from keras_paperzoo.models.gpt import GPTBackbone, GPTCausalLM, GPTClassifier
from keras_paperzoo.models.igpt import IGPT
from keras_paperzoo.models.image_classifier import ImageClassifier
from keras_paperzoo.models.instdisc import InstDisc
from keras_paperzoo.models.invaspread import InvaSpread
from keras_paperzoo.models.mae import MAE
from keras_paperzoo.models.moco import MoCo
from keras_paperzoo.models.resnet import ResNetBackbone
from keras_paperzoo.models.simclr import SimCLR
from keras_paperzoo.models.swav import SwAV
from keras_paperzoo.models.transformer import TransformerBackbone, TransformerTranslator
from keras_paperzoo.models.vgg import VGGBackbone
from keras_paperzoo.models.vit import ViTBackbone
