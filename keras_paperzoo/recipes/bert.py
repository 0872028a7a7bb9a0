"""`paperzoo train bert`: BERT pre-training (masked LM + next sentence prediction), then fine-tuning a classifier.

The paper's method (Devlin et al. 2019): a WordPiece vocabulary of the corpus, sentence
pairs from documents (50 % IsNext / 50 % NotNext), 15 % of the tokens chosen for the
masked LM (80 % [MASK], 10 % random, 10 % unchanged), `BertPretrainer.compile()`'s
Adam with weight decay 0.01 and warmup then linear decay; then `BertClassifier` on the
pooled [CLS] state with the fine-tuning optimizer (lr 2e-5, warmup 10 %, linear decay).

What is scaled down for a CPU: the model (`--preset bert_tiny` by default, L=2, H=128,
with the corpus's own vocabulary instead of 30,522 tokens and 64 positions instead of
512), the sequences (64 tokens, the paper 128 then 512), the corpus and the run (about
300 pre-training updates of 32 sequences; the paper 1,000,000 of 256).

--dataset: "sample" (default: generated documents built in, about 25 KB; the
fine-tuning task is the sample's sentence sentiment), a text file (one sentence per
line, blank lines between documents; fine-tuning on the sample sentiment too) or a
folder laid out like the shared data folder (Tiny Shakespeare, Multi30k English, SST-2
sentences for pre-training; SST-2 train / dev for fine-tuning).

Reported: pre-training MLM and NSP loss and accuracy, fine-tuning dev accuracy, the
pre-trained backbone (`backbone.keras`), the classifier (`model.keras`) and the
vocabulary (`vocabulary.txt`).
"""

import pathlib

from keras_paperzoo.recipes.common import RecipeError

PAPER = "BERT-base SST-2 93.5 % (GLUE test, Devlin et al. 2019, Table 1), after 1M steps on 3.3B words"
DEFAULT_PRESET = "bert_tiny"
DEFAULT_UPDATES = 300
SEQUENCE_LENGTH = 64
FINE_TUNING_EPOCHS = 3


def build_backbone(preset, vocabulary_size, sequence_length, seed=0):
    """A `BertBackbone` preset with the corpus's vocabulary size and `sequence_length` positions."""
    import keras

    from keras_paperzoo.models.bert import BERT_PRESETS, BertBackbone

    preset = preset or DEFAULT_PRESET
    if preset not in BERT_PRESETS:
        raise RecipeError(f"--preset {preset!r} is not a BERT preset; known: {', '.join(sorted(BERT_PRESETS))}")
    keras.utils.set_random_seed(seed)
    return BertBackbone.from_preset(preset, vocabulary_size=vocabulary_size, max_sequence_length=sequence_length)


def fine_tuning_task(dataset):
    """(train sentences, train labels, dev sentences, dev labels, name) for the classifier."""
    from keras_paperzoo.data.bert_inputs import read_sst2
    from keras_paperzoo.data.text_corpus import sample_sentiment

    folder = pathlib.Path(dataset) if dataset not in (None, "sample") else None
    if folder is not None and (folder / "sst2" / "train.tsv").is_file():
        train = read_sst2(folder / "sst2" / "train.tsv")
        dev = read_sst2(folder / "sst2" / "dev.tsv")
        return (*train, *dev, "sst2")
    sentences, labels = sample_sentiment(500, seed=1)
    return sentences[:400], labels[:400], sentences[400:], labels[400:], "sample_sentiment"


