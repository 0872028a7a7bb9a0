"""
Title: GPT-3: in-context learning of a rule the prompt shows but does not answer
Author: keras-paperzoo
Date created: 2026/11/26
Last modified: 2026/12/05
Description: A tiny GPT reads a Caesar shift or a digit offset from the examples in its prompt, or fails to.
Accelerator: None
"""

"""
## Introduction

Brown et al. 2020 ("Language Models are Few-Shot Learners", GPT-3) evaluate a language
model without any gradient step on the task: the prompt holds K solved examples (the
"shots") and then the question, and the model's answer is read from its next-token
probabilities (Sec. 2). The claim is that the model learns *in context*: accuracy rises
with K (Fig. 1.2), for tasks it cannot have memorised, such as the symbol manipulations
of Sec. 3.9.2.

A test of that claim must make sure the answer is not simply *in* the prompt. Here every
question is an episode of a rule whose parameter is drawn at random: a Caesar shift of a
letter (x -> x + s mod 26, "cf" for s = 3) or an offset of both digits of a number
(d -> d + c mod 10, "3782" for c = 5). The question's input is never one of the shots'
inputs, and its 4 choices are the question under 4 parameters of the family, none of them
a shot's output: a model that copies from the prompt is at chance. The answer has to come
from the rule the shots show.

A 2-layer GPT is trained as a plain language model on rows of such episodes, then
evaluated with `few_shot_evaluate` at K = 0, 1, 4 and 8 shots, as a 4-way multiple choice
scored by log-likelihood (GPT-3's protocol for multiple choice). Beside it: the same model
untrained, a unigram baseline and the copy-and-exclude baseline. The reproduction
`paperzoo reproduce gpt3` (keras_paperzoo/reproductions/gpt3_icl.py) runs the same
experiment with 3 seeds and held-out shifts.

    KERAS_BACKEND=jax python examples/gpt3_in_context.py

`PAPERZOO_EXAMPLE_SMOKE=1` shrinks it to a few steps (the test suite runs it so).
"""

"""
## Setup
"""

import math
import os

import numpy as np

import keras

from keras_paperzoo.data.icl_tasks import copy_and_exclude
from keras_paperzoo.evaluation import few_shot_evaluate
from keras_paperzoo.models import GPTBackbone, GPTCausalLM
from keras_paperzoo.reproductions.gpt3_icl import (evaluation_examples, few_shot_task, tokenizer_for,
                                                   training_families, rule_training_rows)

SMOKE = os.environ.get("PAPERZOO_EXAMPLE_SMOKE") == "1"
UPDATES, BATCH_SIZE = (8, 32) if SMOKE else (3000, 32)
EPISODES, QUESTIONS_PER_EPISODE = (1, 2) if SMOKE else (20, 4)
SHOTS = (0, 1, 4, 8)
rng = np.random.default_rng(0)
keras.utils.set_random_seed(0)

"""
## Tasks

Every training row is 48 characters of one episode: lines "input output" of one rule with
one parameter (shift 60 %, digits 40 %), inputs never repeated within the row. So a value
can only be predicted from the rule the row's earlier lines show. Shifts 2, 7, 12, 17 and
22 are never trained on.
"""

tokenizer = tokenizer_for()  # "\n", a-z, 0-9
ids = rule_training_rows(UPDATES * BATCH_SIZE, rng, training_families(), 48)  # (N, 48)
print(f"{len(ids)} training rows, e.g.\n{tokenizer.detokenize(ids[0])}")

"""
Each evaluation episode gives 8 solved pairs as the pool the shots are drawn from and
`QUESTIONS_PER_EPISODE` questions on other inputs. `few_shot_task` draws a question's K
shots from its own episode.
"""

train, evaluation = evaluation_examples(rng, EPISODES, QUESTIONS_PER_EPISODE)
task = few_shot_task(train, evaluation)
print(task.prompt(0, shots=8, seed=0), "->", task.target_text(evaluation[0]), evaluation[0]["choices"])

"""
## Model and baselines

The unigram baseline scores a choice by the training text's character frequencies alone,
so it cannot depend on K; copy-and-exclude picks a choice the shots show as an output.
"""

backbone = GPTBackbone(vocabulary_size=tokenizer.vocabulary_size(), num_layers=2, hidden_dim=64, num_heads=4,
                       intermediate_dim=256, max_sequence_length=48, dropout=0.0)
lm = GPTCausalLM(backbone, tokenizer=tokenizer)


def accuracy_by_shots(model):
    """{K: (accuracy, standard error)} over the questions of the trained parameters (shift and digits)."""
    result = {}
    for shots in SHOTS:
        records = few_shot_evaluate(model, tokenizer, task, shots=shots)["records"]
        correct = [r["correct"] for r, e in zip(records, evaluation) if e["set"] != "shift, held out"]
        result[shots] = (float(np.mean(correct)), float(np.std(correct, ddof=1) / math.sqrt(len(correct))))
    return result


counts = np.bincount(ids.ravel(), minlength=tokenizer.vocabulary_size()) + 1
log_frequency = np.log(counts / counts.sum())
unigram = np.mean([int(np.argmax([log_frequency[tokenizer.encode(c)].sum() for c in e["choices"]]))
                   == task.target_index(e) for e in task.evaluation])
copying = {shots: float(np.mean(copy_and_exclude(task, shots, seed=1234))) for shots in SHOTS}
random_init = accuracy_by_shots(lm)  # before training

"""
## Training

A plain next-character loss on every position; nothing marks the outputs as special.
GPT-1's optimizer (AdamW, warm-up, cosine) at a peak learning rate of 3e-3.
"""

lm.compile(optimizer=lm.paper_optimizer(total_steps=UPDATES, warmup_steps=max(1, UPDATES // 20),
                                        peak_learning_rate=3e-3))
lm.fit(ids[:, :-1], ids[:, 1:], batch_size=BATCH_SIZE, epochs=1, verbose=2)
trained = accuracy_by_shots(lm)

"""
## In-context learning?

With K = 0 the prompt is the input alone, so every model is at chance (25 %); one shot
determines the rule. The untrained model, the unigram baseline and copy-and-exclude stay
at chance whatever K: nothing in the prompt hands over the answer. Whether the trained
model rises with K is the question; the reproduction's committed run (3 seeds) answers
it in applications/results/gpt3_icl_results.md.
"""

print(f"\n{'accuracy (4 choices, chance 0.25)':34s}{'random init':>16s}{'unigram':>9s}{'copying':>9s}{'trained':>16s}")
for shots in SHOTS:
    before, after = random_init[shots], trained[shots]
    print(f"{f'K = {shots}':34s}{before[0]:9.3f} +-{before[1]:.3f}{unigram:9.3f}{copying[shots]:9.3f}"
          f"{after[0]:9.3f} +-{after[1]:.3f}")
