"""`paperzoo train gpt`: a character-level GPT language model (Radford et al. 2018 / 2019) on any text file.

The model is a `GPTCausalLM` (pre-norm GPT-2 blocks by default; `--preset gpt1` gives
GPT-1's post-norm blocks), trained on next-character prediction, GPT-1 eq. (1), over
random windows of the context length. Out of the box it trains `gpt_char_tiny` on
the built-in sample (`keras_paperzoo.data.char_text.SAMPLE_TEXT`, five sonnets, about
3 KB) for about 300 updates; `--dataset PATH` trains on a UTF-8 text file such as
Tiny Shakespeare (`--preset gpt_char_shakespeare` is nanoGPT's `shakespeare_char`,
whose published validation loss is 1.47). Split: first 90 % train, last 10 %
validation (nanoGPT's).

Optimisation is nanoGPT's `shakespeare_char` recipe, not GPT-1's 2.5e-4 for a
117M model on BooksCorpus: AdamW (0.9, 0.99), lr 1e-3, warmup 100 updates (at most a
tenth of the run), cosine to 1e-4, weight decay 0.1 on weights only, gradient norm
clipped to 1.0. The vocabulary of every preset is replaced by the text's characters.

Reported: training loss, validation loss on every non-overlapping window of the
validation text (nats per character), bits per character, the published figure
beside ours, three 200-character samples from a newline (nanoGPT's sampling: top-k 200, temperature 0.8; `samples.txt`), the model with its
tokenizer (`model.keras`).

`--bpe-vocabulary-size N` trains on GPT-2's byte-level BPE (Radford et al. 2019, Sec.
2.2: a base vocabulary of the 256 bytes, merges learned on the corpus, no merge across
character categories; `keras_paperzoo.data.bpe`) instead of characters: a BPE of N
tokens (at least 258: the 256 bytes, "<|endoftext|>" and one merge) is learned from the
training split only (the first 90 % of the characters; never the validation text), both
splits are encoded with it, and the model's vocabulary is its N tokens. Learning is
deterministic given the text and N, so `--resume` learns the same BPE again. The run
writes `vocabulary.json` and `merges.txt` (the files `keras_hub.tokenizers.BytePairTokenizer`
and `paperzoo evaluate few-shot --tokenizer` read), and `model.keras` carries the
tokenizer itself (`InlineBytePairTokenizer`: vocabulary and merges in its config), so
the loaded model decodes. Samples are then 200 tokens, not characters.

The validation loss is reported per token (`validation_loss`) and per character
(`validation_loss_per_character`: the total nats of the validation windows over the
characters of the tokens they predict, so that character and BPE runs compare; a
character run's is its per-token loss), with bits per character from the latter.

```
paperzoo train gpt --dataset tinyshakespeare.txt --bpe-vocabulary-size 2000 --preset gpt_char_shakespeare
```

`--task classification|entailment|similarity|multiple_choice --task-data FILE.jsonl` then
fine-tunes the trained LM as GPT-1 does (Radford et al. 2018, Sec. 3.2-3.3): a
`GPTClassifier` on the last token of the paper's traversal inputs (start, delimiter and
extract tokens added to the vocabulary as new N(0, 0.02^2) embeddings), with the
auxiliary LM objective at lambda = 0.5 (eq. 5) and GPT-1's fine-tuning optimizer (lr
6.25e-5, 0.2 % warmup, linear decay) for 3 epochs at batch 32 (`--batch-size` sets both
stages' batch; `--steps-per-epoch` caps the fine-tuning epochs too). One JSON object a
line:

- classification: {"text", "label"}: [<s> text <e>];
- entailment: {"premise", "hypothesis", "label"}: [<s> premise $ hypothesis <e>];
- similarity: {"text_a", "text_b", "label"}: both orderings, their states added;
- multiple_choice: {"context", "choices", "label"}: [<s> context $ choice_k <e>] for
  every choice (at least 2, the same number on every line), `label` the right choice's
  index; a softmax over the choices.

Labels of the other tasks are strings or integers; the classes are their sorted set.
A line may carry "split": "train" or "dev" (then every line must); otherwise a
seeded draw of 10 % of the lines (at least one) is the dev set. A sequence longer than
the model's context is cut, one token at a time from its longest part (the count is
reported). With characters the vocabulary is the characters of the text and of the
task file. Reported beside the LM's figures: the dev accuracy (argmax of the
classifier's logits, dropout off), the final task and LM losses; `model.keras` is then
the classifier and `lm.keras` the language model with its tokenizer.
"""

