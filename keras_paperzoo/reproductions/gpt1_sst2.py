"""GPT-1's pre-training gain, at CPU scale: SST-2 and a synthetic multiple-choice task (Radford et al. 2018).

    paperzoo reproduce gpt1 --budget cpu        # the CPU budget below (the committed run)
    paperzoo reproduce gpt1 --budget smoke      # --data sample: the built-in corpus and sentiment sentences
    paperzoo reproduce gpt1 --budget cpu --parts choice          # the synthetic task alone

The claim (Sec. 5, Table 5): fine-tuning a generatively pre-trained Transformer beats the
same Transformer trained on the task alone ("Transformer w/o pre-training": 59.9 average
score against 74.7, -14.8; SST-2 84.0 against 91.3; the paper's Table 5, whose numbers
are not in the shared paper notes: from memory, verify). Two parts, each fine-tuned from the pre-trained
weights and from the same random initialisation the pre-training started from, with the
same seeds:

(a) `sst2`: a small GPT (`GPTBackbone`, GPT-1's post-norm blocks) pre-trained by
    `GPTCausalLM` on unlabeled English (`--corpus sst2`, the cpu budget: the 67,349 SST-2
    training sentences without labels, in-domain; `--corpus all`: also Tiny Shakespeare
    and Multi30k English, bert_sst2's 1.3M words; `--data sample`: the built-in
    documents), tokenised by a byte-level BPE learned on it (`bpe.train_byte_pair_tokenizer`);
    then `GPTClassifier` (Sec. 3.3 traversal [<s>; text; <e>], `add_task_tokens`,
    auxiliary LM loss lambda = 0.5, eq. 5) on `--train-sentences` labelled SST-2
    sentences (a small labelled set, where pre-training should help most), scored on
    SST-2 dev (872). Also the paper's zero-shot heuristic (Sec. 5, Fig. 2 right): append
    " very" to each dev sentence and compare the LM's probabilities of " positive" and
    " negative", measured as the pre-training goes on and for the random initialisation.
(b) `choice`: facts in the pre-training text only ("the ball of kimo is red ."; made-up
    names, 2 relations x 4 values), a multiple-choice task through
    `GPTClassifier(task="multiple_choice")` ([<s>; "the ball of kimo is"; $; " red ."; <e>]
    per answer, softmax over the 4): fine-tuned on the questions of `--choice-train`
    names, tested on the held-out names, whose answers only the pre-training text holds
    (from scratch: chance, 25 %). The zero-shot score: the answer the pre-trained LM
    finds most likely after the question, no fine-tuning.

Budget and deviations (the defaults = the cpu budget, sized for a 2-core machine shared
with other jobs, where one update of this model took about 1 s): L=2, H=128, A=4 (GPT-1:
12 x 768, 117M parameters), BPE of 2,000 tokens (GPT-1: 40,000 merges), context 48 (512);
`--pretrain-steps` 1,200 updates of 32 x 48 tokens (about 1.1 passes over the SST-2
sentences; GPT-1: 100 epochs of BooksCorpus at 64 x 512 tokens a batch) at peak lr 1e-3
(the paper's 2.5e-4 is for 117M parameters and far longer runs), 10 % warmup then cosine
to 0; fine-tuning: `GPTClassifier`'s recipe (linear decay, 0.2 % warmup, weight decay
0.01, classifier dropout 0.1, lambda 0.5) at `--lr` 3e-4 (GPT-1: 6.25e-5 for 117M
parameters; bert_sst2 found that small models need 3e-4 or more), batch 32, the paper's 3
epochs, on 800 sentences, seeds 0, 1, 2. (b): 60 names (12 labelled: 24 questions; 96
held-out questions), 600 LM updates on the facts, fine-tuning 20 epochs of batch 8 at
1e-3. The error of a gain is paired on the test examples and seeds
(`bert_sst2.gain_error`); a claim holds beyond 2 standard errors.

Writes gpt1_sst2_metrics.json and gpt1_sst2_results.md in `--output-dir`. The committed
run and its reading: applications/results/gpt1_sst2_results.md.
"""

