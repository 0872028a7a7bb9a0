"""GPT-1 and GPT-2 (Radford et al. 2018, 2019): backbone, causal LM, GPT-1 fine-tuning, presets."""

from keras_paperzoo.models.gpt.gpt_backbone import (
    GPTBackbone,
    LocalBandMask,
    banded_layers,
    gelu_approximate,
    gpt_parameter_count,
)
from keras_paperzoo.models.gpt.gpt_presets import GPT_PRESETS
from keras_paperzoo.models.gpt.gpt3_optimizer import gpt3_optimizer
from keras_paperzoo.models.gpt.gpt_causal_lm import GPTCausalLM, paper_optimizer
from keras_paperzoo.models.gpt.gpt_classifier import GPTClassifier, LastTokenPooling, fine_tuning_optimizer
from keras_paperzoo.models.gpt.gpt_task_inputs import add_task_tokens, pack_task_inputs, task_token_ids

# The tokenizers a `GPTCausalLM` saves inside its `.keras` file (by config): importing the models registers
# them, so `keras.saving.load_model` finds them in a new process.
from keras_paperzoo.data.bpe import InlineBytePairTokenizer  # noqa: E402
from keras_paperzoo.data.char_text import CharTokenizer  # noqa: E402
