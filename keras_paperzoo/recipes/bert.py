"""`paperzoo train bert`: BERT pre-training (masked LM + next sentence prediction), then fine-tuning a head.

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
folder laid out like the data folder of keras_paperzoo.data.sources (Tiny Shakespeare, Multi30k English, SST-2
sentences for pre-training; SST-2 train / dev for fine-tuning).

--task picks the fine-tuning after pre-training (the paper's heads, Sec. 4, Fig. 4):
"sst2" (default) is the classifier above; the others read `--task-data PATH`, either a
folder with a train and a dev file (the first present of the names in `SPLIT_FILES`:
train.txt / dev.txt, CoNLL-2003's eng.train / eng.testa; SWAG's train.csv / val.csv or
train.jsonl / dev.jsonl; train-v2.0.json / dev-v2.0.json, v1.1 or train.json /
dev.json) or a single file whose last 10 % of examples (at least one; sentences,
questions, examples in file order) is the dev set:

- "tagging": `BertTokenTagger` on CoNLL word-per-line files (tags in the last column,
  BIO / IOB / IOBES), the first WordPiece of each word labelled (Sec. 5.3), lr 5e-5;
  reported: span-level precision, recall and F1 on dev (`conlleval`'s counting).
- "multiple_choice": `BertMultipleChoice` on SWAG (Sec. 4.4): a SWAG .csv (sentence A
  `sent1`, sentence B `sent2` + " " + `ending{k}`, as `run_swag.py`) or JSON lines
  {"context", "endings", "label"} (the same number of endings, at least 2, on every
  line; label the right one's index), lr 2e-5; reported: dev accuracy.
- "squad": `BertSpanExtractor` on a SQuAD v1.1 / v2.0 JSON file, lr 5e-5, windows of
  the 64-token sequence with questions cut to 16 pieces and a doc stride of 24
  (`run_squad.py`'s 64 and 128 of 384, scaled); reported: the official exact match and
  F1 (x 100) of the n-best decoding, and for v2.0 (any dev question without an answer)
  the null threshold tau picked on dev and its F1 (Sec. 4.3).

Each fine-tunes 3 epochs at `--batch-size` (at most the training rows) with the
fine-tuning optimizer (warmup 10 %, linear decay); `--steps-per-epoch` caps its epochs
too. The WordPiece vocabulary stays the pre-training corpus's.

Reported: pre-training MLM and NSP loss and accuracy, the fine-tuning task's dev
figures beside the paper's (`TASK_PAPERS`), the pre-trained backbone (`backbone.keras`), the
fine-tuned model (`model.keras`) and the vocabulary (`vocabulary.txt`).
"""

import csv
import pathlib

import numpy as np

from keras_paperzoo.recipes.common import RecipeError

PAPER = "BERT-base SST-2 93.5 % (GLUE test, Devlin et al. 2019, Table 1), after 1M steps on 3.3B words"
DEFAULT_PRESET = "bert_tiny"
DEFAULT_UPDATES = 300
SEQUENCE_LENGTH = 64
FINE_TUNING_EPOCHS = 3
TASKS = ("sst2", "tagging", "multiple_choice", "squad")
# The paper's fine-tuning rates: SST-2 / SWAG 2e-5 (App. A.3 grid, Sec. 4.4), NER and SQuAD v1.1 5e-5 (Sec. 4.2, 5.3).
TASK_LEARNING_RATES = {"sst2": 2e-5, "tagging": 5e-5, "multiple_choice": 2e-5, "squad": 5e-5}
# SQuAD windows scaled with the sequence (run_squad.py: query 64 and stride 128 of 384 pieces).
TASK_PAPERS = {  # the figure beside ours ("paper" in metrics.json)
    "sst2": PAPER,
    "tagging": "BERT-base CoNLL-2003 NER span F1 96.4 dev, 92.4 test (Devlin et al. 2019, Table 7)",
    "multiple_choice": "BERT-base SWAG dev accuracy 81.6 % (Devlin et al. 2019, Table 4)",
    "squad": "BERT-base SQuAD v1.1 dev EM 80.8 / F1 88.5 (Table 2); BERT-large v2.0 dev EM 78.7 / F1 81.9 "
             "(Devlin et al. 2019, Table 3)",
}
SQUAD_QUERY_LENGTH = 16
SQUAD_DOC_STRIDE = 24
DEV_FRACTION = 0.1  # a single --task-data file: its last 10 % is the dev set
# A --task-data folder: the first of these names for each split (CoNLL-2003's, SWAG's and SQuAD's own included).
SPLIT_FILES = {
    "tagging": (("train.txt", "eng.train"), ("dev.txt", "eng.testa")),
    "multiple_choice": (("train.csv", "train.jsonl"), ("val.csv", "dev.csv", "dev.jsonl")),
    "squad": (("train-v2.0.json", "train-v1.1.json", "train.json"), ("dev-v2.0.json", "dev-v1.1.json", "dev.json")),
}
SWAG_ENDINGS = ("ending0", "ending1", "ending2", "ending3")


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
    keras.utils.set_random_seed(seed)
    classifier = BertClassifier(backbone, num_classes=2)
    history = _fit(classifier, train, len(train_y), batch_size, epochs, max_steps, learning_rate, verbose, run,
                   validation_data=dev)
    return classifier, history, float(history.history["val_accuracy"][-1])


