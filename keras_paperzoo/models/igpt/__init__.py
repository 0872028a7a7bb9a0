"""iGPT, "Generative Pretraining from Pixels" (Chen et al. 2020): palette, trainer, presets."""

from keras_paperzoo.models.igpt.igpt import IGPT, paper_optimizer
from keras_paperzoo.models.igpt.igpt_palette import ColorPalette
from keras_paperzoo.models.igpt.igpt_presets import IGPT_PRESETS, PAPER_PARAMETERS, igpt_parameter_count
