"""
Title: BERT: pre-training a bidirectional encoder, then fine-tuning it
Author: keras-paperzoo
Date created: 2026/11/26
Last modified: 2026/11/26
Description: Pre-train a small BERT with masked LM and next sentence prediction, then fine-tune it beside a random init.
Accelerator: None
"""

"""
## Introduction

BERT (Devlin et al. 2019, "BERT: Pre-training of Deep Bidirectional Transformers for
Language Understanding", https://arxiv.org/abs/1810.04805) pre-trains a Transformer
encoder on unlabelled text with two tasks (Sec. 3.1): a **masked language model**,
which hides 15 % of the tokens and predicts them from the words on *both* sides, and
**next sentence prediction**, which tells whether sentence B follows sentence A in a
document. The same network, with one new output layer, is then fine-tuned on each
labelled task. The paper's claim is that this recipe beats training the task's model
from scratch: BERT-base (110M parameters, pre-trained for 1M updates on 3.3B words)
reaches 93.5 % on SST-2 sentiment and 79.6 on the GLUE average (Table 1).

This example runs the recipe at a CPU's scale: a 2-layer BERT pre-trains on
generated documents that ship with the package, fills in masked words of held-out
documents, and is then fine-tuned on a small sentiment task beside the same network at
its random initialisation, in about 8 minutes on 2 CPU cores with TensorFlow (the
fastest backend for this model on a CPU).

    KERAS_BACKEND=tensorflow python examples/bert_sample_text.py

`PAPERZOO_EXAMPLE_SMOKE=1` shrinks it to a few steps (the test suite runs it so).
`paperzoo train bert` runs the package's recipe as a command (on 120 of these
documents, at the paper's learning rate); `paperzoo train bert --dataset path/to/data`
pre-trains on a folder of real English text (Tiny Shakespeare, Multi30k's English
captions, SST-2's sentences) and fine-tunes on SST-2, and `--preset bert_base` is the
paper's model. `applications/bert_sst2.py` measures the fine-tuning gain on
SST-2 at CPU budgets.
"""

"""
## Setup
"""

import os

import numpy as np

import keras

from keras_paperzoo.data.bert_inputs import BertPacker, classification_dataset
from keras_paperzoo.data.bert_pretraining import bert_pretraining_dataset, train_wordpiece
from keras_paperzoo.data.text_corpus import sample_documents, sample_sentiment
from keras_paperzoo.models import BertBackbone, BertClassifier, BertPretrainer
from keras_paperzoo.models.bert import BERT_PRESETS, bert_parameter_count, pretraining_optimizer

SMOKE = os.environ.get("PAPERZOO_EXAMPLE_SMOKE") == "1"
PRETRAINING_EPOCHS, UPDATES_PER_EPOCH = (1, 2) if SMOKE else (10, 100)
LABELLED, DEV = (16, 32) if SMOKE else (200, 200)
FINE_TUNING_EPOCHS = 1 if SMOKE else 5
SEEDS = (0,) if SMOKE else (0, 1, 2)
SEQUENCE_LENGTH = 64
BATCH_SIZE = 32
keras.utils.set_random_seed(0)

"""
## The unlabelled text

`sample_documents` generates short documents, each following one person through a
day: "tom is a baker . tom lives in a busy town . every morning tom bakes fresh
bread . ...". Within a document the sentences hang together (a baker bakes, a sailor
sails), which gives both pre-training tasks something to learn; across documents
they do not. 1,000 documents train, 100 others are held out.

The vocabulary is WordPiece learned on the corpus (the paper: 30,000 WordPiece
tokens; this corpus has 144 distinct words, each kept whole). Sentence pairs are
built as the reference `create_pretraining_data.py` does: half the time B is the
text that follows A (IsNext), half the time a span of another document (NotNext);
then 15 % of the tokens are chosen, and of those 80 % become [MASK], 10 % a random
token and 10 % stay as they are, so that the model cannot rely on seeing [MASK] to
know where to predict (App. A.1). The masks are drawn again every epoch.
"""

documents = sample_documents(1000, seed=0)
held_out = sample_documents(40 if SMOKE else 100, seed=5)
tokenizer = train_wordpiece(documents, vocabulary_size=2000)
pretraining_data = bert_pretraining_dataset(documents, tokenizer, SEQUENCE_LENGTH, BATCH_SIZE, seed=0, repeat=True)
held_out_data = bert_pretraining_dataset(held_out, tokenizer, SEQUENCE_LENGTH, BATCH_SIZE, seed=1, shuffle=False)
held_out_batches = held_out_data.num_pairs // BATCH_SIZE
print(f"{len(documents)} documents, {pretraining_data.num_pairs} sentence pairs, "
      f"{tokenizer.vocabulary_size()} WordPiece tokens")
