"""
Title: GPT-3: in-context learning of letter mappings
Author: keras-paperzoo
Date created: 2026/11/26
Last modified: 2026/11/27
Description: A tiny GPT learns to read a new rule from the examples in its prompt: accuracy rises with K.
Accelerator: None
"""

"""
## Introduction

Brown et al. 2020 ("Language Models are Few-Shot Learners", GPT-3) evaluate a language
model without any gradient step on the task: the prompt holds K solved examples (the
"shots") and then the question, and the model's answer is read from its next-token
probabilities (Sec. 2). The claim is that the model learns *in context*: accuracy rises
with K (Fig. 1.2), for tasks it cannot have memorised, such as the novel symbol
manipulations of Sec. 3.9.2.

This example shows the effect at the smallest scale. A task maps 8 letters to 8 letters,
written one pair a line ("xy" : x -> y); the question is a key alone. Training draws a new
random mapping for most sequences (and a few fixed rules: copy, successor, reverse), so no
mapping can be memorised; evaluation uses mappings never drawn in training and Caesar
shifts, a family never trained on. A 2-layer GPT is trained as a plain language model on
such lists, then evaluated with `few_shot_evaluate` with K = 0, 1, 4 and 8 shots, as a
4-way multiple choice scored by log-likelihood (GPT-3's protocol for multiple choice).
Beside it: the same model untrained, and a unigram baseline.

The tasks and the baselines come from the reproduction `paperzoo reproduce gpt3`
(keras_paperzoo/reproductions/gpt3_icl.py), which runs the same experiment with 5 times
the questions.

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

from keras_paperzoo.evaluation import few_shot_evaluate
from keras_paperzoo.models import GPTBackbone, GPTCausalLM
from keras_paperzoo.reproductions.gpt3_icl import few_shot_task, held_out_examples, tokenizer_for, training_sequences

SMOKE = os.environ.get("PAPERZOO_EXAMPLE_SMOKE") == "1"
UPDATES, BATCH_SIZE = (8, 32) if SMOKE else (3000, 32)
HELD_OUT_TASKS, QUESTIONS_PER_TASK = (2, 2) if SMOKE else (20, 4)
SHOTS = (0, 1, 4, 8)
rng = np.random.default_rng(0)
keras.utils.set_random_seed(0)

"""
## Tasks

Every training sequence is 12 lines "kv" of one task, keys drawn with repetition from
its 8, so a repeated key's value can only be predicted by finding the key earlier in the
sequence and copying the letter after it: the "induction head" circuit of two attention
layers (Olsson et al. 2022). The value sits right after its key; a first version of this
example wrote "k=v", which puts it two tokens away, and the model stayed on the loss
plateau of a model that has learned the format only.
"""

tokenizer = tokenizer_for(26)  # "\n" and a-z
ids, seen = training_sequences(UPDATES * BATCH_SIZE, rng, pairs=12)  # (N, 36), each row's task
print(f"{len(ids)} training sequences, e.g.\n{tokenizer.detokenize(ids[0])}")

"""
Each held-out task gives its 8 pairs as the pool the shots are drawn from and
`QUESTIONS_PER_TASK` questions; the choices of a question are its answer and 3 other
values of the same task. `few_shot_task` draws a question's K shots from its own task.
"""

train, evaluation = held_out_examples(rng, HELD_OUT_TASKS, QUESTIONS_PER_TASK, set(seen))
task = few_shot_task(train, evaluation)
print(task.prompt(0, shots=8, seed=0), "->", task.target_text(evaluation[0]))

"""
## Model and baselines

The unigram baseline scores a choice by the training text's letter frequencies alone, so
it cannot depend on K.
"""

backbone = GPTBackbone(vocabulary_size=tokenizer.vocabulary_size(), num_layers=2, hidden_dim=64, num_heads=4,
                       intermediate_dim=256, max_sequence_length=36, dropout=0.0)
lm = GPTCausalLM(backbone, tokenizer=tokenizer)


def accuracy_by_shots(model):
    """{K: (accuracy, standard error)} over every held-out question."""
    result = {}
    for shots in SHOTS:
        correct = [r["correct"] for r in few_shot_evaluate(model, tokenizer, task, shots=shots)["records"]]
        result[shots] = (float(np.mean(correct)), float(np.std(correct, ddof=1) / math.sqrt(len(correct))))
    return result


counts = np.bincount(ids.ravel(), minlength=tokenizer.vocabulary_size()) + 1
log_frequency = np.log(counts / counts.sum())
unigram = np.mean([int(np.argmax([log_frequency[tokenizer.encode(c)].sum() for c in e["choices"]]))
                   == task.target_index(e) for e in task.evaluation])
random_init = accuracy_by_shots(lm)  # before training

"""
## Training

A plain next-character loss on every position; nothing marks the values as special.
GPT-1's optimizer (AdamW, warm-up, cosine) at a peak learning rate of 3e-3.
"""

lm.compile(optimizer=lm.paper_optimizer(total_steps=UPDATES, warmup_steps=max(1, UPDATES // 20),
                                        peak_learning_rate=3e-3))
lm.fit(ids[:, :-1], ids[:, 1:], batch_size=BATCH_SIZE, epochs=1, verbose=2)
trained = accuracy_by_shots(lm)

"""
## In-context learning

With K = 0 the prompt is the key alone, so every model is at chance (25 %). With K shots
the question's pair is in the prompt with probability K / 8: a model that reads it off
gets 25 + 75 K / 8 % (25, 34, 62, 100 %), a little more if it also rules out the values
of the other keys shown. The trained model rises with K, while the untrained one and the
unigram baseline stay flat: the weights never saw these mappings (GPT-3, Fig. 1.2, at the
smallest scale). The "+-" is one standard error over the held-out questions.

Our run (JAX, 2 CPU cores shared with other jobs, load about 7, 2026-11-27; 3,000 updates,
2.2 minutes in all, 160 questions): 18.1 / 30.6 / 56.9 / 81.9 % (+- 3-4) at K = 0 / 1 / 4 / 8,
against 16.9 / 24.4 / 25.0 / 28.1 % untrained and 19.4 % for the unigram baseline (this
evaluation set happens to lie a little below chance for the letter-preference baselines). The
reproduction's CPU budget (6,000 updates, 800 questions) reached 22.1 / 37.4 / 68.2 / 92.0 % at K = 0 / 1 / 4 / 8, against
20.8 / 24.5 / 21.9 / 24.4 % untrained and 24.2 % for the unigram baseline
(applications/results/gpt3_icl_results.md).
"""

print(f"\n{'accuracy (4 choices, chance 0.25)':36s}{'random init':>16s}{'unigram':>10s}{'trained':>16s}")
for shots in SHOTS:
    before, after = random_init[shots], trained[shots]
    print(f"{f'K = {shots}':36s}{before[0]:9.3f} +-{before[1]:.3f}{unigram:10.3f}{after[0]:9.3f} +-{after[1]:.3f}")
