"""BERT's pre-training gain on SST-2, at CPU scale (Devlin et al. 2019, Table 1 and Sec. 5).

    paperzoo reproduce bert --budget cpu              # the CPU budget below
    paperzoo reproduce bert --budget gpu              # --pretrain-steps 40000 --train-sentences 67349 --layers 4 --hidden 256
    paperzoo reproduce bert --budget cpu --merge a/bert_sst2_metrics.json b/bert_sst2_metrics.json --output-dir merged
    paperzoo reproduce bert --budget smoke            # --data sample: the built-in corpus and sentiment sentences

The claim: pre-training a bidirectional Transformer with masked LM + next sentence
prediction on unlabeled text, then fine-tuning it, beats the same network trained on
the task alone. The paper: BERT-base 93.5 % on SST-2 (GLUE test) after 1M steps of 256
sequences on 3.3B words; here a BERT-Tiny-sized model on the English text available
offline (Tiny Shakespeare, the English side of Multi30k train, the SST-2 training
sentences without labels: about 1.3M words), then the same fine-tuning from the
pre-trained weights and from a random initialisation, on the same SST-2 sentences with
the same seed, scored on SST-2 dev (872 sentences).

Method (the package's): `train_wordpiece` (a WordPiece vocabulary of the corpus),
`bert_pretraining_dataset` (sentence pairs 50 % IsNext / 50 % NotNext, 15 % of the
tokens chosen, 80 / 10 / 10, masks drawn from `--seed` so runs repeat), `BertPretrainer`
with the paper's AdamW (weight decay 0.01, linear warmup then linear decay),
`BertClassifier` with `compile(total_steps=...)` (warmup 10 %, linear decay), batch 32.
Each fine-tuning learning rate of `--lr` runs with each seed of `--finetune-seeds`, from
the pre-trained weights and from the same random initialisation the pre-training
started from; the summary gives means over the seeds with 2 standard errors and the
paired gain.

Budget and deviations (the defaults): L=2, H=128, A=2 (BERT-Tiny), vocabulary 8,000,
sequences of 64 tokens; `--pretrain-steps` 16,000 updates of 32 pairs (0.4 % of the
paper's 128,000,000 pre-training sequences) at `--pretrain-lr` 1e-3 with 10 % warmup
(the paper: 1e-4, 1 % warmup of 1M steps; a short run needs a larger rate: at 2,000
updates 1e-3 led 5e-4 by 0.13 nats of MLM loss, and small BERTs take large rates, as
ELECTRA-Small's 5e-4); gradients clipped at global norm 1.0 as the reference code;
fine-tuning on `--train-sentences` 4,000 SST-2 training sentences for 3 epochs (375
updates) at lr {3e-4, 1e-3}, above the paper's grid {5e-5, 3e-5, 2e-5}: at this budget
5e-5 leaves both models predicting the majority class (dev 50.92 %, measured), random
init is best from 3e-4 on and the pre-trained model at 1e-3 (of 1e-4 ... 1e-3, measured),
and Turc et al. 2019 fine-tune small BERTs up to 1e-4. `--save-at` and `--probe` add a linear
probe of the frozen features as pre-training goes on (a diagnostic). `--arms random_init
--pretrain-steps 0` runs the baseline alone (e.g. side by side with the pre-training)
and `--merge` joins the metrics files; `--pretrain-from` continues a saved pre-training. Each fine-tuning run
keeps which dev sentences it got right (`dev_correct`), so the gain's error is paired on
the sentences (`gain_error`). Writes bert_sst2_metrics.json and
bert_sst2_results.md in `--output-dir`. The committed run and its reading:
applications/results/bert_sst2_results.md (the gain is not reproduced at this budget).
"""

import json
import pathlib
import time

import numpy as np

from keras_paperzoo.reproductions import common

PAPER = "BERT-base 93.5 %, BERT-large 94.9 % on SST-2 (GLUE test; Devlin et al. 2019, Table 1)"