x, y = next(iter(pretraining_data))
tokens = [tokenizer.id_to_token(int(i)) for i in x["token_ids"][0] if int(i) != tokenizer.pad_token_id]
print("one training input:", " ".join(tokens))
print("  the masked positions hide:", [tokenizer.id_to_token(int(i)) for i, w in
                                       zip(y["mask_ids"][0], y["mask_weights"][0]) if w > 0],
      "| B follows A:", not bool(y["next_sentence_labels"][0]))

"""
## The model

`bert_tiny` (L = 2 layers, H = 128, A = 2 heads; Turc et al. 2019's BERT-Tiny) has
BERT-base's design (post-norm encoder blocks, GELU, learned position and segment
embeddings, the pooled [CLS] state C) at L = 12, H = 768, A = 12 in the paper.
`BertPretrainer` adds the two heads: the masked-LM output layer tied to the token
embedding, and a 2-way classifier on C for next sentence prediction; its loss is the
sum of the two.

The optimizer is the paper's (Adam with weight decay 0.01, warm-up over the first 1 %
of the updates, then linear decay) at a learning rate of 1e-3 instead of 1e-4: the
paper's rate is sized for a million updates of BERT-base, and 1,000 updates of a
2-layer model need a larger one (`applications/bert_sst2.py` measured 1e-3 ahead of
5e-4 for this model size).
"""

backbone = BertBackbone.from_preset("bert_tiny", vocabulary_size=tokenizer.vocabulary_size(),
                                    max_sequence_length=SEQUENCE_LENGTH)
initial_weights = backbone.get_weights()  # the random initialisation, kept for the baseline
pretrainer = BertPretrainer(backbone)
pretrainer.compile(optimizer=pretraining_optimizer(PRETRAINING_EPOCHS * UPDATES_PER_EPOCH, learning_rate=1e-3))
print(f"bert_tiny: {backbone.count_params():,} parameters; "
      f"bert_base: {bert_parameter_count(**BERT_PRESETS['bert_base']['config']):,}")

"""
## Masked words, before and after pre-training

Three cloze questions on sentences of a kind the corpus has, each with one word
hidden; the model's three most probable words for the gap are printed before and
after pre-training. In the first and the third the clue comes *after* the gap (only
the sailing tells that mark is a sailor, only the next sentence that the doctor is
paul): a left-to-right language model such as GPT cannot use it, a bidirectional one
can, which is the paper's case for the masked LM (Sec. 3.1). `evaluate` measures the
masked-LM and next-sentence accuracy on the held-out documents.
"""

CLOZE = [("mark is a sailor . mark lives in a port by the sea . every morning mark sails a small boat .", "sailor"),
         ("kate is a baker . kate lives in a busy town . every morning kate bakes fresh bread .", "bakes"),
         ("paul is a doctor . paul lives in a large city . every morning paul helps sick people .", "paul")]
packer = BertPacker(tokenizer, SEQUENCE_LENGTH)
cloze_inputs = {k: np.array(v) for k, v in packer(np.array([text for text, _ in CLOZE])).items()}  # [CLS] text [SEP]
# the first occurrence of each hidden word (one WordPiece token each: the vocabulary holds every word whole)
cloze_positions = np.array([[list(row).index(tokenizer.token_to_id(word))]
                            for row, (_, word) in zip(cloze_inputs["token_ids"], CLOZE)], "int32")  # (3, 1)
cloze_inputs["token_ids"][np.arange(len(CLOZE)), cloze_positions[:, 0]] = tokenizer.mask_token_id
cloze_inputs["mask_positions"] = cloze_positions


def fill_in():
    logits = pretrainer.predict(cloze_inputs, verbose=0)["mlm_logits"][:, 0]  # (3, V)
    return [[tokenizer.id_to_token(int(i)) for i in np.argsort(-row)[:3]] for row in logits]


def held_out_accuracy():
    # steps= given: on a dataset of unknown length Keras's TensorFlow backend counts one empty batch more
    metrics = pretrainer.evaluate(held_out_data, steps=held_out_batches, verbose=0, return_dict=True)
    return 100 * metrics["mlm_accuracy"], 100 * metrics["nsp_accuracy"]


guesses_at_init, accuracy_at_init = fill_in(), held_out_accuracy()

"""
## Pre-training
"""

pretrainer.fit(pretraining_data, epochs=PRETRAINING_EPOCHS, steps_per_epoch=UPDATES_PER_EPOCH, shuffle=False, verbose=2)
guesses, accuracy = fill_in(), held_out_accuracy()
pretrained_weights = backbone.get_weights()