def _train_dev(task, path, read):
    """(train, dev) examples of `--task-data`: a folder's train and dev files (`SPLIT_FILES`), or one file's first 90 % and last 10 %."""
    try:
        if path.is_dir():
            splits = []
            for names in SPLIT_FILES[task]:
                found = next((path / name for name in names if (path / name).is_file()), None)
                if found is None:
                    raise RecipeError(f"bert: --task-data {path} holds none of {', '.join(names)}; a {task} folder "
                                      "needs a train and a dev file (or give one file: its last 10 % is the dev set).")
                splits.append(read(found))
            train, dev = splits
        else:
            examples = read(path)
            cut = len(examples) - max(1, int(DEV_FRACTION * len(examples)))
            train, dev = examples[:cut], examples[cut:]
    except RecipeError:
        raise
    except (ValueError, KeyError, TypeError) as error:  # the readers name the file and the line
        raise RecipeError(f"bert: --task-data {error}") from None
    if not train or not dev:
        raise RecipeError(f"bert: --task-data {path}: {len(train)} training and {len(dev)} dev examples; each split "
                          "needs at least one.")
    return train, dev


def read_multiple_choice(path):
    """[(context, endings, label), ...] of a SWAG .csv or a JSON-lines file of {"context", "endings", "label"}.

    SWAG's columns as BERT's `run_swag.py` reads them: sentence A is `sent1`, sentence B
    of choice k is `sent2` + " " + `ending{k}` (4 endings); `label` is the right one's
    index. Every example needs the same number (at least 2) of endings.
    """
    from keras_paperzoo.recipes.common import read_jsonl

    path = pathlib.Path(path)
    if path.suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as file:
            reader = csv.DictReader(file)
            missing = [name for name in ("sent1", "sent2", *SWAG_ENDINGS, "label") if name not in (reader.fieldnames or ())]
            if missing:
                raise ValueError(f"{path} is not a SWAG file: its header lacks {', '.join(missing)}.")
            records = [(number, {"context": row["sent1"], "label": row["label"],
                                 "endings": [f"{row['sent2']} {row[name]}" for name in SWAG_ENDINGS]})
                       for number, row in enumerate(reader, start=2)]
    else:
        records = read_jsonl(path, ("context", "endings", "label"))
    examples = []
    for number, record in records:
        endings, label = record["endings"], record["label"]
        if not isinstance(endings, list) or len(endings) < 2 or not all(isinstance(e, str) for e in endings):
            raise ValueError(f"{path} line {number}: 'endings' should be a list of at least 2 strings; got {endings!r}.")
        if len(endings) != len(records[0][1]["endings"]):
            raise ValueError(f"{path} line {number}: {len(endings)} endings, but line {records[0][0]} has "
                             f"{len(records[0][1]['endings'])}; every example needs the same number.")
        if isinstance(label, str) and label.strip().isdigit():  # CSV fields are strings
            label = int(label)
        if isinstance(label, bool) or not isinstance(label, int) or not 0 <= label < len(endings):
            raise ValueError(f"{path} line {number}: 'label' should be the right ending's index, an int in "
                             f"[0, {len(endings)}); got {label!r}.")
        if not isinstance(record["context"], str):
            raise ValueError(f"{path} line {number}: 'context' should be a string; got {record['context']!r}.")
        examples.append((record["context"], endings, label))
    return examples