def parse_args(argv=None):
    parser = common.ArgumentParser(__doc__.split("\n")[0])
    parser.add_argument("--data", default=None,
                        help="folder with tinyshakespeare.txt, multi30k/, sst2/ (default: found or downloaded: see "
                        "--data-dir); 'sample': the built-in corpus and sentiment sentences")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--vocabulary-size", type=int, default=8000)
    parser.add_argument("--vocabulary", help="a vocabulary file (one token a line) instead of training WordPiece")
    parser.add_argument("--sequence-length", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--pretrain-steps", type=int, default=16000, help="0: no pre-training, random-init runs only")
    parser.add_argument("--pretrain-lr", type=float, default=1e-3)
    parser.add_argument("--pretrain-warmup", type=float, default=0.1, help="warmup fraction of the pre-training")
    parser.add_argument("--pretrained", help="a saved pre-trained backbone (.keras) instead of pre-training")
    parser.add_argument("--pretrain-from", help="pre-train further from this saved backbone (.keras), with a new "
                        "warmup and decay, instead of from the random initialisation; the MLM and NSP heads start "
                        "afresh (the file holds the backbone only)")
    parser.add_argument("--pretrain-seed", type=int, help="sentence pairs and masks of the pre-training "
                        "(default: --seed); give another one with --pretrain-from for fresh masks")
    parser.add_argument("--save-at", default="", help="also save the backbone after these updates (comma-separated, "
                        "multiples of 500), e.g. to probe the features as pre-training goes on")
    parser.add_argument("--probe", action="store_true", help="linear probe of the frozen features (random init, "
                        "each --save-at backbone and the final one) before fine-tuning")
    parser.add_argument("--arms", default="pretrained,random_init")
    parser.add_argument("--train-sentences", type=int, default=4000)
    parser.add_argument("--finetune-epochs", type=int, default=3)
    parser.add_argument("--lr", default="3e-4,1e-3", help="fine-tuning learning rates (comma-separated grid)")
    parser.add_argument("--finetune-seeds", default="0,1,2")
    parser.add_argument("--merge", nargs="+", help="metrics files of runs to merge into one report (nothing trained)")
    args = parser.parse_args(argv)
    if not args.merge:  # bad values get one line naming them, before any data is read
        for flag, text, kind in (("--lr", args.lr, float), ("--finetune-seeds", args.finetune_seeds, int)):
            try:
                [kind(v) for v in text.split(",")]
            except ValueError:
                parser.error(f"{flag} {text!r}: expected a comma-separated list of {kind.__name__} values")
        if args.pretrain_from and args.pretrained:
            parser.error("--pretrain-from and --pretrained: give one (pre-train further, or use the file as it is)")
        for flag, file, suffix in (("--pretrain-from", args.pretrain_from, ".keras"),
                                   ("--pretrained", args.pretrained, ".keras"), ("--vocabulary", args.vocabulary, "")):
            if file and not pathlib.Path(file).is_file():
                parser.error(f"{flag} {file}: no such file")
            if file and not file.endswith(suffix):
                parser.error(f"{flag} {file}: expected a {suffix} file (a saved backbone)")
        try:
            _pretraining_epochs(args)
        except ValueError as error:
            parser.error(str(error))
    return args


def _pretraining_epochs(args):
    """(epochs, updates per epoch, --save-at updates) of the pre-training; bad --save-at values are refused."""
    epochs = max(1, args.pretrain_steps // 500)
    steps_per_epoch = max(1, args.pretrain_steps // epochs)
    try:
        save_at = {int(v) for v in args.save_at.split(",") if v}
    except ValueError:
        raise ValueError(f"--save-at {args.save_at!r}: expected comma-separated update counts, e.g. 4000,8000")
    if save_at and (args.pretrained or "pretrained" not in args.arms.split(",") or args.pretrain_steps < 1):
        raise ValueError(f"--save-at {args.save_at} needs this run to pre-train (the pretrained arm, "
                         "--pretrain-steps >= 1 and no --pretrained file).")
    wrong = sorted(n for n in save_at if n % steps_per_epoch or not 0 < n <= args.pretrain_steps)
    if wrong:
        raise ValueError(f"--save-at {wrong}: each must be a multiple of {steps_per_epoch} (the updates per "
                         f"epoch) and at most --pretrain-steps {args.pretrain_steps}.")
    return epochs, steps_per_epoch, save_at


def main(argv=None):
    args = parse_args(argv)
    output = pathlib.Path(args.output_dir)
    output.mkdir(parents=True, exist_ok=True)
    if args.merge:
        return write(merge([json.loads(pathlib.Path(f).read_text()) for f in args.merge]), output)
    common.select_backend(args.backend)
    import keras
    import keras_hub

    from keras_paperzoo.data.bert_pretraining import bert_pretraining_dataset, train_wordpiece
    from keras_paperzoo.data.text_corpus import load_documents
    from keras_paperzoo.models.bert import BertBackbone, BertPretrainer
    from keras_paperzoo.models.bert.bert_optimizer import bert_optimizer
    from keras_paperzoo.recipes.bert import fine_tune, fine_tuning_task

    if args.data is None:
        args.data = str(common.data_folder(common.TEXT_DATASETS, "or pass --data sample for a smoke run"))
    if args.data != "sample" and not (pathlib.Path(args.data) / "sst2" / "train.tsv").is_file():
        raise FileNotFoundError(f"--data {args.data}: no sst2/train.tsv there; pass a folder with "
                                "tinyshakespeare.txt, multi30k/ and sst2/, or --data sample for a smoke run")
    started = time.perf_counter()
    documents = load_documents(args.data)
    if args.vocabulary:
        vocabulary = pathlib.Path(args.vocabulary).read_text(encoding="utf-8").splitlines()
        tokenizer = keras_hub.models.BertTokenizer(vocabulary=vocabulary, lowercase=True)
    else:
        tokenizer = train_wordpiece(documents, vocabulary_size=args.vocabulary_size)
    (output / "vocabulary.txt").write_text("\n".join(tokenizer.get_vocabulary()) + "\n")
    train_x, train_y, dev_x, dev_y, task_name = fine_tuning_task(args.data)
    train_y = np.asarray(train_y)
    rows = np.random.default_rng(args.seed).permutation(len(train_y))[: args.train_sentences]
    task = ([train_x[i] for i in rows], train_y[rows], dev_x, np.asarray(dev_y), task_name)

    def backbone():
        keras.utils.set_random_seed(args.seed)
        return BertBackbone(
            vocabulary_size=tokenizer.vocabulary_size(), num_layers=args.layers, num_heads=max(1, args.hidden // 64),
            hidden_dim=args.hidden, intermediate_dim=4 * args.hidden, max_sequence_length=args.sequence_length,
        )

    # 1. Pre-training (masked LM + NSP) on the unlabeled English text; the masks are seeded (args.seed).
    pretraining, pretrain_seconds, pairs = {}, 0.0, None
    arms = args.arms.split(",")
    backbone_file = pathlib.Path(args.pretrained) if args.pretrained else output / "bert_sst2_backbone.keras"
    if "pretrained" in arms and not args.pretrained:
        if args.pretrain_steps < 1:
            raise ValueError(f"--pretrain-steps must be >= 1 for the pretrained arm; got {args.pretrain_steps}.")
        pretrain_seed = args.seed if args.pretrain_seed is None else args.pretrain_seed
        pairs = bert_pretraining_dataset(documents, tokenizer, args.sequence_length, args.batch_size,
                                         seed=pretrain_seed, repeat=True)
        pretrainer = BertPretrainer(keras.saving.load_model(args.pretrain_from) if args.pretrain_from else backbone())
        warmup = round(args.pretrain_warmup * args.pretrain_steps)
        pretrainer.compile(optimizer=bert_optimizer(args.pretrain_lr, args.pretrain_steps, warmup))
        epochs, steps_per_epoch, save_at = _pretraining_epochs(args)
        saver = keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: (
            pretrainer.backbone.save(output / f"bert_sst2_backbone_{(epoch + 1) * steps_per_epoch}.keras")
            if (epoch + 1) * steps_per_epoch in save_at else None))
        t = time.perf_counter()
        history = pretrainer.fit(pairs, epochs=epochs, steps_per_epoch=steps_per_epoch, callbacks=[saver],
                                 verbose=args.verbose)
        pretrain_seconds = time.perf_counter() - t
        pretrainer.backbone.save(backbone_file)
        pretraining = {name: [round(float(v), 4) for v in values] for name, values in history.history.items()}

    # 2. (--probe) What the frozen features already know about sentiment, as pre-training goes on.
    probes = {}
    if args.probe:
        candidates = {"0 (random init)": None, **{f"{n}": output / f"bert_sst2_backbone_{n}.keras"
                                                 for n in sorted(int(v) for v in args.save_at.split(",") if v)}}
        candidates["final"] = backbone_file
        for name, file in candidates.items():
            if file is not None and not file.is_file():
                print(f"probe {name}: skipped, no backbone at {file}", flush=True)
                continue
            weights = backbone() if file is None else keras.saving.load_model(file)
            probes[name] = linear_probe(weights, tokenizer, task, args.sequence_length)
            print("probe", name, probes[name], flush=True)

    # 3. The same fine-tuning from the pre-trained and from random weights, per learning rate and seed.
    runs = {}
    for arm in arms:
        for lr in [float(v) for v in args.lr.split(",")]:
            for seed in [int(v) for v in args.finetune_seeds.split(",")]:
                weights = keras.saving.load_model(backbone_file) if arm == "pretrained" else backbone()
                t = time.perf_counter()
                classifier, fine, dev_accuracy = fine_tune(weights, tokenizer, task, batch_size=args.batch_size,
                                                           epochs=args.finetune_epochs, learning_rate=lr, seed=seed,
                                                           verbose=args.verbose)
                runs[f"{arm}/lr={lr:g}/seed={seed}"] = {
                    "arm": arm, "lr": lr, "seed": seed,
                    "dev_accuracy_percent": round(100 * dev_accuracy, 2),
                    "dev_accuracy_percent_per_epoch": [round(100 * v, 2) for v in fine.history["val_accuracy"]],
                    "train_accuracy_percent": round(100 * fine.history["accuracy"][-1], 2),
                    "seconds": round(time.perf_counter() - t, 1),
                    "dev_correct": dev_correct(classifier, tokenizer, task, args.sequence_length),
                }
                print(arm, lr, seed, {k: v for k, v in runs[f"{arm}/lr={lr:g}/seed={seed}"].items()
                                      if k != "dev_correct"}, flush=True)
    metrics = {
        "paper": PAPER,
        "claim": "pre-training then fine-tuning beats training on the task alone",
        "runs": runs,
        "pretraining": pretraining,
        "probe": probes,
        "budget": {
            **{k: v for k, v in vars(args).items() if k not in ("data", "output_dir", "verbose", "merge")},
            "fine_tuning_task": task_name,
            "documents": len(documents),
            "corpus_words": sum(len(s.split()) for d in documents for s in d),
            "sentence_pairs": int(pairs.num_pairs) if pairs is not None else None,
            "vocabulary": int(tokenizer.vocabulary_size()),
            "parameters": int(backbone().count_params()),
            "pretrain_seconds": round(pretrain_seconds, 1),
            "total_seconds": round(time.perf_counter() - started, 1),
            "backend": keras.backend.backend(),
        },
    }
    return write(summarise(metrics), output)


def dev_correct(classifier, tokenizer, task, sequence_length):
    """Which dev sentences the classifier gets right, as a string of 0/1 in dev order (for the paired error)."""
    from keras_paperzoo.data.bert_inputs import classification_dataset

    _, _, dev_x, dev_y, _ = task
    logits = classifier.predict(classification_dataset(dev_x, dev_y, tokenizer, sequence_length, batch_size=256),
                                verbose=0)  # (N, 2)
    return "".join("1" if right else "0" for right in np.argmax(logits, axis=-1) == dev_y)


def linear_probe(backbone, tokenizer, task, sequence_length):
    """Dev accuracy (%) of a logistic regression on frozen features: the pooled [CLS] output and the mean of the
    final token states (standardised on the training sentences). A diagnostic, not the paper's protocol."""
    from keras.ops import convert_to_numpy
    from sklearn.linear_model import LogisticRegression

    from keras_paperzoo.data.bert_inputs import classification_dataset

    train_x, train_y, dev_x, dev_y, _ = task

    def features(texts, labels):
        pooled, mean = [], []
        for x, _ in classification_dataset(texts, labels, tokenizer, sequence_length, batch_size=256):
            out = backbone(x, training=False)
            mask = convert_to_numpy(x["padding_mask"]).astype("float32")[..., None]  # (B, T, 1)
            states = convert_to_numpy(out["sequence_output"])  # (B, T, H)
            pooled.append(convert_to_numpy(out["pooled_output"]))
            mean.append((states * mask).sum(1) / mask.sum(1))
        return {"pooled": np.concatenate(pooled), "mean": np.concatenate(mean)}

    train, dev = features(train_x, train_y), features(dev_x, dev_y)
    scores = {}
    for name in train:
        mu, sd = train[name].mean(0), train[name].std(0) + 1e-6
        classifier = LogisticRegression(max_iter=2000).fit((train[name] - mu) / sd, train_y)
        scores[name] = round(100 * classifier.score((dev[name] - mu) / sd, dev_y), 2)
    return scores


def merge(parts):
    """One metrics dict from runs written separately (e.g. the two arms run side by side)."""
    metrics = dict(parts[0])
    metrics["runs"] = {name: run for part in parts for name, run in part["runs"].items()}
    metrics["pretraining"] = next((p["pretraining"] for p in parts if p["pretraining"]), {})
    metrics["probe"] = next((p["probe"] for p in parts if p.get("probe")), {})
    metrics["budget"] = {**parts[0]["budget"], "parts": [p["budget"] for p in parts]}
    return summarise(metrics)


def summarise(metrics):
    """Per learning rate: each arm's mean dev accuracy over the seeds and the gain paired by seed, with 2 standard
    errors; then the best rate of each arm against the other's best (the paper's protocol: best of the grid on dev).

    The standard error of an arm's mean joins the spread over fine-tuning seeds (std / sqrt(n))
    and the dev set's sampling error (sqrt(p (1 - p) / N), N the dev sentences (872), shared by all seeds, so not
    divided).
    The gain's error is `gain_error`'s.
    """
    runs = metrics["runs"]
    n_dev = next((len(r["dev_correct"]) for r in runs.values() if "dev_correct" in r), N_DEV)
    summary = {}
    for lr in sorted({run["lr"] for run in runs.values()}):
        row = {}
        for arm in ("pretrained", "random_init"):
            values = np.array([r["dev_accuracy_percent"] for r in runs.values() if r["arm"] == arm and r["lr"] == lr])
            if len(values):
                p = values.mean() / 100
                seeds_se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else 0.0
                se = float(np.hypot(seeds_se, 100 * np.sqrt(p * (1 - p) / n_dev)))
                row[arm] = {"mean": round(float(values.mean()), 2), "two_se": round(2 * se, 2),
                            "per_seed": values.tolist()}
        if len(row) == 2:
            row["gain"] = gain_error(*(_by_seed(runs, arm, lr) for arm in ("pretrained", "random_init")))
        summary[f"{lr:g}"] = row
    metrics["summary"] = summary
    best = {arm: max((row[arm]["mean"], lr) for lr, row in summary.items() if arm in row)[1]
            for arm in ("pretrained", "random_init") if any(arm in row for row in summary.values())}
    if len(best) == 2:
        metrics["best"] = {"pretrained_lr": best["pretrained"], "random_init_lr": best["random_init"],
                           "pretrained": summary[best["pretrained"]]["pretrained"]["mean"],
                           "random_init": summary[best["random_init"]]["random_init"]["mean"],
                           "gain": gain_error(_by_seed(runs, "pretrained", float(best["pretrained"])),
                                              _by_seed(runs, "random_init", float(best["random_init"])))}
    return metrics


N_DEV = 872  # SST-2 dev sentences, for metrics files written before the runs kept `dev_correct`


def _by_seed(runs, arm, lr):
    return {r["seed"]: r for r in runs.values() if r["arm"] == arm and r["lr"] == lr}


def gain_error(pretrained, random_init):
    """The gain (pre-trained minus random init, points) over the seeds both arms ran, with 2 standard errors.

    With per-sentence results (`dev_correct`) in every run the error is paired on the dev
    sentences: d_s(i) = correct_pretrained,s(i) - correct_random,s(i); the variance of the
    mean gain is var_s(mean_i d_s) / S (seeds) + var_i(mean_s d_s(i)) / N (sentences), a
    two-way sum that counts the seed-by-sentence term twice, so errs on the large side
    (`"paired": true`). Without them, the seeds' spread is joined with the sampling error
    of two unpaired accuracies on the same sentences, sqrt(2 p (1 - p) / N), an upper bound.
    """
    seeds = sorted(set(pretrained) & set(random_init))
    gains = np.array([pretrained[s]["dev_accuracy_percent"] - random_init[s]["dev_accuracy_percent"] for s in seeds])
    seeds_var = gains.var(ddof=1) / len(gains) if len(gains) > 1 else 0.0
    paired = all("dev_correct" in arm[s] for arm in (pretrained, random_init) for s in seeds)
    if paired:
        correct = {a: np.array([[c == "1" for c in arm[s]["dev_correct"]] for s in seeds], dtype="float64")
                   for a, arm in (("p", pretrained), ("r", random_init))}  # (S, N)
        per_sentence = 100 * (correct["p"] - correct["r"]).mean(0)  # (N,)
        sentences_var = per_sentence.var(ddof=1) / per_sentence.size
    else:
        p = np.mean([arm[s]["dev_accuracy_percent"] for arm in (pretrained, random_init) for s in seeds]) / 100
        sentences_var = 100**2 * 2 * p * (1 - p) / N_DEV
    return {"mean": round(float(gains.mean()), 2), "two_se": round(float(2 * np.sqrt(seeds_var + sentences_var)), 2),
            "per_seed": [round(float(g), 2) for g in gains], "paired": paired}


def write(metrics, output):
    common.write_json(output / "bert_sst2_metrics.json", metrics)
    (output / "bert_sst2_results.md").write_text(report(metrics))
    print(report(metrics))
    return metrics


def report(metrics):
    """A Markdown table: dev accuracy with and without pre-training per learning rate, beside the paper's."""
    b = metrics["budget"]
    size = f"L={b['layers']}, H={b['hidden']}"
    pre = metrics["pretraining"]
    lines = [
        "# BERT on SST-2: the pre-training gain at CPU scale",
        "",
        f"Pre-training: {b['pretrain_steps']} updates of {b['batch_size']} pairs of {b['sequence_length']} tokens, "
        f"lr {b['pretrain_lr']:g}; fine-tuning: {b['train_sentences']:,} SST-2 sentences, {b['finetune_epochs']} "
        f"epochs, seeds {b['finetune_seeds']}; backend {b['backend']}.",
        "",
    ]
    if pre:
        lines += [f"Pre-training end: MLM loss {pre['mlm_loss'][-1]:.3f}, MLM accuracy {pre['mlm_accuracy'][-1]:.3f}, "
                  f"NSP accuracy {pre['nsp_accuracy'][-1]:.3f}.", ""]
    lines += [f"| fine-tuning lr | BERT {size} pre-trained | from random init | gain (points) |",
              "|---|---|---|---|"]
    for lr, row in metrics["summary"].items():
        cells = [f"{row[k]['mean']:.2f} ± {row[k]['two_se']:.2f}" if k in row else "" for k in
                 ("pretrained", "random_init", "gain")]
        lines.append(f"| {lr} | " + " | ".join(cells) + " |")
    if metrics.get("best"):
        best = metrics["best"]
        lines.append(f"| best of the grid per arm (lr {best['pretrained_lr']} / {best['random_init_lr']}) | "
                     f"{best['pretrained']:.2f} | {best['random_init']:.2f} | "
                     f"{best['gain']['mean']:+.2f} ± {best['gain']['two_se']:.2f} |")
    lines += ["| BERT-base (paper, GLUE test) | 93.5 | | |", ""]
    if metrics.get("probe"):
        lines += ["Linear probe of the frozen features (logistic regression on the fine-tuning sentences, SST-2 dev %):",
                  "", "| pre-training updates | pooled [CLS] | mean of token states |", "|---|---|---|"]
        lines += [f"| {name} | {row['pooled']:.2f} | {row['mean']:.2f} |" for name, row in metrics["probe"].items()]
        lines.append("")
    return "\n".join(lines)



def paper_vs_ours(metrics):
    """The best fine-tuned accuracy of each arm (best of the grid, the paper's protocol) and the gain."""
    task = metrics["budget"].get("fine_tuning_task", "sst2")
    best = metrics.get("best")
    if not best:
        return [(f"{task} dev accuracy (%)", "93.5 (BERT-base, SST-2 test)", "-")]
    return [(f"pre-trained, fine-tuned: {task} dev accuracy (%)", "93.5 (BERT-base, SST-2 GLUE test)",
             f"{best['pretrained']:.2f} (lr {best['pretrained_lr']})"),
            (f"from random init: {task} dev accuracy (%)", "-", f"{best['random_init']:.2f} (lr {best['random_init_lr']})"),
            ("pre-training gain (points)", "positive (Sec. 5)", f"{best['gain']['mean']:+.2f} +- {best['gain']['two_se']:.2f}")]
