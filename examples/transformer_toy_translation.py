"""
Title: Transformer: translating German to English with attention alone
Author: keras-paperzoo
Date created: 2026/11/26
Last modified: 2026/11/26
Description: Train an encoder-decoder Transformer on generated German-English pairs and score its translations with BLEU.
Accelerator: None
"""

"""
## Introduction

Vaswani et al. 2017 ("Attention Is All You Need", https://arxiv.org/abs/1706.03762)
claim that a sequence-to-sequence model needs neither recurrence nor convolution:
an encoder of self-attention layers reads the source sentence, a decoder of masked
self-attention and encoder-decoder attention layers writes the target one token at a
time, and every token relates to every other in one step (Sec. 4, Table 1). Trained with label
smoothing and a warm-up learning-rate schedule, the base model (6 + 6 layers,
d_model 512, 65M parameters) reaches 27.3 BLEU on WMT14 English-German, the big
model 28.4 (Table 2), for a fraction of earlier models' training cost.

This example trains the same architecture, scaled to a CPU, on German-English pairs
that the package generates from templates ("Zwei junge Frauen sitzen im Park." ->
"Two young women sit in the park."), with the paper's training recipe, then
translates held-out sentences with greedy and beam-search decoding and scores them
with sacreBLEU, beside the same network at its random initialisation: about five
minutes on 2 CPU cores with TensorFlow (the fastest backend for this model on a CPU).

    KERAS_BACKEND=tensorflow python examples/transformer_toy_translation.py

`PAPERZOO_EXAMPLE_SMOKE=1` shrinks it to a few steps (the test suite runs it so).
`paperzoo train transformer` runs the recipe as a command on this data (1,500
updates). On real text it is `paperzoo train transformer --dataset path/to/multi30k`
(29,000 German-English image captions, preset `transformer_small`;
`applications/transformer_multi30k.py` reaches 33.2 BLEU on test_2016_flickr with
`transformer_tiny`), and `--preset transformer_base` is the paper's model.
"""

"""
## Setup
"""

import math
import os

import numpy as np

import keras

from keras_paperzoo.data.translation import encode_pairs, translation_batches
from keras_paperzoo.data.translation_toy import toy_translation_corpus
from keras_paperzoo.evaluation import corpus_bleu
from keras_paperzoo.models import TransformerTranslator
from keras_paperzoo.models.transformer import TRANSFORMER_PRESETS, NoamSchedule, paper_optimizer
from keras_paperzoo.models.transformer.transformer_tokenizer import learn_vocabulary, make_tokenizer

SMOKE = os.environ.get("PAPERZOO_EXAMPLE_SMOKE") == "1"
TRAIN_PAIRS = 128 if SMOKE else 4000
TEST_PAIRS = 4 if SMOKE else 200
EPOCHS = 1 if SMOKE else 6
BATCH_SIZE = 64
keras.utils.set_random_seed(0)

"""
## The data

`toy_translation_corpus` draws sentences from a small grammar: a subject (with an
optional adjective whose German ending agrees with the noun's gender and number), a
verb in the singular or plural, an optional companion and a place. The model has to
learn word order, agreement ("ein junger Mann" / "eine junge Frau" -> "a young man" /
"a young woman") and that "läuft" and "laufen" are both "run(s)". There are about
9,000 different sentences; the 4,000 training pairs hold 2,875 of them, and half of
the 200 test sentences are not among them.

As in the paper (Sec. 5.1), source and target share one subword vocabulary, learned
on the training sentences of both languages (WordPiece here; the paper uses
byte-pair encoding), so that one embedding matrix serves the encoder, the decoder
and the output layer (Sec. 3.4). Pairs are batched by length (Sec. 5.1).
"""

train_src, train_tgt = toy_translation_corpus(TRAIN_PAIRS, seed=0)
test_src, test_tgt = toy_translation_corpus(TEST_PAIRS, seed=2)
vocabulary = learn_vocabulary(train_src + train_tgt, 1000)
tokenizer = make_tokenizer(vocabulary)
train = translation_batches(encode_pairs(tokenizer, train_src, train_tgt), BATCH_SIZE, buckets=(16, 32), seed=0)
steps_per_epoch = int(train.cardinality())
unseen = np.array([s not in set(train_src) for s in test_src])
print(f"{len(train_src)} training pairs, {len(test_src)} test pairs ({unseen.sum()} not among the training pairs), "
      f"{len(vocabulary)} shared subword tokens")
for german, english in zip(train_src[:3], train_tgt[:3]):
    print(f"  {german}  ->  {english}")

"""
## The model

`transformer_tiny` keeps the base model's shape (post-norm layers, d_ff = 4 d_model,
sinusoidal positions, embeddings scaled by sqrt(d_model) and tied to the softmax) at
2 + 2 layers of width 128 with 4 heads and dropout 0.1. The base model is
`transformer_base` (N = 6, d_model 512, d_ff 2048, h 8: 63M parameters with the
paper's 37,000-token vocabulary).

`TransformerTranslator` adds the paper's loss, cross-entropy with label smoothing
eps_ls = 0.1 (Sec. 5.4: "This hurts perplexity, as the model learns to be more
unsure, but improves accuracy and BLEU score"), and decoding with a key/value cache.
"""

