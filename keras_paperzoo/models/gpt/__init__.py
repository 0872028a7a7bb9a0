"""GPT-1 and GPT-2 (Radford et al. 2018, 2019): backbone, causal LM, GPT-1 fine-tuning, presets."""

from keras_paperzoo.models.gpt.gpt_backbone import GPTBackbone, gelu_approximate, gpt_parameter_count
from keras_paperzoo.models.gpt.gpt_presets import GPT_PRESETS
from keras_paperzoo.models.gpt.gpt_causal_lm import GPTCausalLM, paper_optimizer
from keras_paperzoo.models.gpt.gpt_classifier import GPTClassifier, LastTokenPooling, fine_tuning_optimizer