import pathlib
import time

import numpy as np

from keras_paperzoo.reproductions import common
from keras_paperzoo.reproductions.bert_sst2 import summarise

PAPER = {"sst2_accuracy": 91.3, "sst2_without_pretraining": 84.0, "average_score": 74.7,
         "average_without_pretraining": 59.9, "source": "Radford et al. 2018, Table 4 (SST-2 test) and Table 5 "
         "(ablations: average over the 8 GLUE-style dev sets; 'Transformer w/o pre-training')"}
PARTS = ("sst2", "choice")
ARMS = ("pretrained", "random_init")
METRICS_FILE = "gpt1_sst2_metrics.json"
ZERO_SHOT_PROMPT, ZERO_SHOT_WORDS = " very", (" negative", " positive")  # Sec. 5 "Zero-shot Behaviors"

# (b): made-up names, two relations of four values each; every fact lives in the pre-training text only.
_SYLLABLES = ("ka", "mi", "to", "ru", "le", "no", "sa", "vi", "po", "de", "gu", "fe", "zo", "ba", "ri", "lu")
RELATIONS = {"ball": ("the ball of {} is", ("red", "blue", "green", "yellow")),
             "city": ("{} lives in", ("paris", "rome", "oslo", "cairo"))}


def parse_args(argv=None):
    parser = common.ArgumentParser(__doc__.split("\n")[0], backend="torch")
    parser.add_argument("--data", default=None,
                        help="folder with tinyshakespeare.txt, multi30k/, sst2/ (default: found or downloaded: see "
                        "--data-dir); 'sample': the built-in corpus and sentiment sentences")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}")
    parser.add_argument("--corpus", default="sst2", choices=("sst2", "all"),
                        help="(a) pre-training text: the SST-2 training sentences without labels, or all the "
                        "offline English of bert_sst2 (+ Tiny Shakespeare, Multi30k English); --data sample: the "
                        "built-in documents")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--vocabulary-size", type=int, default=2000)
    parser.add_argument("--sequence-length", type=int, default=48)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--pretrain-steps", type=int, default=1200)
    parser.add_argument("--pretrain-lr", type=float, default=1e-3)
    parser.add_argument("--zero-shot-points", type=int, default=3,
                        help="(a) measure the zero-shot heuristic this many times during pre-training")
    parser.add_argument("--train-sentences", type=int, default=800)
    parser.add_argument("--finetune-epochs", type=int, default=3)
    parser.add_argument("--lr", default="3e-4", help="fine-tuning learning rates (comma-separated grid)")
    parser.add_argument("--finetune-seeds", default="0,1,2")
    parser.add_argument("--choice-entities", type=int, default=60, help="(b) made-up names, 2 facts each")
    parser.add_argument("--choice-train", type=int, default=12, help="(b) names whose questions are labelled")
    parser.add_argument("--choice-pretrain-steps", type=int, default=600)
    parser.add_argument("--choice-vocabulary-size", type=int, default=400)
    parser.add_argument("--choice-batch-size", type=int, default=8)
    parser.add_argument("--choice-epochs", type=int, default=20)
    parser.add_argument("--choice-lr", type=float, default=1e-3)
    args = parser.parse_args(argv)
    args.parts_list = common.comma_list(args.parts, "--parts", PARTS)
    args.lr_list = common.comma_list(args.lr, "--lr", kind=float)
    args.seeds = common.comma_list(args.finetune_seeds, "--finetune-seeds", kind=int)
    for flag in ("layers", "hidden", "heads", "batch_size", "pretrain_steps", "train_sentences", "finetune_epochs",
                 "choice_pretrain_steps", "choice_epochs", "choice_batch_size", "zero_shot_points"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag.replace('_', '-')} {getattr(args, flag)}: must be >= 1")
    if not 0 < args.choice_train < args.choice_entities:
        parser.error(f"--choice-train {args.choice_train}: must be in [1, --choice-entities) "
                     f"({args.choice_entities}): some names must be held out")
    return args