translator = TransformerTranslator.from_preset("transformer_tiny", tokenizer=tokenizer,
                                               vocabulary_size=len(vocabulary))
print(f"transformer_tiny: {translator.count_params():,} parameters; "
      f"the base model's configuration: {TRANSFORMER_PRESETS['transformer_base']['config']}")

"""
## The learning-rate schedule

The paper trains with Adam (beta_2 = 0.98, eps = 1e-9) at

    lrate = d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5)      (eq. 3)

a linear warm-up over 4,000 updates, then a decay with the inverse square root of
the update count; for the base model it peaks at 7.0e-4. This run makes 372
updates (6 epochs of 62 batches of 64 pairs), so it warms up over the first 10 % of
them and scales eq. (3) to the same peak, as the `paperzoo train transformer` recipe
does: with 4,000 warm-up updates it would end long before its peak.
"""

total_updates = EPOCHS * steps_per_epoch
warmup = max(1, total_updates // 10)
peak = 512**-0.5 * 4000**-0.5  # the base model's peak rate, 7.0e-4
d_model = translator.backbone.hidden_dim
scale = peak * math.sqrt(d_model * warmup)
schedule = NoamSchedule(d_model, warmup_steps=warmup, scale=scale)
steps = sorted({1, warmup // 2 or 1, warmup, 4 * warmup, total_updates})
print("learning rate at updates " + ", ".join(f"{step}: {float(schedule(step)):.1e}" for step in steps))
translator.compile(optimizer=paper_optimizer(d_model, warmup, scale))

"""
## Scoring translations

`translate` decodes greedily (`beam_size=1`) or with beam search; the paper uses
beam size 4 and length penalty alpha = 0.6 (Sec. 6.1). BLEU is sacreBLEU's corpus
BLEU (0-100) on the detokenized output; "exact" is the share of test sentences
translated word for word as the reference, over all of them and over the 100 that
are not among the training pairs. The paper lets a translation run to the source
length + 50 tokens; here to 32 tokens (the longest reference has 13), since an
untrained decoder seldom emits its end token and would run to the limit.
"""

MAX_LENGTH = 6 if SMOKE else 32


def scores(model):
    """BLEU and exact matches (all test sentences, and those not among the training pairs) per decoder."""
    results = {}
    for name, beam_size in (("greedy", 1), ("beam 4", 4)):
        hypotheses = model.translate(test_src, beam_size=beam_size, length_penalty=0.6, max_length=MAX_LENGTH)
        exact = np.array([h == r for h, r in zip(hypotheses, test_tgt)])
        results[name] = {"bleu": corpus_bleu(hypotheses, test_tgt)["bleu"], "exact": 100 * exact.mean(),
                         "exact_unseen": 100 * exact[unseen].mean(), "translations": hypotheses}
    return results


at_init = scores(translator)

"""
## Training

Label smoothing puts a floor under the training loss: the targets are 0.9 on the
right token and 0.1 spread over the whole vocabulary, and no prediction has a lower
cross-entropy than the entropy of those targets.
"""

history = translator.fit(train.repeat(), epochs=EPOCHS, steps_per_epoch=steps_per_epoch, shuffle=False, verbose=2)
trained = scores(translator)
V, eps = len(vocabulary), translator.label_smoothing
q = np.array([1 - eps + eps / V] + [eps / V] * (V - 1))  # the smoothed target of one token
loss_floor = -np.sum(q * np.log(q))

"""
## What it learned

In our runs (TensorFlow, 2 CPU cores shared with other jobs, 4 to 5 minutes in all,
2026-11-26) the untrained network scores 0.0 BLEU: it repeats a few tokens, or ends
at once. After 372 updates the Transformer translates all 200 test sentences exactly
as the references, BLEU 100.0 with greedy decoding and with beam search, the 100
sentences that no training pair contains included: it has learned the grammar's
word order and agreement, not a table of whole sentences. The training loss ended
at 0.87 nats per token, just above the 0.84 that label smoothing allows: the model
gives the right token about 0.9 of its probability, not 1, which is the "hurts
perplexity" of Sec. 5.4. On a grammar this small the most probable next token is
always right, so beam search, which the paper uses for every reported score, has
nothing left to correct; 100 BLEU here checks the whole pipeline (vocabulary,
training, decoding, BLEU) and is no measure of translation quality on real text,
for which see the Multi30k run above.
"""

print(f"\n{'test set':16s}{'random init':>34s}{'trained':>34s}")
print(f"{'':16s}" + f"{'BLEU':>10s}{'exact':>10s}{'exact unseen':>14s}" * 2)
for name in ("greedy", "beam 4"):
    print(f"{name:16s}" + "".join(f"{r[name]['bleu']:10.1f}{r[name]['exact']:9.0f}%{r[name]['exact_unseen']:13.0f}%"
                                  for r in (at_init, trained)))
print(f"\ntraining loss (label-smoothed) {history.history['loss'][0]:.2f} after the first epoch, "
      f"{history.history['loss'][-1]:.2f} after the last; label smoothing's floor {loss_floor:.2f}\n")
for german, reference, before, after in list(zip(test_src, test_tgt, at_init["beam 4"]["translations"],
                                                 trained["beam 4"]["translations"]))[:4]:
    print(f"{german}\n  reference:   {reference}\n  random init: {before}\n  trained:     {after}")