import shutil

import numpy as np

from keras_paperzoo.data.bpe import InlineBytePairTokenizer
from keras_paperzoo.recipes.common import RecipeError, read_jsonl, requested_task

PAPER = "1.47 validation loss, nanoGPT shakespeare_char (6 x 384, context 256, 5,000 iterations at batch 64, one GPU)"
DEFAULT_PRESET = "gpt_char_tiny"
DEFAULT_UPDATES = 300  # without --epochs: as many epochs as make about 300 updates
DEFAULT_BATCH = 64
SAMPLE_LENGTH = 200
TASKS = ("lm", "classification", "entailment", "similarity", "multiple_choice")
TASK_FIELDS = {  # the text fields of a --task-data line, in traversal order (Sec. 3.3, Figure 1)
    "classification": ("text",),
    "entailment": ("premise", "hypothesis"),
    "similarity": ("text_a", "text_b"),
    "multiple_choice": ("context", "choices"),
}
TASK_PAPERS = {  # GPT-1's figures on the paper's datasets of each task shape ("task_paper" in metrics.json)
    "classification": "GPT-1 SST-2 accuracy 91.3 % (Radford et al. 2018, Table 4)",
    "entailment": "GPT-1 MNLI-m 82.1 %, SNLI 89.9 % accuracy (Radford et al. 2018, Table 2)",
    "similarity": "GPT-1 QQP F1 70.3, STS-B Pearson 82.0 (Radford et al. 2018, Table 4)",
    "multiple_choice": "GPT-1 Story Cloze 86.5 %, RACE 59.0 % accuracy (Radford et al. 2018, Table 3)",
}
SPLITS = ("train", "dev")
DEV_FRACTION = 0.1
LM_WEIGHT = 0.5  # lambda of eq. (5), Sec. 4.1
FINE_TUNING_EPOCHS = 3  # Sec. 4.1: "3 epochs of training", batch 32
FINE_TUNING_BATCH = 32