# --- data ------------------------------------------------------------------------------------
def choice_names(count, seed=0):
    """`count` distinct made-up names of 2-3 syllables ("kimo", "rulesa"), seeded."""
    rng = np.random.default_rng(seed)
    if count > len(_SYLLABLES) ** 2:
        raise ValueError(f"choice_names: at most {len(_SYLLABLES) ** 2} names; got {count}.")
    names = []
    while len(names) < count:
        name = "".join(rng.choice(_SYLLABLES, size=int(rng.integers(2, 4))))
        if name not in names:
            names.append(name)
    return names


def choice_facts(names, seed=0):
    """{name: {relation: value index}}: each name's ball colour and city, drawn uniformly."""
    rng = np.random.default_rng(seed)
    return {name: {r: int(rng.integers(len(values))) for r, (_, values) in RELATIONS.items()} for name in names}


def fact_sentence(name, relation, value):
    template, values = RELATIONS[relation]
    return f"{template.format(name)} {values[value]} ."


def choice_documents(facts, num_documents, sentences_per_document=6, seed=0):
    """The pre-training text of (b): documents of fact sentences drawn at random (each fact many times)."""
    rng = np.random.default_rng(seed)
    all_facts = [fact_sentence(n, r, v) for n, row in facts.items() for r, v in row.items()]
    return [[all_facts[i] for i in rng.integers(len(all_facts), size=sentences_per_document)]
            for _ in range(num_documents)]


def choice_questions(facts, names):
    """[(context, answers, label)] for the names: the 4 completions of each relation, the right one's index."""
    questions = []
    for name in names:
        for relation, value in facts[name].items():
            template, values = RELATIONS[relation]
            questions.append((template.format(name), [f" {v} ." for v in values], value))
    return questions


def document_stream(documents, encode, end_of_text):
    """One id array: each document's sentences joined by newlines, documents separated by `end_of_text`."""
    texts = ["\n".join(d) for d in documents]
    ids = []
    for row in encode(texts):
        ids.extend(row)
        ids.append(end_of_text)
    return np.asarray(ids, dtype="int32")


def fit_tokens(texts, encode, length):
    """Id lists of `texts`, each cut to `length` ids (a longer sentence keeps its start)."""
    return [row[:length] for row in encode(texts)]


# --- the runs --------------------------------------------------------------------------------
def main(argv=None):
    args = parse_args(argv)
    if args.data is None and "sst2" in args.parts_list:
        keys = ("sst2",) if args.corpus == "sst2" else common.TEXT_DATASETS
        args.data = str(common.data_folder(keys, "or pass --data sample for a smoke run, or --parts choice"))
    output = pathlib.Path(args.output_dir)
    output.mkdir(parents=True, exist_ok=True)
    common.select_backend(args.backend)
    import keras

    from keras_paperzoo.evaluation.run_records import timed

    started = time.perf_counter()
    metrics = {"paper": PAPER, "claim": "fine-tuning a pre-trained GPT beats the same transformer trained on the "
               "task alone (Table 5)", "parts": {}, "claims": {}}
    if "sst2" in args.parts_list:
        if args.data != "sample" and not (pathlib.Path(args.data) / "sst2" / "train.tsv").is_file():
            raise FileNotFoundError(f"--data {args.data}: no sst2/train.tsv there; pass a folder with sst2/ (and "
                                    "for --corpus all tinyshakespeare.txt, multi30k/), --data sample for a smoke "
                                    "run or --parts choice")
        metrics["parts"]["sst2"] = timed(sst2_part, args, output)
    if "choice" in args.parts_list:
        metrics["parts"]["choice"] = timed(choice_part, args, output)
    metrics["claims"] = claims(metrics)
    metrics["budget"] = {**{k: v for k, v in vars(args).items()
                            if k not in ("output_dir", "verbose", "parts_list", "lr_list", "seeds")},
                         "backend": keras.backend.backend(), "total_seconds": round(time.perf_counter() - started, 1)}
    common.write_json(output / METRICS_FILE, metrics)
    (output / "gpt1_sst2_results.md").write_text(report(metrics), encoding="utf-8")
    print(report(metrics))
    return metrics


