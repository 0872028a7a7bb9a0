"""`paperzoo train transformer`: translation with the Transformer (Vaswani et al. 2017), BLEU on the test set.

Data (`--dataset`):
- `toy` (default): German -> English pairs generated from templates
  (`data.translation_toy`), 4,000 training and 200 test pairs; runs in minutes on a CPU.
- a Multi30k folder (e.g. `$PAPERZOO_DATA/multi30k`) with `train`, `val` and
  `test_2016_flickr` `.de` / `.en` files (gzip or plain): German -> English, BLEU on
  test_2016_flickr.

What follows the paper: a subword vocabulary shared by both languages and learned on the
training sentences (Sec. 5.1; WordPiece here, see `transformer_tokenizer`), shared
embeddings tied to the softmax projection, label smoothing 0.1, Adam(0.9, 0.98, 1e-9)
on the eq. (3) schedule, beam search with beam 4 and length penalty 0.6 (Sec. 6.1),
sacreBLEU on detokenized output.

What is scaled to a CPU, and why: the model (`--preset transformer_tiny` for toy,
`transformer_small` for Multi30k, either can be the paper's `transformer_base`); the
vocabulary (8,000 for Multi30k's 29k pairs, not 37,000); and the warmup, which is 10 %
of the run's updates (at most the paper's 4,000), with the schedule scaled so that its
peak is the paper's base-model peak, 512^-0.5 * 4000^-0.5 = 7.0e-4 (a short run would
otherwise spend itself warming up). `train_and_evaluate` also takes the warmup and the
peak, length buckets, checkpoint averaging of the last epoch ends (Sec. 6.1; off by
default), a wall-clock budget, and alphas to choose the length penalty from on
validation BLEU (Sec. 6.1: "chosen after experimentation on the development set").
"""

import math
import pathlib

import numpy as np

from keras_paperzoo.recipes.common import RecipeError

PAPER_BLEU = "27.3 / 28.4 BLEU (base / big, WMT14 EN-DE, Vaswani et al. 2017 Table 2)"
MULTI30K_REFERENCE = "mid-30s BLEU for small Transformers on Multi30k de-en test_2016_flickr (typical; the paper reports WMT14)"
PAPER_PEAK_RATE = 512**-0.5 * 4000**-0.5
DEFAULT_UPDATES = {"toy": 1500, "multi30k": 6000}


def load_corpus(dataset, seed):
    """(name, train pairs, validation pairs, test pairs) for `--dataset`."""
    from keras_paperzoo.data.translation import load_multi30k
    from keras_paperzoo.data.translation_toy import toy_translation_corpus

    if dataset in (None, "toy"):
        train = toy_translation_corpus(4000, seed=seed)
        valid = toy_translation_corpus(200, seed=seed + 1)
        test = toy_translation_corpus(200, seed=seed + 2)
        return "toy", train, valid, test
    folder = pathlib.Path(dataset)
    if not folder.is_dir():
        raise RecipeError(
            f"--dataset {dataset!r} is neither 'toy' nor a folder of Multi30k files (train.de.gz, train.en.gz, ...)."
        )
    try:
        return ("multi30k", load_multi30k(folder, "train"), load_multi30k(folder, "val"),
                load_multi30k(folder, "test_2016_flickr"))
    except (FileNotFoundError, ValueError) as error:
        raise RecipeError(f"--dataset {dataset}: {error}") from error


def run(args, extra_callbacks=()):
    """`paperzoo train transformer`: `--dataset toy` or a Multi30k folder; see the module docstring."""
    from keras_paperzoo.recipes import common

    run = common.start_run(args, "transformer")
    corpus = load_corpus(args.dataset, args.seed)
    return train_and_evaluate(
        corpus, args.output_dir, preset=args.preset, batch_size=args.batch_size, epochs=args.epochs,
        steps_per_epoch=args.steps_per_epoch, seed=args.seed, resume=args.resume, verbose=args.verbose,
        run=run, extra_callbacks=extra_callbacks,
    )