def char_lm_optimizer(total_steps, learning_rate=1e-3, min_learning_rate=1e-4, warmup_steps=100,
                      weight_decay=0.1):
    """nanoGPT shakespeare_char's AdamW: (0.9, 0.99), warmup then cosine to min lr, decay 0.1, clip 1.0."""
    from keras_paperzoo.training.schedules import WarmupCosineDecay
    from keras_paperzoo.training.selective_decay import SelectiveDecayAdamW

    warmup = min(warmup_steps, total_steps // 10)
    schedule = WarmupCosineDecay(learning_rate, warmup_steps=warmup, total_steps=total_steps,
                                 alpha=min_learning_rate / learning_rate)
    return SelectiveDecayAdamW(schedule, weight_decay=weight_decay, beta_2=0.99, global_clipnorm=1.0)


def _byte_pair_tokenizer(train_text, vocabulary_size):
    """The BPE of `vocabulary_size` tokens learned on `train_text` (deterministic), as an `InlineBytePairTokenizer`."""
    from keras_paperzoo.data.bpe import BYTES, END_OF_TEXT, train_byte_pair_tokenizer

    smallest = BYTES + 2  # the bytes, <|endoftext|> and one merge
    if isinstance(vocabulary_size, bool) or not isinstance(vocabulary_size, int) or vocabulary_size < smallest:
        raise RecipeError(f"gpt: --bpe-vocabulary-size must be a whole number of at least {smallest} (the {BYTES} "
                          f"bytes of a byte-level BPE, {END_OF_TEXT} and one merge); got {vocabulary_size!r}.")
    try:
        trained = train_byte_pair_tokenizer([train_text], vocabulary_size)
    except ValueError as error:  # the training text offers too few merges
        raise RecipeError(f"gpt: --bpe-vocabulary-size {vocabulary_size}: {error}") from error
    try:
        return InlineBytePairTokenizer.from_directory(trained.directory)
    finally:
        shutil.rmtree(trained.directory, ignore_errors=True)


def _predicted_characters(token_bytes, ids, text, first, stop):
    """How many characters of `text` (encoded as `ids`) the tokens ids[first:stop] cover.

    A character counts where its first UTF-8 byte lies (a byte-level token may hold
    part of one); `token_bytes[i]` is the number of bytes of id i.
    """
    ends = np.cumsum(token_bytes[np.asarray(ids)])  # (N,), the byte after each token
    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    if ends[-1] != len(data):
        raise RecipeError(f"gpt: the validation ids hold {ends[-1]} bytes, the text {len(data)}; the tokenizer "
                          "does not round-trip this text.")
    covered = data[(ends[first - 1] if first else 0) : ends[stop - 1]]
    return int(np.count_nonzero((covered & 0xC0) != 0x80))  # bytes that are not 10xxxxxx continuations


def _model(preset, vocabulary_size, tokenizer, sequence_length):
    from keras_paperzoo.models.gpt import GPT_PRESETS, GPTBackbone, GPTCausalLM

    preset = preset or DEFAULT_PRESET
    if preset not in GPT_PRESETS:
        raise RecipeError(f"--preset {preset!r} is not a GPT preset; known: {', '.join(sorted(GPT_PRESETS))}")
    overrides = {"vocabulary_size": vocabulary_size}
    if sequence_length is not None:
        overrides["max_sequence_length"] = sequence_length
    try:
        return GPTCausalLM(GPTBackbone.from_preset(preset, **overrides), tokenizer=tokenizer)
    except ValueError as error:
        raise RecipeError(f"gpt: {error}") from error


def _text(where, name, value):
    if not isinstance(value, str) or not value.strip():
        raise RecipeError(f"{where}: {name!r} should be a non-empty string; got {value!r}.")
    return value


def _task_example(task, where, record):
    """(texts, label) of one --task-data line: the text fields in traversal order (the context, then the choices)."""
    label = record["label"]
    if task != "multiple_choice":
        if isinstance(label, bool) or not isinstance(label, (str, int)):
            raise RecipeError(f"{where}: 'label' should be a string or an int (a class); got {label!r}.")
        return [_text(where, name, record[name]) for name in TASK_FIELDS[task]], label
    choices = record["choices"]
    if not isinstance(choices, list) or len(choices) < 2:
        raise RecipeError(f"{where}: 'choices' should be a list of at least 2 strings; got {choices!r}.")
    if isinstance(label, bool) or not isinstance(label, int) or not 0 <= label < len(choices):
        raise RecipeError(f"{where}: 'label' should be the right choice's index, an int in [0, {len(choices)}); "
                          f"got {label!r}.")
    return [_text(where, "context", record["context"])] + [_text(where, "choices", c) for c in choices], label


def read_task_data(path, task):
    """(train, dev, classes) of a `--task-data` JSON-lines file for `task` (see the module docstring).

    train, dev: lists of (texts, label id), texts the task's text fields in traversal
    order (multiple choice: the context, then the choices); classes: the label values
    in id order (None for multiple choice, whose label is the choice's index).
    """
    try:
        records = read_jsonl(path, TASK_FIELDS[task] + ("label",))
    except ValueError as error:
        raise RecipeError(f"gpt: --task-data {error}") from None
    examples, splits = [], []
    for number, record in records:
        where = f"gpt: --task-data {path} line {number}"
        examples.append(_task_example(task, where, record))
        if len(examples[-1][0]) != len(examples[0][0]):
            raise RecipeError(f"{where}: {len(examples[-1][0]) - 1} choices, but line {records[0][0]} has "
                              f"{len(examples[0][0]) - 1}; every line needs the same number.")
        splits.append(record.get("split"))
        if splits[-1] not in (None, *SPLITS):
            raise RecipeError(f"{where}: 'split' should be 'train' or 'dev'; got {splits[-1]!r}.")
        if (splits[-1] is None) != (splits[0] is None):
            raise RecipeError(f"{where}: {'no' if splits[-1] is None else 'a'} 'split' field, unlike line "
                              f"{records[0][0]}; give it on every line or on none.")
    labels = [label for _, label in examples]
    classes = None
    if task != "multiple_choice":
        classes = sorted(set(labels), key=lambda value: (isinstance(value, str), value))
        if len(classes) < 2:
            raise RecipeError(f"gpt: --task-data {path}: every line has the label {classes[0]!r}; a classifier needs "
                              "at least 2 classes.")
        labels = [classes.index(label) for label in labels]
    if splits[0] is None:  # a seeded 10 % (at least one line) held out
        dev_rows = np.zeros(len(examples), bool)
        dev_rows[np.random.default_rng(0).permutation(len(examples))[: max(1, int(DEV_FRACTION * len(examples)))]] = True
    else:
        dev_rows = np.array([split == "dev" for split in splits])
    train = [(examples[i][0], labels[i]) for i in np.flatnonzero(~dev_rows)]
    dev = [(examples[i][0], labels[i]) for i in np.flatnonzero(dev_rows)]
    if not train or not dev:
        raise RecipeError(f"gpt: --task-data {path}: {len(train)} training and {len(dev)} dev lines; each split needs "
                          "at least one.")
    return train, dev, classes


def _truncate(parts, budget):
    """Cut the longest of the id lists by one token until they hold `budget` tokens at most (round robin)."""
    lengths = [len(part) for part in parts]
    while sum(lengths) > budget:
        lengths[int(np.argmax(lengths))] -= 1
    return [part[:n] for part, n in zip(parts, lengths)]


def task_inputs(task, examples, tokenizer, special_token_ids, sequence_length):
    """(x, y, cut): the `GPTClassifier` inputs of `examples` (`read_task_data`'s), y the label ids, cut how many were shortened.

    Each traversal sequence (Sec. 3.3) is cut to `sequence_length` tokens, special tokens
    included; multiple choice keeps one context for all choices.
    """
    from keras_paperzoo.models.gpt import pack_task_inputs

    budget = sequence_length - (2 if task == "classification" else 3)  # <s> [...] <e>, or <s> [...] $ [...] <e>
    packed, cut = [], 0
    for texts, _ in examples:
        ids = [[int(i) for i in np.asarray(tokenizer.tokenize(text)).reshape(-1)] for text in texts]
        if task == "multiple_choice":
            context, _ = _truncate([ids[0], max(ids[1:], key=len)], budget)
            fitted = [context] + [choice[: budget - len(context)] for choice in ids[1:]]
            packed.append((context, fitted[1:]))
        else:
            fitted = _truncate(ids, budget)
            packed.append(fitted[0] if task == "classification" else tuple(fitted))
        cut += sum(map(len, fitted)) < sum(map(len, ids))
    x = pack_task_inputs(task, packed, sequence_length, special_token_ids)
    return x, np.array([label for _, label in examples], "int32"), cut


def fine_tune(lm, tokenizer, task, task_data, batch_size=FINE_TUNING_BATCH, epochs=FINE_TUNING_EPOCHS,
              steps_per_epoch=None, seed=0, verbose=0, run=None):
    """GPT-1's supervised fine-tuning (Sec. 3.2-3.3) of the trained `lm` on `task_data` (`read_task_data`'s).

    A `GPTClassifier` on a copy of the backbone with the start, delimiter and extract
    tokens added, the auxiliary LM loss at lambda = 0.5, GPT-1's fine-tuning optimizer.
    With `run` (a `recipes.common.Run`) it is a checkpointed stage of that run.
    Returns (classifier, history, report), report the dev accuracy and the data's counts.
    """
    import keras

    from keras_paperzoo.data.epoch_batches import EpochShuffledBatches
    from keras_paperzoo.models.gpt import GPTClassifier, add_task_tokens, task_token_ids

    train, dev, classes = task_data
    keras.utils.set_random_seed(seed)
    backbone = add_task_tokens(lm.backbone)
    special = task_token_ids(backbone)
    length = backbone.max_sequence_length
    x, y, cut = task_inputs(task, train, tokenizer, special, length)
    x_dev, y_dev, dev_cut = task_inputs(task, dev, tokenizer, special, length)
    batch_size = min(batch_size, len(y))
    steps = min(len(y) // batch_size, steps_per_epoch or len(y))
    data = EpochShuffledBatches(x, y, batch_size=batch_size, seed=seed, steps_per_epoch=steps)  # NumPy: no TensorFlow
    classifier = GPTClassifier(backbone, num_classes=None if classes is None else len(classes), lm_weight=LM_WEIGHT,
                               task=task)
    classifier.compile(total_steps=steps * epochs)
    if run is not None:
        history = run.fit(classifier, data, epochs=epochs, verbose=verbose, stage="fine_tuning")
    else:
        history = classifier.fit(data, epochs=epochs, shuffle=False, verbose=verbose, callbacks=[data.epoch_callback()])
    logits = classifier.predict(x_dev, batch_size=batch_size, verbose=0)["logits"]  # (N, K) or (N, choices)
    report = {
        "dev_accuracy": float(np.mean(np.argmax(logits, axis=-1) == y_dev)),
        "train_examples": len(y),
        "dev_examples": len(y_dev),
        "truncated_examples": cut + dev_cut,
        **({"choices": len(dev[0][0]) - 1} if classes is None else {"classes": classes}),
        "fine_tuning_batch_size": batch_size,
        "fine_tuning_steps_per_epoch": steps,
        "fine_tuning_epochs": epochs,
    }
    return classifier, history, report


def run(args, extra_callbacks=()):
    import keras
    import keras_hub

    from keras_paperzoo.data.char_text import CharTokenizer, RandomWindows, load_text, split_ids, validation_windows
    from keras_paperzoo.models.gpt import GPT_PRESETS
    from keras_paperzoo.recipes import common

    run = common.start_run(args, "gpt")
    task, task_path = requested_task(args, "gpt", TASKS)
    task_data = None if task == "lm" else read_task_data(task_path, task)  # checked before the LM trains
    try:
        text = load_text(args.dataset)
    except ValueError as error:
        raise RecipeError(f"gpt: --dataset {error}") from error
    bpe_size = getattr(args, "bpe_vocabulary_size", None)
    if bpe_size is None:
        # With a task, its characters join the vocabulary: the classifier reads them with the LM's embeddings.
        task_text = "" if task_data is None else "".join(t for texts, _ in task_data[0] + task_data[1] for t in texts)
        tokenizer = CharTokenizer.from_text(text + task_text)
        train, valid = split_ids(tokenizer.encode(text))
        valid_text = text[len(train):]
        token_bytes = np.array([len(c.encode("utf-8")) for c in tokenizer.vocabulary])
    else:  # GPT-2's byte-level BPE, learned on the training split only (nanoGPT's 90/10 split of the characters)
        split = int(len(text) * 0.9)
        train_text, valid_text = text[:split], text[split:]
        tokenizer = _byte_pair_tokenizer(train_text, bpe_size)
        train, valid = (np.asarray(tokenizer.tokenize(t), dtype="int32").reshape(-1) for t in (train_text, valid_text))
        token_bytes = tokenizer.token_bytes()
    preset = getattr(args, "preset", None) or DEFAULT_PRESET
    if preset not in GPT_PRESETS:
        raise RecipeError(f"--preset {preset!r} is not a GPT preset; known: {', '.join(sorted(GPT_PRESETS))}")
    context = GPT_PRESETS[preset]["config"]["max_sequence_length"]
    sequence_length = min(context, len(valid) - 1)  # a short text: shorter windows (and position table)
    if sequence_length < 8:
        raise RecipeError(f"gpt: the text has {len(text)} characters, the 10 % validation split {len(valid)} tokens; "
                          "it needs at least 9.")
    batch_size = args.batch_size or DEFAULT_BATCH

    keras.utils.set_random_seed(args.seed)
    lm = _model(preset, tokenizer.vocabulary_size(), tokenizer, sequence_length if sequence_length < context else None)
    batches = RandomWindows(train, sequence_length, batch_size=batch_size, seed=args.seed,
                            steps_per_epoch=args.steps_per_epoch)
    steps_per_epoch = len(batches)
    epochs = args.epochs or max(1, round(DEFAULT_UPDATES / steps_per_epoch))
    lm.compile(optimizer=char_lm_optimizer(steps_per_epoch * epochs))
    with common.Timer() as timer:
        history = run.fit(lm, batches, epochs=epochs, callbacks=list(extra_callbacks), verbose=args.verbose)
    losses = history.history["loss"]
    run.save_model(lm, "model.keras" if task == "lm" else "lm.keras")  # with a task, model.keras is the classifier
    if bpe_size is not None:
        for filename, contents in tokenizer.files().items():  # vocabulary.json, merges.txt
            run.write_text(filename, contents)

    x_valid, y_valid = validation_windows(valid, sequence_length)
    valid_loss, valid_accuracy = lm.evaluate(x_valid, y_valid, batch_size=batch_size, verbose=0)
    # Per character: the nats of the y_valid tokens (ids 1 .. n T) over the characters they cover.
    predicted = int(y_valid.size)
    characters = _predicted_characters(token_bytes, valid, valid_text, 1, predicted + 1)
    valid_loss_per_character = float(valid_loss) * (predicted / characters)
    prompt = "\n" if bpe_size is not None or "\n" in tokenizer.vocabulary else text[0]
    sampler = keras_hub.samplers.TopKSampler(k=min(200, tokenizer.vocabulary_size()), temperature=0.8)  # nanoGPT's
    samples = lm.generate([prompt] * 3, max_length=min(SAMPLE_LENGTH, sequence_length), sampler=sampler)
    run.write_text("samples.txt", "\n\n=====\n\n".join(samples) + "\n")

    fine_tuning = {"task": task}
    if task != "lm":
        with common.Timer() as fine_tuning_timer:
            classifier, fine_history, report = fine_tune(
                lm, tokenizer, task, task_data, batch_size=args.batch_size or FINE_TUNING_BATCH,
                steps_per_epoch=args.steps_per_epoch, seed=args.seed, verbose=args.verbose, run=run,
            )
        run.save_model(classifier, "model.keras")
        fine_tuning.update({f"fine_tuning_{name}": values[-1] for name, values in fine_history.history.items()})
        fine_tuning.update(report, task_data=str(task_path), task_paper=TASK_PAPERS[task],
                           fine_tuning_seconds=round(fine_tuning_timer.seconds, 2))

    metrics = {name: values[-1] for name, values in history.history.items()}
    metrics.update(
        {
            "first_epoch_loss": losses[0],
            "validation_loss": float(valid_loss),
            "validation_accuracy": float(valid_accuracy),
            "validation_loss_per_character": valid_loss_per_character,
            "validation_bits_per_character": valid_loss_per_character / float(np.log(2.0)),
            "validation_characters": characters,
            "characters_per_token": characters / predicted,
            "uniform_loss": float(np.log(tokenizer.vocabulary_size())),
            "paper": PAPER,
            "preset": preset,
            "dataset": "built-in sample" if args.dataset is None else str(args.dataset),
            "characters": len(text),
            "tokenizer": "character" if bpe_size is None else "byte-pair",
            "vocabulary_size": tokenizer.vocabulary_size(),
            "train_tokens": int(len(train)),
            "validation_tokens": int(len(valid)),
            "validation_windows": int(len(x_valid)),
            "sequence_length": sequence_length,
            "epochs": epochs,
            "steps_per_epoch": steps_per_epoch,
            "updates": epochs * steps_per_epoch,
            "batch_size": batch_size,
            "parameters": int(lm.count_params()),
            "samples": samples,
            "backend": keras.backend.backend(),
            "train_seconds": round(timer.seconds, 2),
            **fine_tuning,
        }
    )
    return run.finish(metrics)