def read_task(task, path):
    """`--task-data` of `task` read and split: (train, dev), plus the tag names for tagging."""
    from keras_paperzoo.data.conll import read_conll, tag_names
    from keras_paperzoo.data.squad import read_squad

    read = {"tagging": read_conll, "multiple_choice": read_multiple_choice, "squad": read_squad}[task]
    train, dev = _train_dev(task, path, read)
    if task != "tagging":
        return train, dev, None
    from keras_paperzoo.evaluation.tagging import span_f1

    tags = tag_names(train + dev)
    if len(tags) < 2:
        raise RecipeError(f"bert: --task-data {path}: every word is tagged {tags[0]!r}; tagging needs at least 2 tags.")
    try:
        span_f1([t for _, t in train + dev], [t for _, t in train + dev])  # every tag BIO / IOB / IOBES
    except ValueError as error:
        raise RecipeError(f"bert: --task-data {path}: {error}") from None
    return train, dev, tags


def _packed_pairs(first, second, tokenizer, sequence_length):
    """[CLS] first [SEP] second [SEP] of each pair (`BertPacker`, in tf.data), as NumPy (N, T) arrays."""
    from keras_paperzoo.data.bert_inputs import classification_dataset

    batches = classification_dataset((list(first), list(second)), np.zeros(len(first)), tokenizer, sequence_length,
                                     batch_size=1024)
    parts = [x for x, _ in batches.as_numpy_iterator()]
    return {name: np.concatenate([x[name] for x in parts]) for name in parts[0]}


def task_features(task, examples, tokenizer, sequence_length, tags=None):
    """(x, y, info) of `read_task`'s examples: the head's inputs and targets, and what its evaluation reads."""
    from keras_paperzoo.data.conll import align_words
    from keras_paperzoo.data.squad import squad_features

    if task == "tagging":
        x, labels, word_index = align_words(examples, tokenizer, tags, sequence_length)
        return x, labels, word_index
    if task == "squad":
        return squad_features(examples, tokenizer, sequence_length, doc_stride=SQUAD_DOC_STRIDE,
                              max_query_length=SQUAD_QUERY_LENGTH)
    choices = len(examples[0][1])  # multiple choice: one [CLS] context [SEP] ending_k [SEP] row per ending
    x = _packed_pairs([c for c, endings, _ in examples for _ in endings],
                      [e for _, endings, _ in examples for e in endings], tokenizer, sequence_length)
    x = {name: value.reshape(len(examples), choices, sequence_length) for name, value in x.items()}  # (N, choices, T)
    return x, np.array([label for _, _, label in examples], "int32"), None


def _head(task, backbone, examples, tags):
    from keras_paperzoo.models.bert import BertMultipleChoice, BertSpanExtractor, BertTokenTagger

    if task == "tagging":
        return BertTokenTagger(backbone, num_tags=len(tags))
    if task == "multiple_choice":
        return BertMultipleChoice(backbone, num_choices=len(examples[0][1]))
    return BertSpanExtractor(backbone)


def evaluate_task(task, model, dev, x, info, tags=None, batch_size=64):
    """The paper's dev figures of a fine-tuned head: span P/R/F1 (tagging), accuracy (SWAG), EM/F1 x 100 (SQuAD)."""
    from keras_paperzoo.data.conll import word_tags
    from keras_paperzoo.evaluation.squad import best_null_threshold, decode_spans, squad_scores
    from keras_paperzoo.evaluation.tagging import span_f1

    out = model.predict(x, batch_size=batch_size, verbose=0)
    if task == "tagging":
        scores = span_f1([t for _, t in dev], word_tags(out, info, dev, tags))
        return {f"dev_span_{name}": scores[name] for name in ("precision", "recall", "f1")}
    if task == "multiple_choice":
        return {"dev_accuracy": float(np.mean(np.argmax(out, axis=-1) == [label for _, _, label in dev]))}
    version_2 = any(example["is_impossible"] for example in dev)
    predictions, n_best, differences = decode_spans(dev, info, out["start_logits"], out["end_logits"],
                                                    version_2=version_2, return_n_best=True)
    scores = squad_scores(dev, predictions)
    report = {"squad_version": "2.0" if version_2 else "1.1", "dev_exact_match": scores["exact_match"],
              "dev_f1": scores["f1"]}
    if version_2:  # Sec. 4.3: tau picked on dev
        report["dev_null_threshold"], report["dev_best_f1"] = best_null_threshold(dev, n_best, differences)
    return report