def byte_pair_encoder(texts, vocabulary_size, directory):
    """(encode, end-of-text id): a byte-level BPE of `vocabulary_size` learned on `texts` (GPT-2's, Sec. 2.2),
    encoding lists of strings to id lists with the fast `tokenizers` twin of keras-hub's tokenizer."""
    from keras_paperzoo.data.bpe import END_OF_TEXT, load_hugging_face_tokenizer, train_byte_pair_tokenizer

    trained = train_byte_pair_tokenizer(texts, vocabulary_size, directory=directory)
    fast = load_hugging_face_tokenizer(trained.directory)

    def encode(strings):
        return [e.ids for e in fast.encode_batch(list(strings))]

    return encode, fast.token_to_id(END_OF_TEXT)


def backbone_builder(args, vocabulary_size):
    """A function giving the GPT-1-style backbone (post-norm) at the random initialisation of `args.seed`."""
    import keras

    from keras_paperzoo.models.gpt import GPTBackbone

    def build():
        keras.utils.set_random_seed(args.seed)
        return GPTBackbone(vocabulary_size, args.layers, args.hidden, args.heads, 4 * args.hidden,
                           args.sequence_length, norm_first=False)

    return build


def with_task_tokens(backbone, seed):
    """A fresh copy of `backbone` with <s>, $, <e> (`add_task_tokens`); the same new rows for every arm (`seed`)."""
    import keras

    from keras_paperzoo.models.gpt.gpt_task_inputs import add_task_tokens

    keras.utils.set_random_seed(seed)
    return add_task_tokens(backbone)


