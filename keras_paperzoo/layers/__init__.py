"""Building blocks used by more than one paper."""

from keras_paperzoo.layers.blockwise_masking import BlockwiseMasking
from keras_paperzoo.layers.drop_path import DropPath
from keras_paperzoo.layers.feature_queue import FeatureQueue
from keras_paperzoo.layers.l2_normalization import L2Normalization
from keras_paperzoo.layers.local_response_normalization import LocalResponseNormalization
from keras_paperzoo.layers.maxout import Maxout
from keras_paperzoo.layers.memory_bank import MemoryBank
from keras_paperzoo.layers.nce_normalizer import NCENormalizer
from keras_paperzoo.layers.patch_embedding import ClassToken, PatchEmbedding, patchify, unpatchify
from keras_paperzoo.layers.position_embedding import (
    FactorizedPositionEmbedding2D,
    LearnedPositionEmbedding,
    RelativePositionMultiHeadAttention,
    resize_position_embeddings,
)
from keras_paperzoo.layers.projection_head import ProjectionHead
from keras_paperzoo.layers.prototypes import Prototypes
from keras_paperzoo.layers.random_masking import RandomMasking
from keras_paperzoo.layers.relative_position_bias import RelativePositionBias, RelativePositionBiasAttention
from keras_paperzoo.layers.rgb_to_lab import RGBToLab, rgb_to_lab, split_lab
from keras_paperzoo.layers.sequence_folding import FoldSequences, UnfoldSequences
from keras_paperzoo.layers.sincos_position_embedding import SinCosPositionEmbedding2D, sincos_position_table_2d
from keras_paperzoo.layers.transformer_block import TransformerBlock
