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
"""

import numpy as np

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
    tokenizer = CharTokenizer.from_text(text)
    train, valid = split_ids(tokenizer.encode(text))
    preset = getattr(args, "preset", None) or DEFAULT_PRESET
    if preset not in GPT_PRESETS:
        raise RecipeError(f"--preset {preset!r} is not a GPT preset; known: {', '.join(sorted(GPT_PRESETS))}")
    context = GPT_PRESETS[preset]["config"]["max_sequence_length"]
    sequence_length = min(context, len(valid) - 1)  # a short text: shorter windows (and position table)
    if sequence_length < 8:
        raise RecipeError(f"gpt: the text has {len(text)} characters; the 10 % validation split needs at least 9.")
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

    x_valid, y_valid = validation_windows(valid, sequence_length)
    valid_loss, valid_accuracy = lm.evaluate(x_valid, y_valid, batch_size=batch_size, verbose=0)
    prompt = "\n" if "\n" in tokenizer.vocabulary else text[0]
    sampler = keras_hub.samplers.TopKSampler(k=min(200, tokenizer.vocabulary_size()), temperature=0.8)  # nanoGPT's
    samples = lm.generate([prompt] * 3, max_length=min(SAMPLE_LENGTH, sequence_length), sampler=sampler)
    run.write_text("samples.txt", "\n\n=====\n\n".join(samples) + "\n")

    metrics = {name: values[-1] for name, values in history.history.items()}
    metrics.update(
        {
            "first_epoch_loss": losses[0],
            "validation_loss": float(valid_loss),
            "validation_accuracy": float(valid_accuracy),
            "validation_bits_per_character": float(valid_loss) / np.log(2.0),
            "uniform_loss": float(np.log(tokenizer.vocabulary_size())),
            "paper": PAPER,
            "preset": preset,
            "dataset": "built-in sample" if args.dataset is None else str(args.dataset),
            "characters": len(text),
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
