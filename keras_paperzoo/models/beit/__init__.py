"""BEiT (Bao et al. 2021): the visual tokenizer (a DALL-E-style dVAE) and its presets."""

from keras_paperzoo.models.beit.beit_tokenizer import VisualTokenizer, code_perplexity, cosine_anneal, kl_to_uniform
from keras_paperzoo.models.beit.beit_tokenizer_presets import VISUAL_TOKENIZER_PRESETS
from keras_paperzoo.models.beit.beit import BEiT, paper_optimizer
from keras_paperzoo.models.beit.beit_backbone import BEIT_NO_DECAY_PATHS, BEiTBackbone, MaskEmbedding, beit_parameter_count
from keras_paperzoo.models.beit.beit_classifier import BEiTClassifier
from keras_paperzoo.models.beit.beit_presets import BEIT_FINE_TUNING_RECIPE, BEIT_PRESETS
