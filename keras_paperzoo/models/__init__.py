"""Models: one folder per paper (backbones, trainers, presets).

BERT, GPT, iGPT and the Transformer build on keras-hub's layers. Where keras-hub is not
installed (`pip install -e ".[jax]"` installs it not, since its metadata pulls TensorFlow in)
the other models import as usual and those four raise `MissingDependency` naming the command
that installs it (`pip install --no-deps "keras-hub>=0.32"`) when first used.

Each paper's view recipe sits beside its model (`models/simclr/simclr_augmentation.py`, ...), built from
the generic view layers of `keras_paperzoo.data.views`; SimCLR's and BYOL's are exported here too.
"""

import importlib.util

from keras_paperzoo.models.alexnet import AlexNetBackbone
from keras_paperzoo.models.beit import BEiT, BEiTBackbone, BEiTClassifier, VisualTokenizer
from keras_paperzoo.models.byol import BYOL, byol_augmentation, byol_views
from keras_paperzoo.models.cpc import CPC
from keras_paperzoo.models.cmc import CMC
from keras_paperzoo.models.deepcluster import DeepCluster
from keras_paperzoo.models.densecl import DenseCL
from keras_paperzoo.models.gan import GAN
from keras_paperzoo.models.image_classifier import ImageClassifier
from keras_paperzoo.models.instdisc import InstDisc
from keras_paperzoo.models.invaspread import InvaSpread
from keras_paperzoo.models.mae import MAE
from keras_paperzoo.models.moco import MoCo
from keras_paperzoo.models.resnet import ResNetBackbone
from keras_paperzoo.models.simclr import SimCLR, simclr_augmentation, simclr_views
from keras_paperzoo.models.swav import SwAV
from keras_paperzoo.models.vgg import VGGBackbone
from keras_paperzoo.models.vit import ViTBackbone

# The models that import keras_hub.
KERAS_HUB_MODELS = {
    "BertBackbone": "bert", "BertClassifier": "bert", "BertMultipleChoice": "bert", "BertPretrainer": "bert",
    "BertSpanExtractor": "bert", "BertTokenTagger": "bert", "GPTBackbone": "gpt", "GPTCausalLM": "gpt",
    "GPTClassifier": "gpt", "IGPT": "igpt", "TransformerBackbone": "transformer", "TransformerTranslator": "transformer",
}

if importlib.util.find_spec("keras_hub") is not None:
    from keras_paperzoo.models.bert import (
        BertBackbone,
        BertClassifier,
        BertMultipleChoice,
        BertPretrainer,
        BertSpanExtractor,
        BertTokenTagger,
    )
    from keras_paperzoo.models.gpt import GPTBackbone, GPTCausalLM, GPTClassifier
    from keras_paperzoo.models.igpt import IGPT
    from keras_paperzoo.models.transformer import TransformerBackbone, TransformerTranslator


def __getattr__(name):
    if name in KERAS_HUB_MODELS:  # (only reached where keras-hub is not installed)
        from keras_paperzoo.optional import require_keras_hub

        require_keras_hub(name)
        return getattr(importlib.import_module(f"{__name__}.{KERAS_HUB_MODELS[name]}"), name)
    from keras_paperzoo.papers import trainer_class

    trainer = trainer_class(name)  # a paper's trainer that is in its record but not written out above
    if trainer is not None:
        return trainer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