def _wall_clock_budget(seconds):
    """Stops `fit` at the first epoch end after `seconds` of training."""
    import time

    import keras

    class WallClockBudget(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.start = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            if time.perf_counter() - self.start >= seconds:
                self.model.stop_training = True

    return WallClockBudget()


def _snapshot_callback(folder, keep):
    """Saves the weights at every epoch end into FOLDER/epoch_NNNN.npz, keeping the last `keep`."""
    import keras

    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)

    class Snapshots(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            np.savez(folder / f"epoch_{epoch + 1:04d}.npz", *self.model.get_weights())
            for old in sorted(folder.glob("epoch_*.npz"))[:-keep]:
                old.unlink()

    return Snapshots()


def average_snapshots(model, folder, last):
    """Set `model`'s weights to the mean of the last `last` snapshots in FOLDER (Sec. 6.1); returns their names."""
    files = sorted(pathlib.Path(folder).glob("epoch_*.npz"))[-last:]
    if not files:
        return []
    total = None
    for path in files:
        with np.load(path) as arrays:
            weights = [arrays[f"arr_{i}"].astype("float64") for i in range(len(arrays.files))]
        total = weights if total is None else [t + w for t, w in zip(total, weights)]
    model.set_weights([(t / len(files)).astype(w.dtype) for t, w in zip(total, model.get_weights())])
    return [path.name for path in files]


def _cached_vocabulary(path, texts, size):
    """The vocabulary in PATH if a previous (or interrupted) run learned it, else learn and save it."""
    from keras_paperzoo.callbacks.run_checkpoint import atomic_write_text
    from keras_paperzoo.models.transformer.transformer_tokenizer import learn_vocabulary

    path = pathlib.Path(path)
    if path.is_file():
        return path.read_text(encoding="utf-8").split("\n")[:-1]
    vocabulary = learn_vocabulary(texts, size)
    atomic_write_text(path, "\n".join(vocabulary) + "\n")  # a killed run leaves all of it or none
    return vocabulary


def repetitive_count(texts, run=4):
    """How many texts hold a character or a word repeated `run` or more times in a row
    ("spppppan", "a dog dog dog dog"), the degenerate output of an under-trained decoder."""
    import re

    pattern = re.compile(r"(\w)\1{%d,}|\b(\w+)(?: \2\b){%d,}" % (run - 1, run - 1))
    return sum(bool(pattern.search(text)) for text in texts)


def train_and_evaluate(corpus, output_dir, preset=None, batch_size=None, epochs=None, steps_per_epoch=None,
                       seed=0, resume=False, verbose=1, vocabulary_size=None, beam_size=4, length_penalty=0.6,
                       warmup_steps=None, peak_rate=PAPER_PEAK_RATE, buckets=None, average_last=1,
                       max_train_seconds=None, tune_length_penalty=(), tune_pairs=400, run=None, extra_callbacks=()):
    """Learn the shared vocabulary, train, save, translate the test sentences with beam search, BLEU.

    `corpus` is `(name, (train_src, train_tgt), (valid_src, valid_tgt), (test_src, test_tgt))`
    as from `load_corpus`. Returns the metrics also written to OUTPUT_DIR/metrics.json.

    Budget knobs beyond the defaults: `warmup_steps` (default 10 % of the updates, at most
    4000) and `peak_rate` (the schedule's maximum, default the paper's base-model 7.0e-4);
    `buckets` (length buckets of `translation_batches`); `average_last` > 1 averages the
    weights saved at the last epoch ends (the paper averages its last 5 checkpoints,
    Sec. 6.1); `max_train_seconds` stops at the first epoch end past that wall time (the
    schedule does not depend on the total, so a stopped run is a shorter run of the same
    recipe); `tune_length_penalty` (alphas) picks alpha by BLEU on the first `tune_pairs`
    validation pairs, as the paper chose alpha "on the development set" (Sec. 6.1), and the
    test set is then decoded with that alpha and, if different, with `length_penalty`.
    The vocabulary is cached in OUTPUT_DIR/vocabulary.txt and the snapshots in
    OUTPUT_DIR/snapshots, so `resume=True` continues an interrupted run (exactly, but
    for `max_train_seconds`, which stops at a wall-clock time). `run`: the
    `recipes.common.Run` the CLI started (default: one started here from these arguments).
    """
    import keras

    from keras_paperzoo.data.translation import encode_pairs, translation_batches
    from keras_paperzoo.evaluation.bleu import corpus_bleu
    from keras_paperzoo.models.transformer.transformer_presets import TRANSFORMER_PRESETS
    from keras_paperzoo.data.translation import DEFAULT_BUCKETS
    from keras_paperzoo.models.transformer.transformer_tokenizer import make_tokenizer
    from keras_paperzoo.models.transformer.transformer_translator import TransformerTranslator, paper_optimizer
    from keras_paperzoo.recipes import common

    name, (train_src, train_tgt), (valid_src, valid_tgt), (test_src, test_tgt) = corpus
    preset = preset or ("transformer_tiny" if name == "toy" else "transformer_small")
    if preset not in TRANSFORMER_PRESETS:
        raise RecipeError(f"Unknown --preset {preset!r}; available: {', '.join(sorted(TRANSFORMER_PRESETS))}.")
    batch_size = batch_size or (64 if name == "toy" else 128)

    if run is None:
        arguments = dict(recipe="transformer", dataset=name, train_pairs=len(train_src), preset=preset,
                         batch_size=batch_size, epochs=epochs, steps_per_epoch=steps_per_epoch, seed=seed,
                         vocabulary_size=vocabulary_size, beam_size=beam_size, length_penalty=length_penalty,
                         warmup_steps=warmup_steps, peak_rate=peak_rate, buckets=buckets, average_last=average_last,
                         max_train_seconds=max_train_seconds, tune_length_penalty=tune_length_penalty,
                         tune_pairs=tune_pairs, backend=keras.backend.backend())
        run = common.Run(output_dir, arguments, resume=resume)
    output_dir = run.output_dir
    keras.utils.set_random_seed(seed)
    with common.Timer() as vocab_timer:
        target_size = vocabulary_size or (1000 if name == "toy" else TRANSFORMER_PRESETS[preset]["config"]["vocabulary_size"])
        vocabulary = _cached_vocabulary(output_dir / "vocabulary.txt", train_src + train_tgt, target_size)
    tokenizer = make_tokenizer(vocabulary)
    buckets = tuple(buckets or DEFAULT_BUCKETS)
    train = translation_batches(encode_pairs(tokenizer, train_src, train_tgt), batch_size, buckets=buckets, seed=seed)
    valid = translation_batches(encode_pairs(tokenizer, valid_src, valid_tgt), batch_size, buckets=buckets,
                                shuffle=False, drop_remainder=False)
    batches_per_epoch = int(train.cardinality())
    if batches_per_epoch < 1:
        raise RecipeError(f"--batch-size {batch_size} is larger than the training set allows.")
    steps_per_epoch = steps_per_epoch or batches_per_epoch  # epoch e: batches e*S ... of the repeated stream
    epochs = epochs or max(1, round(DEFAULT_UPDATES.get(name, 3000) / steps_per_epoch))
    total_updates = epochs * steps_per_epoch

    translator = TransformerTranslator.from_preset(preset, tokenizer=tokenizer, vocabulary_size=len(vocabulary))
    warmup = int(warmup_steps or min(4000, max(1, total_updates // 10)))
    hidden = translator.backbone.hidden_dim
    translator.compile(optimizer=paper_optimizer(hidden, warmup, peak_rate * math.sqrt(hidden * warmup)))

    callbacks = list(extra_callbacks)
    if max_train_seconds:
        callbacks.append(_wall_clock_budget(max_train_seconds))
    if average_last > 1:
        callbacks.append(_snapshot_callback(output_dir / "snapshots", average_last))
    with common.Timer() as timer:
        history = run.fit(translator, train, epochs=epochs, steps_per_epoch=steps_per_epoch, validation_data=valid,
                          callbacks=callbacks, verbose=verbose)
    updates_done = int(keras.ops.convert_to_numpy(translator.optimizer.iterations))
    averaged = average_snapshots(translator, output_dir / "snapshots", average_last) if average_last > 1 else []
    averaged_val_loss = float(translator.evaluate(valid, verbose=0)) if averaged else None
    run.save_model(translator, "model.keras")

    def test_bleu(alpha):
        hypotheses = translator.translate(test_src, beam_size=beam_size, length_penalty=alpha, batch_size=250,
                                          verbose=verbose)
        return hypotheses, corpus_bleu(hypotheses, test_tgt)

    tuning = {}
    with common.Timer() as tune_timer:
        for alpha in tune_length_penalty:
            tuned = translator.translate(valid_src[:tune_pairs], beam_size=beam_size, length_penalty=alpha,
                                         batch_size=250)
            tuning[str(alpha)] = corpus_bleu(tuned, valid_tgt[:tune_pairs])["bleu"]
    chosen = float(max(tuning, key=tuning.get)) if tuning else length_penalty
    with common.Timer() as decode_timer:
        hypotheses, bleu = test_bleu(chosen)
    paper_alpha = None
    if chosen != length_penalty:
        paper_alpha = test_bleu(length_penalty)[1]
    run.write_text("test_translations.txt", "\n".join(hypotheses) + "\n")
    metrics = {key: values[-1] for key, values in history.history.items()}
    metrics.update(
        {
            "length_penalty": chosen,
            "validation_bleu_by_length_penalty": tuning,
            "validation_tuning_pairs": min(tune_pairs, len(valid_src)) if tuning else 0,
            "tuning_seconds": round(tune_timer.seconds, 2),
            "test_bleu_at_paper_length_penalty": None if paper_alpha is None else paper_alpha["bleu"],
            "test_hypothesis_length": bleu["hypothesis_length"],
            "test_reference_length": bleu["reference_length"],
            "repetitive_hypotheses": repetitive_count(hypotheses),
            "averaged_snapshots": averaged,
            "averaged_val_loss": averaged_val_loss,
            "updates_done": updates_done,
            "peak_learning_rate": peak_rate,
            "buckets": list(buckets),
            "test_bleu": bleu["bleu"],
            "test_bleu_signature": bleu["signature"],
            "test_bleu_precisions": bleu["precisions"],
            "test_brevity_penalty": bleu["brevity_penalty"],
            "samples": [
                {"source": s, "reference": r, "translation": h}
                for s, r, h in list(zip(test_src, test_tgt, hypotheses))[:5]
            ],
            "paper_bleu": PAPER_BLEU,
            "reference_bleu": MULTI30K_REFERENCE if name == "multi30k" else None,
            "dataset": name,
            "preset": preset,
            "parameters": int(translator.count_params()),
            "vocabulary_size": len(vocabulary),
            "train_pairs": len(train_src),
            "test_pairs": len(test_src),
            "epochs": epochs,
            "steps_per_epoch": steps_per_epoch,
            "batch_size": batch_size,
            "warmup_steps": warmup,
            "beam_size": beam_size,
            "backend": keras.backend.backend(),
            "vocabulary_seconds": round(vocab_timer.seconds, 2),
            "train_seconds": round(timer.seconds, 2),
            "decode_seconds": round(decode_timer.seconds, 2),
        }
    )
    return run.finish(metrics)
