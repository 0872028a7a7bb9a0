"""Exact resume of the task heads: BERT's tagger and multiple choice, GPT-1's four task transformations.

Each fine-tuning run is killed after its first epoch and resumed with
`keras.callbacks.BackupAndRestore`; it must end on the uninterrupted run's weights, with
dropout on (the heads' defaults), so the random state is restored too. Each head resumes
on one backend leg (three runs of a compiled step each; the resume mechanism itself is
tested on every leg by the trainers' resume tests), the six spread over the three legs.
"""

import numpy as np
import pytest

import keras

from keras_paperzoo.models.bert.bert_backbone import BertBackbone
from keras_paperzoo.models.bert.bert_multiple_choice import BertMultipleChoice
from keras_paperzoo.models.bert.bert_token_tagger import BertTokenTagger
from keras_paperzoo.models.gpt.gpt_backbone import GPTBackbone
from keras_paperzoo.models.gpt.gpt_classifier import GPTClassifier
from keras_paperzoo.models.gpt.gpt_task_inputs import add_task_tokens, pack_task_inputs
from tests.model_checks import check_exact_resume

RNG = np.random.default_rng(0)
BERT = dict(vocabulary_size=50, num_layers=1, num_heads=2, hidden_dim=16, intermediate_dim=32, max_sequence_length=8)
V, T = 20, 10
GPT = dict(vocabulary_size=V, num_layers=1, hidden_dim=16, num_heads=2, intermediate_dim=32, max_sequence_length=T,
           dropout=0.1, norm_first=False)  # GPT-1: post-norm, dropout 0.1
SPECIAL = {"start": V, "delimiter": V + 1, "extract": V + 2}


def _bert_inputs(*shape):
    padding_mask = np.ones(shape, "int32")
    padding_mask[..., -2:] = 0
    return {"token_ids": RNG.integers(5, 50, shape).astype("int32") * padding_mask,
            "segment_ids": np.zeros(shape, "int32"), "padding_mask": padding_mask}


def _compiled(model):
    model.compile(optimizer=keras.optimizers.Adam(1e-2))
    return model


@pytest.mark.one_leg("torch")
def test_bert_token_tagger_resumes_exactly(tmp_path):
    x = _bert_inputs(4, 8)
    y = RNG.integers(0, 3, (4, 8)).astype("int32")
    y[:, 0], y[:, 5:] = -1, -1  # [CLS], later sub-tokens and padding carry no label
    check_exact_resume(lambda: _compiled(BertTokenTagger(BertBackbone(**BERT), num_tags=3)), x, y, tmp_path)


@pytest.mark.one_leg("tensorflow")
def test_bert_multiple_choice_resumes_exactly(tmp_path):
    x = _bert_inputs(4, 3, 8)
    y = np.array([0, 2, 1, 0], "int32")
    check_exact_resume(lambda: _compiled(BertMultipleChoice(BertBackbone(**BERT), num_choices=3)), x, y, tmp_path)


def _words(n):
    return list(RNG.integers(1, V, n))


EXAMPLES = {
    "classification": ([_words(4) for _ in range(4)], 2),
    "entailment": ([(_words(3), _words(3)) for _ in range(4)], 3),
    "similarity": ([(_words(3), _words(3)) for _ in range(4)], 2),
    "multiple_choice": ([(_words(3), [_words(2) for _ in range(3)]) for _ in range(4)], None),
}


LEG = {"classification": "jax", "entailment": "torch", "similarity": "tensorflow", "multiple_choice": "torch"}


@pytest.mark.parametrize("task", [pytest.param(task, marks=pytest.mark.one_leg(LEG[task])) for task in sorted(EXAMPLES)])
def test_gpt_classifier_resumes_exactly(task, tmp_path):
    examples, num_classes = EXAMPLES[task]
    x = pack_task_inputs(task, examples, T, SPECIAL)
    y = np.array([0, 1, 1, 0], "int32")

    def build():
        backbone = add_task_tokens(GPTBackbone(**GPT))
        return _compiled(GPTClassifier(backbone, num_classes=num_classes, task=task))

    check_exact_resume(build, x, y, tmp_path)