"""
## Fine-tuning, with and without pre-training

The labelled task is `sample_sentiment`: sentences in the corpus's words labelled 1
when the person feels happy, proud or calm and 0 when tired or busy ("in a busy town
tom feels proud every morning ." is 1). The classifier is the paper's (Sec. 4.1):
one dense layer on C, and *all* weights trained. The two arms differ only in the
backbone's starting weights: the pre-trained ones, or the random initialisation that
pre-training started from. Each sees 200 labelled sentences for 5 epochs of batches
of 16 (65 updates) with the paper's fine-tuning optimizer (warm-up over 10 %, linear
decay) at a learning rate of 3e-4, above the paper's 2e-5 to 5e-5 for the same reason
as above; 200 other sentences are the dev set. Fine-tuning on little data varies from
run to run, so each arm runs with three seeds (the classifier layer's
initialisation, dropout and the batch order); the paper, too, restarted BERT-large's
fine-tuning on small GLUE sets (Sec. 4.1).
"""

sentences, labels = sample_sentiment(DEV + LABELLED, seed=1)
dev = classification_dataset(sentences[:DEV], labels[:DEV], tokenizer, sequence_length=32, batch_size=DEV)
train_x, train_y = sentences[DEV:], labels[DEV:]


def fine_tune(weights, seed):
    keras.utils.set_random_seed(seed)
    encoder = BertBackbone.from_preset("bert_tiny", vocabulary_size=tokenizer.vocabulary_size(),
                                       max_sequence_length=SEQUENCE_LENGTH)
    encoder.set_weights(weights)
    classifier = BertClassifier(encoder, num_classes=2)
    train = classification_dataset(train_x, train_y, tokenizer, sequence_length=32, batch_size=16, shuffle=True,
                                   seed=seed)
    classifier.compile(total_steps=FINE_TUNING_EPOCHS * len(train), learning_rate=3e-4)
    history = classifier.fit(train, epochs=FINE_TUNING_EPOCHS, validation_data=dev, shuffle=False, verbose=0)
    return 100 * history.history["val_accuracy"][-1]


dev_accuracy = {"random init": [], "pre-trained": []}
for seed in SEEDS:
    dev_accuracy["pre-trained"].append(fine_tune(pretrained_weights, seed))
    dev_accuracy["random init"].append(fine_tune(initial_weights, seed))
    print(f"seed {seed}: dev accuracy {dev_accuracy['pre-trained'][-1]:.1f} % pre-trained, "
          f"{dev_accuracy['random init'][-1]:.1f} % from random init")

"""
## What it shows

In our run (TensorFlow, 2 CPU cores shared with other jobs, 8 minutes in all,
2026-11-26) 1,000 pre-training updates raised the masked-LM accuracy on the held-out
documents from 0.7 % (the untrained model, chance among 199 tokens) to 54.6 %, and
next sentence prediction from 41.9 % to 91.9 % (the paper's final model: 97-98 % on
its own data, Sec. 3.1). The cloze answers show what those updates taught: which
kind of word fills a gap (jobs after "is a", a verb with its -s before "fresh
bread", a name where a sentence starts), and to copy the name from the sentence
*after* the gap, which a left-to-right model could not see. Which job goes with
which work (sailing -> sailor, bread -> bakes) it has not learned yet.

Fine-tuned for 65 updates on 200 labelled sentences, the pre-trained encoder reached
95.5 % dev accuracy (99.0, 87.5 and 100 % over the three seeds), while the same
network from its random initialisation stayed at 52.5 %, the majority class, with
every seed: pre-training gave it features from which a few labelled updates find
the one word that decides the label. The task is easy: at a learning rate of 1e-3
both arms reached 100 % in the same 65 updates in our trials, so the gap shown is
one of how fast fine-tuning learns from little data, not of what the network can
fit. The paper's claim, better accuracy on real tasks after pre-training on billions
of words, is beyond this scale: `applications/bert_sst2.py` has not measured a
fine-tuning gain on SST-2 at CPU budgets (docs/reproductions.md).
"""

print(f"\n{'held-out documents':34s}{'random init':>12s}{'pre-trained':>13s}")
print(f"{'masked-LM accuracy':34s}{accuracy_at_init[0]:11.1f}%{accuracy[0]:12.1f}%")
print(f"{'next sentence accuracy':34s}{accuracy_at_init[1]:11.1f}%{accuracy[1]:12.1f}%")
for (text, word), position, before, after in zip(CLOZE, cloze_positions[:, 0], guesses_at_init, guesses):
    words = text.split()
    words[position - 1] = "____"  # position counts [CLS]
    print(f"  {' '.join(words)}\n      {word!r}? random init: {', '.join(before)}; pre-trained: {', '.join(after)}")
majority = 100 * max(np.mean(labels[:DEV]), 1 - np.mean(labels[:DEV]))
print(f"\n{'sentiment dev accuracy':34s}{'random init':>12s}{'pre-trained':>13s}")
print(f"{'fine-tuned, mean of ' + str(len(SEEDS)) + ' seeds':34s}{np.mean(dev_accuracy['random init']):11.1f}%"
      f"{np.mean(dev_accuracy['pre-trained']):12.1f}%  (the majority class: {majority:.1f}%)")