def pretrain(backbone, ids, args, steps, points=1, on_point=None):
    """GPT-1 eq. (1) on random windows of `ids`: `steps` updates in `points` epochs (`on_point(updates)` after
    each); GPT-1's optimizer (warmup 10 %, cosine to 0) at `args.pretrain_lr`. Returns the per-epoch history."""
    import keras

    from keras_paperzoo.data.char_text import RandomWindows
    from keras_paperzoo.models.gpt import GPTCausalLM
    from keras_paperzoo.models.gpt.gpt_causal_lm import paper_optimizer

    points = max(1, min(points, steps))
    windows = RandomWindows(ids, args.sequence_length, args.batch_size, seed=args.seed,
                            steps_per_epoch=steps // points)
    lm = GPTCausalLM(backbone)
    lm.compile(optimizer=paper_optimizer(steps // points * points, steps // 10, args.pretrain_lr))
    hook = keras.callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: on_point((epoch + 1) * (steps // points)) if on_point else None)
    history = lm.fit(windows, epochs=points, callbacks=[windows.epoch_callback(), hook], verbose=args.verbose)
    return {name: [round(float(v), 4) for v in values] for name, values in history.history.items()}


def continuation_log_probs(backbone, prefixes, continuations, sequence_length, batch_size=64):
    """(N, K) log P(continuation_k | prefix_n) under the backbone's LM head, summed over the continuation's tokens.

    `prefixes`: N id lists; `continuations`: N lists of K id lists. A row longer than
    `sequence_length` keeps its last ids (the prefix is cut at its start).
    """
    from keras import ops

    rows, starts = [], []
    for prefix, options in zip(prefixes, continuations):
        for option in options:
            ids = (list(prefix) + list(option))[-sequence_length:]
            rows.append(ids)
            starts.append(max(1, len(ids) - len(option)))  # the first continuation position, predicted from t - 1
    width = max(len(r) for r in rows)
    token_ids = np.zeros((len(rows), width), "int32")  # (N K, T), right-padded (causal: padding is never seen)
    for i, r in enumerate(rows):
        token_ids[i, : len(r)] = r
    scores = np.zeros(len(rows))
    for b in range(0, len(rows), batch_size):
        hidden = backbone(token_ids[b : b + batch_size], training=False)  # (B, T, D)
        log_p = ops.convert_to_numpy(ops.log_softmax(backbone.token_embedding(hidden, reverse=True), axis=-1))
        for j, i in enumerate(range(b, min(b + batch_size, len(rows)))):
            t = np.arange(starts[i], len(rows[i]))
            scores[i] = log_p[j, t - 1, token_ids[i, t]].sum()  # sum of log P(u_t | u_<t) over the continuation
    return scores.reshape(len(prefixes), -1)


def choice_accuracy(scores, labels):
    """(accuracy %, "0101..." which rows the highest score gets right)."""
    correct = np.argmax(scores, axis=-1) == np.asarray(labels)
    return round(100.0 * float(correct.mean()), 2), "".join("1" if c else "0" for c in correct)


def fine_tune(backbone, task, train, test, args, lr, seed, epochs, batch_size):
    """`GPTClassifier(task)` (aux LM lambda = 0.5, its fine-tuning optimizer at `lr`) on `train` = (x, y); the
    test accuracy and which test examples it gets right."""
    import keras

    from keras_paperzoo.models.gpt import GPTClassifier
    from keras_paperzoo.models.gpt.gpt_classifier import fine_tuning_optimizer

    (x_train, y_train), (x_test, y_test) = train, test
    keras.utils.set_random_seed(seed)
    classifier = GPTClassifier(backbone, num_classes=None if task == "multiple_choice" else 2, task=task,
                               lm_weight=0.5)
    steps = epochs * -(-len(y_train) // batch_size)
    classifier.compile(optimizer=fine_tuning_optimizer(steps, learning_rate=lr))
    start = time.perf_counter()
    history = classifier.fit(x_train, y_train, batch_size=batch_size, epochs=epochs, shuffle=True,
                             verbose=args.verbose)
    logits = classifier.predict(x_test, batch_size=128, verbose=0)["logits"]  # (N, classes or choices)
    accuracy, correct = choice_accuracy(logits, y_test)
    return {"dev_accuracy_percent": accuracy, "dev_correct": correct,
            "train_accuracy_percent": round(100 * float(history.history["accuracy"][-1]), 2),
            "task_loss": round(float(history.history["task_loss"][-1]), 4),
            "lm_loss": round(float(history.history["lm_loss"][-1]), 4),
            "updates": steps, "seconds": round(time.perf_counter() - start, 1)}


def compare_arms(sources, task, train, test, args, lrs, epochs, batch_size):
    """Every (arm, lr, seed) fine-tuning from a fresh copy of each source backbone; `summarise`d like bert_sst2."""
    runs = {}
    for arm, source in sources.items():
        for lr in lrs:
            for seed in args.seeds:
                run = fine_tune(with_task_tokens(source, args.seed), task, train, test, args, lr, seed, epochs,
                                batch_size)
                runs[f"{arm}/lr={lr:g}/seed={seed}"] = {"arm": arm, "lr": lr, "seed": seed, **run}
                print(arm, lr, seed, {k: v for k, v in run.items() if k != "dev_correct"}, flush=True)
    return summarise({"runs": runs})


def sst2_part(args, output):
    """(a): BPE + LM pre-training on the offline English text, the zero-shot curve, fine-tuning both arms."""
    from keras_paperzoo.data.text_corpus import load_documents, sentence_documents
    from keras_paperzoo.models.gpt.gpt_task_inputs import pack_task_inputs, task_token_ids
    from keras_paperzoo.recipes.bert import fine_tuning_task

    if args.corpus == "sst2" and args.data != "sample":  # in-domain text only: the SST-2 training sentences
        documents = sentence_documents(pathlib.Path(args.data) / "sst2" / "train.tsv", skip_header=True, column=0)
    else:
        documents = load_documents(args.data)
    train_x, train_y, dev_x, dev_y, task_name = fine_tuning_task(args.data)
    rows = np.random.default_rng(args.seed).permutation(len(train_y))[: args.train_sentences]
    encode, end_of_text = byte_pair_encoder(["\n".join(d) for d in documents], args.vocabulary_size,
                                            output / "gpt1_sst2_bpe")
    ids = document_stream(documents, encode, end_of_text)
    build = backbone_builder(args, args.vocabulary_size)

    # Zero-shot (Sec. 5): "<sentence> very" -> P(" positive") vs P(" negative"), before and during pre-training.
    prompts = encode(["\n" + s + ZERO_SHOT_PROMPT for s in dev_x])
    words = [encode(ZERO_SHOT_WORDS)] * len(prompts)

    def zero_shot(backbone):
        return choice_accuracy(continuation_log_probs(backbone, prompts, words, args.sequence_length), dev_y)

    backbone = build()
    curve = {0: zero_shot(backbone)[0]}
    t = time.perf_counter()

    def point(updates):
        curve[updates] = zero_shot(backbone)[0]
        print(f"zero-shot SST-2 after {updates} updates: {curve[updates]} %", flush=True)

    history = pretrain(backbone, ids, args, args.pretrain_steps, args.zero_shot_points, point)
    pretrain_seconds = time.perf_counter() - t
    zero_shot_final, zero_shot_correct = zero_shot(backbone)
    zero_shot_random, zero_shot_random_correct = zero_shot(build())

    special = task_token_ids(args.vocabulary_size + 3)
    length = args.sequence_length - 2  # room for <s> and <e>

    def pack(texts):
        return pack_task_inputs("classification", fit_tokens(texts, encode, length), args.sequence_length, special)

    train = (pack([train_x[i] for i in rows]), np.asarray(train_y)[rows])
    test = (pack(dev_x), np.asarray(dev_y))
    result = compare_arms({"pretrained": backbone, "random_init": build()}, "classification", train, test, args,
                          args.lr_list, args.finetune_epochs, args.batch_size)
    return {**result, "task": task_name, "train_sentences": int(len(rows)), "dev_sentences": int(len(dev_y)),
            "corpus_documents": len(documents), "corpus_words": sum(len(s.split()) for d in documents for s in d),
            "corpus_tokens": int(len(ids)), "parameters": int(build().count_params()),
            "pretraining": history, "pretrain_seconds": round(pretrain_seconds, 1),
            "zero_shot": {"pretrained_percent": zero_shot_final, "random_init_percent": zero_shot_random,
                          "pretrained_correct": zero_shot_correct, "random_init_correct": zero_shot_random_correct,
                          "by_updates": {str(k): v for k, v in curve.items()},
                          "majority_percent": round(100 * max(np.mean(dev_y), 1 - np.mean(dev_y)), 2)}}


def choice_part(args, output):
    """(b): facts in the pre-training text only; multiple choice on held-out names, and the LM's zero-shot pick."""
    from keras_paperzoo.models.gpt.gpt_task_inputs import pack_task_inputs, task_token_ids

    names = choice_names(args.choice_entities, args.seed)
    facts = choice_facts(names, args.seed)
    documents = choice_documents(facts, num_documents=40 * args.choice_entities, seed=args.seed)
    encode, end_of_text = byte_pair_encoder(["\n".join(d) for d in documents], args.choice_vocabulary_size,
                                            output / "gpt1_choice_bpe")
    ids = document_stream(documents, encode, end_of_text)
    build = backbone_builder(args, args.choice_vocabulary_size)
    backbone = build()
    t = time.perf_counter()
    history = pretrain(backbone, ids, args, args.choice_pretrain_steps)
    pretrain_seconds = time.perf_counter() - t

    special = task_token_ids(args.choice_vocabulary_size + 3)

    def task(questions):
        examples = [(encode([c])[0], encode(a)) for c, a, _ in questions]
        width = max(len(c) + len(a) + 3 for c, answers in examples for a in answers)  # <s> c $ a <e>, no padding
        x = pack_task_inputs("multiple_choice", examples, width, special)
        return x, np.array([label for _, _, label in questions], "int32"), examples

    train_x, train_y, _ = task(choice_questions(facts, names[: args.choice_train]))
    test_x, test_y, test_examples = task(choice_questions(facts, names[args.choice_train:]))
    newline = encode(["\n"])[0]
    zero_shot = {}
    for arm, weights in (("pretrained", backbone), ("random_init", build())):
        scores = continuation_log_probs(weights, [newline + c for c, _ in test_examples],
                                        [a for _, a in test_examples], args.sequence_length)
        zero_shot[f"{arm}_percent"], zero_shot[f"{arm}_correct"] = choice_accuracy(scores, test_y)
    result = compare_arms({"pretrained": backbone, "random_init": build()}, "multiple_choice", (train_x, train_y),
                          (test_x, test_y), args, [args.choice_lr], args.choice_epochs, args.choice_batch_size)
    return {**result, "train_questions": int(len(train_y)), "test_questions": int(len(test_y)),
            "choices": len(next(iter(RELATIONS.values()))[1]), "corpus_tokens": int(len(ids)),
            "pretraining": history, "pretrain_seconds": round(pretrain_seconds, 1), "zero_shot": zero_shot}


# --- claims and the report -------------------------------------------------------------------
def claims(metrics):
    """Per part: the fine-tuning gain (best lr of each arm, paired 2 s.e.) and the zero-shot score's margin."""
    from keras_paperzoo.evaluation.claims import accuracy_above

    found = {}
    for name, part in metrics["parts"].items():
        if part.get("best"):
            gain = part["best"]["gain"]
            found[f"{name}: pre-trained + fine-tuned above random init + fine-tuned"] = {
                "holds": bool(gain["mean"] > gain["two_se"]), "difference_points": gain["mean"],
                "two_standard_errors_points": gain["two_se"]}
        n = len(part["zero_shot"]["pretrained_correct"])
        baseline = part["zero_shot"]["random_init_percent"]
        found[f"{name}: zero-shot pre-trained LM above the random-init LM"] = accuracy_above(
            part["zero_shot"]["pretrained_percent"], baseline, n)
    return found


def _cell(row, key):
    return f"{row[key]['mean']:.2f} ± {row[key]['two_se']:.2f}" if key in row else ""


def report(metrics):
    """Markdown: each part's table (fine-tuned accuracy of both arms per lr, the gain, zero-shot), the claims."""
    b = metrics["budget"]
    lines = ["# GPT-1: fine-tuning a pre-trained GPT against the same transformer from scratch", "",
             f"GPT-1-style (post-norm) L={b['layers']}, H={b['hidden']}, A={b['heads']}, context "
             f"{b['sequence_length']}, batch {b['batch_size']}; backend {b['backend']}; "
             f"{b['total_seconds'] / 60:.1f} min in all; seeds {b['finetune_seeds']}.", ""]
    for name, part in metrics["parts"].items():
        load = part["load_average_1_5_15_min"]
        pre = part["pretraining"]
        if name == "sst2":
            lines += [f"## (a) {part['task']}: {part['train_sentences']:,} labelled sentences, dev "
                      f"{part['dev_sentences']}", "",
                      f"Pre-training: {b['pretrain_steps']:,} updates on {part['corpus_words']:,} words "
                      f"({part['corpus_tokens']:,} BPE tokens, vocabulary {b['vocabulary_size']:,}), lr "
                      f"{b['pretrain_lr']:g}, {part['pretrain_seconds'] / 60:.1f} min; LM loss {pre['loss'][0]:.3f} "
                      f"-> {pre['loss'][-1]:.3f} nats/token; {part['parameters']:,} parameters. Fine-tuning: "
                      f"{b['finetune_epochs']} epochs of batch {b['batch_size']}. Part wall time "
                      f"{part['wall_seconds'] / 60:.1f} min, load {load[0][0]} -> {load[1][0]}.", ""]
            paper = "| GPT-1 (paper; SST-2 test, Table 4 / Table 5 without pre-training) | 91.3 | 84.0 | +7.3 |"
        else:
            lines += [f"## (b) synthetic multiple choice: {part['train_questions']} labelled questions, "
                      f"{part['test_questions']} on held-out names, {part['choices']} answers", "",
                      f"Pre-training on the facts: {b['choice_pretrain_steps']:,} updates ({part['corpus_tokens']:,}"
                      f" tokens), LM loss {pre['loss'][0]:.3f} -> {pre['loss'][-1]:.3f}, "
                      f"{part['pretrain_seconds'] / 60:.1f} min; fine-tuning {b['choice_epochs']} epochs of batch "
                      f"{b['choice_batch_size']}. Part wall time {part['wall_seconds'] / 60:.1f} min, load "
                      f"{load[0][0]} -> {load[1][0]}.", ""]
            paper = "| chance | 25.0 | 25.0 | |"
        lines += ["| fine-tuning lr | pre-trained, fine-tuned (%) | random init, fine-tuned (%) | gain (points) |",
                  "|---|---|---|---|"]
        for lr, row in part["summary"].items():
            lines.append(f"| {lr} | {_cell(row, 'pretrained')} | {_cell(row, 'random_init')} | {_cell(row, 'gain')} |")
        best = part["best"]
        lines += [f"| best lr per arm ({best['pretrained_lr']} / {best['random_init_lr']}) | {best['pretrained']:.2f} "
                  f"| {best['random_init']:.2f} | {best['gain']['mean']:+.2f} ± {best['gain']['two_se']:.2f} |", paper,
                  "", f"Zero-shot, no fine-tuning: pre-trained LM {part['zero_shot']['pretrained_percent']:.2f} %, "
                  f"random-init LM {part['zero_shot']['random_init_percent']:.2f} %"
                  + (f"; by pre-training updates {part['zero_shot']['by_updates']}; majority class "
                     f"{part['zero_shot']['majority_percent']:.2f} %." if name == "sst2" else "."), ""]
    lines += ["Claims (holds: beyond 2 standard errors; gains paired on the test examples and seeds):", "",
              common.claims_text(metrics["claims"]), ""]
    return "\n".join(lines)


def paper_vs_ours(metrics):
    """GPT-1's SST-2 accuracy and Table 5's cost of no pre-training beside each part's best arms and gain."""
    rows = []
    sst2, choice = metrics["parts"].get("sst2"), metrics["parts"].get("choice")
    if sst2:
        best = sst2["best"]
        rows += [(f"{sst2['task']} accuracy (%), pre-trained + fine-tuned", "91.3 (GPT-1, SST-2 test)",
                  f"{best['pretrained']:.2f} (dev, {sst2['train_sentences']:,} labelled)"),
                 (f"{sst2['task']} accuracy (%), same transformer w/o pre-training", "84.0 (Table 5, dev)",
                  f"{best['random_init']:.2f}"),
                 ("pre-training gain (points)", "+7.3 on SST-2; +14.8 average over 8 tasks (Table 5)",
                  f"{best['gain']['mean']:+.2f} ± {best['gain']['two_se']:.2f}"),
                 ("zero-shot sentiment (' very' -> positive / negative, %)", "rises with pre-training (Fig. 2)",
                  f"{sst2['zero_shot']['pretrained_percent']:.2f} (random init "
                  f"{sst2['zero_shot']['random_init_percent']:.2f})")]
    if choice:
        best = choice["best"]
        rows += [("synthetic multiple choice, held-out names (%): pre-trained / scratch", "-",
                  f"{best['pretrained']:.2f} / {best['random_init']:.2f} (chance 25)"),
                 ("synthetic multiple choice: gain (points) / LM zero-shot (%)", "-",
                  f"{best['gain']['mean']:+.2f} ± {best['gain']['two_se']:.2f} / "
                  f"{choice['zero_shot']['pretrained_percent']:.2f}")]
    return rows
