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
"""

import shutil

import numpy as np

from keras_paperzoo.data.bpe import InlineBytePairTokenizer
from keras_paperzoo.recipes.common import RecipeError

PAPER = "1.47 validation loss, nanoGPT shakespeare_char (6 x 384, context 256, 5,000 iterations at batch 64, one GPU)"
DEFAULT_PRESET = "gpt_char_tiny"
DEFAULT_UPDATES = 300  # without --epochs: as many epochs as make about 300 updates
DEFAULT_BATCH = 64
SAMPLE_LENGTH = 200


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


def run(args, extra_callbacks=()):
    import keras
    import keras_hub

    from keras_paperzoo.data.char_text import CharTokenizer, RandomWindows, load_text, split_ids, validation_windows
    from keras_paperzoo.models.gpt import GPT_PRESETS
    from keras_paperzoo.recipes import common

    run = common.start_run(args, "gpt")
    try:
        text = load_text(args.dataset)
    except ValueError as error:
        raise RecipeError(f"gpt: --dataset {error}") from error
    bpe_size = getattr(args, "bpe_vocabulary_size", None)
    if bpe_size is None:
        tokenizer = CharTokenizer.from_text(text)
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
    run.save_model(lm, "model.keras")
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
        }
    )
    return run.finish(metrics)