def fine_tune(backbone, tokenizer, task, batch_size=32, epochs=FINE_TUNING_EPOCHS, max_steps=None,
              learning_rate=2e-5, seed=0, verbose=0, run=None):
    """Fine-tune a `BertClassifier` on `task` (from `fine_tuning_task`); returns (classifier, history, dev accuracy).

    With `run` (a `recipes.common.Run`) the fine-tuning is a checkpointed stage of that run.
    """
    import keras

    from keras_paperzoo.data.bert_inputs import classification_dataset
    from keras_paperzoo.models.bert import BertClassifier

    train_x, train_y, dev_x, dev_y, _ = task
    sequence_length = backbone.max_sequence_length
    train = classification_dataset(train_x, train_y, tokenizer, sequence_length, batch_size, shuffle=True, seed=seed,
                                   drop_remainder=True)
    dev = classification_dataset(dev_x, dev_y, tokenizer, sequence_length, batch_size=256)
    steps_per_epoch = len(train_y) // batch_size
    if max_steps is not None:
        steps_per_epoch = min(steps_per_epoch, max(1, max_steps // epochs))
        train = train.repeat()
    keras.utils.set_random_seed(seed)
    classifier = BertClassifier(backbone, num_classes=2)
    classifier.compile(total_steps=steps_per_epoch * epochs, learning_rate=learning_rate)
    if run is not None:
        history = run.fit(classifier, train, epochs=epochs, steps_per_epoch=steps_per_epoch, validation_data=dev,
                          verbose=verbose, stage="fine_tuning")
    else:
        history = classifier.fit(train, epochs=epochs, steps_per_epoch=steps_per_epoch, validation_data=dev,
                                 verbose=verbose)
    return classifier, history, float(history.history["val_accuracy"][-1])


def run(args, extra_callbacks=()):
    import keras

    from keras_paperzoo.data.bert_pretraining import bert_pretraining_dataset, train_wordpiece
    from keras_paperzoo.data.text_corpus import load_documents
    from keras_paperzoo.models.bert import BertPretrainer
    from keras_paperzoo.recipes import common

    run = common.start_run(args, "bert")
    dataset = args.dataset or "sample"
    try:
        documents = load_documents(dataset)
    except ValueError as error:
        raise RecipeError(f"bert: {error}") from error
    batch_size = args.batch_size or 32
    keras.utils.set_random_seed(args.seed)

    with common.Timer() as vocabulary_timer:
        vocabulary_size = 2000 if dataset == "sample" else 8000
        tokenizer = train_wordpiece(documents, vocabulary_size=vocabulary_size)
    run.write_text("vocabulary.txt", "\n".join(tokenizer.get_vocabulary()) + "\n")
    data = bert_pretraining_dataset(documents, tokenizer, SEQUENCE_LENGTH, batch_size, seed=args.seed, repeat=True)
    if data.num_pairs < batch_size:
        raise RecipeError(f"--batch-size {batch_size} is larger than the corpus's {data.num_pairs} sentence pairs.")
    steps_per_epoch = args.steps_per_epoch or max(1, data.num_pairs // batch_size)
    epochs = args.epochs or max(1, round(DEFAULT_UPDATES / steps_per_epoch))

    backbone = build_backbone(getattr(args, "preset", None), tokenizer.vocabulary_size(), SEQUENCE_LENGTH, args.seed)
    pretrainer = BertPretrainer(backbone)
    pretrainer.compile(total_steps=steps_per_epoch * epochs)
    with common.Timer() as timer:
        history = run.fit(pretrainer, data, epochs=epochs, steps_per_epoch=steps_per_epoch,
                          callbacks=list(extra_callbacks), verbose=args.verbose, stage="pretraining")
    losses = history.history["loss"]
    run.save_model(backbone, "backbone.keras")

    task = fine_tuning_task(dataset)
    with common.Timer() as fine_tuning_timer:
        classifier, fine_history, dev_accuracy = fine_tune(
            backbone, tokenizer, task, batch_size=batch_size, max_steps=args.steps_per_epoch and 3 * args.steps_per_epoch,
            seed=args.seed, verbose=args.verbose, run=run,
        )
    run.save_model(classifier, "model.keras")

    metrics = {f"pretraining_{name}": values[-1] for name, values in history.history.items()}
    metrics.update(
        {
            "pretraining_first_epoch_loss": losses[0],
            "fine_tuning_task": task[4],
            "fine_tuning_train_accuracy": fine_history.history["accuracy"][-1],
            "dev_accuracy": dev_accuracy,
            "paper": PAPER,
            "preset": getattr(args, "preset", None) or DEFAULT_PRESET,
            "dataset": str(dataset),
            "documents": len(documents),
            "sentence_pairs": int(data.num_pairs),
            "vocabulary_size": int(tokenizer.vocabulary_size()),
            "sequence_length": SEQUENCE_LENGTH,
            "epochs": epochs,
            "steps_per_epoch": steps_per_epoch,
            "batch_size": batch_size,
            "parameters": int(backbone.count_params()),
            "backend": keras.backend.backend(),
            "vocabulary_seconds": round(vocabulary_timer.seconds, 2),
            "train_seconds": round(timer.seconds, 2),
            "fine_tuning_seconds": round(fine_tuning_timer.seconds, 2),
        }
    )
    return run.finish(metrics)