def fine_tune_task(backbone, tokenizer, task, task_data, batch_size=32, epochs=FINE_TUNING_EPOCHS, max_steps=None,
                   seed=0, verbose=0, run=None):
    """Fine-tune the head of `task` (tagging, multiple_choice, squad) on `read_task`'s data; returns (model, history, report)."""
    import keras

    from keras_paperzoo.optional import require_tensorflow

    tf = require_tensorflow("The BERT fine-tuning pipeline (tf.data)")
    train, dev, tags = task_data
    sequence_length = backbone.max_sequence_length
    x, y, _ = task_features(task, train, tokenizer, sequence_length, tags)
    x_dev, y_dev, info = task_features(task, dev, tokenizer, sequence_length, tags)
    rows = len(x["token_ids"])
    batch_size = min(batch_size, rows)
    data = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(rows, seed=seed, reshuffle_each_iteration=True)
    data = data.batch(batch_size, drop_remainder=True)
    keras.utils.set_random_seed(seed)
    model = _head(task, backbone, train, tags)
    history = _fit(model, data, rows, batch_size, epochs, max_steps, TASK_LEARNING_RATES[task], verbose, run)
    report = evaluate_task(task, model, dev, x_dev, info, tags)
    report.update(train_examples=len(train), dev_examples=len(dev), train_rows=rows, fine_tuning_batch_size=batch_size)
    if tags is not None:
        report["tags"] = tags
    return model, history, report


def _fit(model, train, num_train, batch_size, epochs, max_steps, learning_rate, verbose, run, validation_data=None):
    """Compile `model` with the paper's fine-tuning optimizer (warmup 10 %, linear decay) and fit `train` (tf.data)."""
    steps_per_epoch = num_train // batch_size
    if max_steps is not None:
        steps_per_epoch = min(steps_per_epoch, max(1, max_steps // epochs))
        train = train.repeat()
    model.compile(total_steps=steps_per_epoch * epochs, learning_rate=learning_rate)
    if run is not None:
        return run.fit(model, train, epochs=epochs, steps_per_epoch=steps_per_epoch, validation_data=validation_data,
                       verbose=verbose, stage="fine_tuning")
    return model.fit(train, epochs=epochs, steps_per_epoch=steps_per_epoch, validation_data=validation_data,
                     verbose=verbose)


def run(args, extra_callbacks=()):
    import keras

    from keras_paperzoo.data.bert_pretraining import bert_pretraining_dataset, train_wordpiece
    from keras_paperzoo.data.text_corpus import load_documents
    from keras_paperzoo.models.bert import BertPretrainer
    from keras_paperzoo.recipes import common
    from keras_paperzoo.recipes.common import requested_task

    run = common.start_run(args, "bert")
    task_name, task_path = requested_task(args, "bert", TASKS)
    task_data = None if task_name == "sst2" else read_task(task_name, task_path)  # checked before pre-training
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

    max_steps = args.steps_per_epoch and FINE_TUNING_EPOCHS * args.steps_per_epoch
    with common.Timer() as fine_tuning_timer:
        if task_data is None:
            task = fine_tuning_task(dataset)
            model, fine_history, dev_accuracy = fine_tune(
                backbone, tokenizer, task, batch_size=batch_size, max_steps=max_steps, seed=args.seed,
                verbose=args.verbose, run=run,
            )
            report = {"fine_tuning_task": task[4], "dev_accuracy": dev_accuracy}
        else:
            model, fine_history, report = fine_tune_task(
                backbone, tokenizer, task_name, task_data, batch_size=batch_size, max_steps=max_steps,
                seed=args.seed, verbose=args.verbose, run=run,
            )
            report.update(fine_tuning_task=task_name, task_data=str(task_path))
    run.save_model(model, "model.keras")

    metrics = {f"pretraining_{name}": values[-1] for name, values in history.history.items()}
    metrics.update(
        {
            "pretraining_first_epoch_loss": losses[0],
            **{f"fine_tuning_train_{name}": values[-1] for name, values in fine_history.history.items()
               if not name.startswith("val_")},
            **report,
            "paper": TASK_PAPERS[task_name],
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
