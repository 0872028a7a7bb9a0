"""GPT-3's in-context learning at a CPU budget: accuracy rises with the shots K on tasks never trained on.

    paperzoo reproduce gpt3 --budget cpu                  # 2 x 64 GPT, 6,000 updates (JAX is fastest on a CPU)
    paperzoo reproduce gpt3 --budget smoke                # seconds, for the tests
    paperzoo reproduce gpt3 --budget gpu --backend jax    # 2 x 128, 20,000 updates

The claim (Brown et al. 2020, Fig. 1.2 and Sec. 3.9.2): a language model conditioned on K
solved examples of a task it cannot have memorised answers more of its questions as K grows,
with no gradient step on the task (Sec. 2: zero-, one- and few-shot). At the smallest scale:

Tasks. A task is a map from 8 keys (letters drawn from a-z) to values (letters), written
"kv" one pair a line, the question "k" (GPT-3 Sec. 2.4's layout: the K shots, then the
context; `FewShotTask` with "" between context and answer and "\\n" between examples). Each
key and value is one token, and the question's key is among the shots once they cover the
task, so the answer can be read off the prompt by a two-layer "find the earlier k, copy what
followed" circuit (an induction head; Olsson et al. 2022). No "=" between key and value: with
it the value would sit two tokens after its key, which a standard induction head does not
reach (a pilot with "k=v" lines stayed on the plateau, see the results). Families: a random letter mapping
drawn per task (a new one each time: 26!/18! maps of 8 keys), copy (v = k), successor (v = k + 1)
and reverse (v = z - k) in training; in evaluation, held-out tasks only: random mappings never
drawn in training (checked) and Caesar shifts v = k + s, s = 2..24, a family never trained on.

Training. The GPT (`GPTCausalLM`, 2 layers x 64, 4 heads, pre-LN, learned positions, no
dropout) is a plain next-character model on sequences of 12 pairs of one task (keys drawn with
repetition, so a repeated key's value is predictable from the context only; families
70 / 10 / 10 / 10 %), fresh sequences at every update (batch 32), GPT-1's optimizer
(`paper_optimizer`: AdamW, warm-up over 5 % then cosine) at a peak lr of 3e-3. Sized by
three short pilot runs on JAX (2 shared cores, load 7-13): "k=v" lines, 2 x 128 at lr 1e-3
(stopped after 300 updates: 0.8 s each) and 2 x 64 at 2e-3 (the loss stayed at 1.60-1.57 nats
from update 400 to 3,400: the plateau); "kv" lines, 2 x 64, lr 3e-3, 3,000 updates (4 min):
21 / 22 / 54 / 79 % at K = 0 / 1 / 4 / 8 on 160 held-out questions. The CPU budget doubles
the updates and evaluates 5 times the questions (one run, seed 0).

Evaluation (`few_shot_evaluate`, lm-evaluation-harness's protocol, GPT-3 Sec. 2.4): multiple
choice among the right value and 3 other values of the same task, scored by the log-likelihood
of the answer after the prompt; K = 0, 1, 4, 8 shots drawn (seeded) from the task's 8 pairs.
With K = 0 the prompt is "k" alone and all 4 choices are equally likely a priori: chance is
25 %. With K shots the query's pair is in the prompt with probability K / 8, so a model that
reads it off gets 25 + 75 K / 8 %: 25, 34, 62, 100 %. Beside the trained model: the same
model before training (random init) and a unigram baseline (each choice scored by its
letter's frequency in the training text, blind to the prompt). Accuracy with 2 standard
errors per K; the claims compare K = 8 with K = 0 for each, beyond 2 standard errors of the
difference (`accuracy_above`) or within them (flat).

Writes gpt3_icl_metrics.json, gpt3_icl_results.md and gpt3_icl_curves.png into --output-dir
(the committed CPU run: applications/results/).
"""

import json
import os
import pathlib
import string
import time

import numpy as np

from keras_paperzoo.reproductions import common

METRICS_FILE = "gpt3_icl_metrics.json"
TRAIN_FAMILIES = {"mapping": 0.7, "copy": 0.1, "successor": 0.1, "reverse": 0.1}
HELD_OUT_FAMILIES = ("mapping", "shift")
CHOICES = 4
MODELS = ("trained", "random init", "unigram")
COLOURS = {"trained": (200, 60, 40), "random init": (150, 150, 150), "unigram": (40, 90, 200)}
# GPT-3 175B on the word-scrambling tasks of Sec. 3.9.2 (Table 3.10), zero- / one- / few-shot accuracy (%).
# Not in the paper notes (shared/papers, Sec. 6.5): quoted from the paper, to verify against arXiv 2005.14165.
PAPER = {
    "source": "Brown et al. 2020, Table 3.10 / Fig. 1.2 (GPT-3 175B, K up to 100 in the few-shot column; "
              "numbers not in the paper notes: verify)",
    "random_insertion_percent": {"zero": 8.26, "one": 45.4, "few": 67.2},  # Fig. 1.2's task (with description)
    "cycle_letters_percent": {"zero": 3.66, "one": 21.7, "few": 37.9},
}


# --- tasks -----------------------------------------------------------------------------------
def family_values(family, keys, rng, alphabet_size, shift=None):
    """The values (int letters) of `keys` (int letters, (..., n)) under `family`; a random mapping per row."""
    keys = np.asarray(keys)
    if family == "mapping":  # a random injective map: a permutation of the alphabet per row
        permutation = np.argsort(rng.random(keys.shape[:-1] + (alphabet_size,)), axis=-1)  # (..., A)
        return np.take_along_axis(permutation, keys, axis=-1)
    offset = {"copy": 0, "successor": 1, "shift": shift}.get(family)
    if family == "reverse":
        return alphabet_size - 1 - keys
    if offset is None:
        raise ValueError(f"family {family!r}: one of mapping, copy, successor, reverse, shift (with shift=s)")
    return (keys + offset) % alphabet_size


def random_keys(rng, rows, keys_per_task, alphabet_size):
    """(rows, keys_per_task) distinct letters per row."""
    return np.argsort(rng.random((rows, alphabet_size)), axis=-1)[:, :keys_per_task]


def training_sequences(rows, rng, alphabet_size=26, keys_per_task=8, pairs=16, families=None):
    """Token ids (rows, 3 * pairs) of "kv\\n" lines, one task per row; and each row's task (`task_signatures`).

    Ids follow the tokenizer's vocabulary "\\n" + letters: "\\n" 0, letter i -> 1 + i.
    """
    families = families or TRAIN_FAMILIES
    names = list(families)
    family = rng.choice(len(names), size=rows, p=np.asarray([families[n] for n in names]) / sum(families.values()))
    keys = random_keys(rng, rows, keys_per_task, alphabet_size)  # (N, n)
    values = np.zeros_like(keys)
    for f, name in enumerate(names):
        chosen = family == f
        values[chosen] = family_values(name, keys[chosen], rng, alphabet_size)
    picks = rng.integers(0, keys_per_task, size=(rows, pairs))  # keys with repetition
    line = np.stack([np.take_along_axis(keys, picks, 1) + 1, np.take_along_axis(values, picks, 1) + 1,
                     np.zeros((rows, pairs), "int64")], axis=-1)  # (N, pairs, 3): k, v, "\n"
    return line.reshape(rows, 3 * pairs).astype("int32"), task_signatures(keys, values)


def task_signatures(keys, values):
    """Each row's task (keys, values (N, n)) as bytes of its pairs sorted by key: equal for equal tasks."""
    keys, values = np.atleast_2d(keys), np.atleast_2d(values)
    order = np.argsort(keys, axis=-1)
    pairs = np.concatenate([np.take_along_axis(keys, order, 1), np.take_along_axis(values, order, 1)], 1)
    return [row.tobytes() for row in pairs.astype("uint8")]


def held_out_examples(rng, tasks_per_family, queries, seen, alphabet_size=26, keys_per_task=8):
    """(train, evaluation) example lists of held-out tasks: random mappings not in `seen`, and Caesar shifts.

    Each training example is one pair of its task ({"context": "k", "choices", "target", "task",
    "family"}); each evaluation example a query on one of its task's keys, whose choices are the
    right value and `CHOICES - 1` other values of the same task (shuffled).
    """
    letters = string.ascii_lowercase[:alphabet_size]
    shifts = held_out_shifts(alphabet_size)
    train, evaluation, task = [], [], 0
    for family in HELD_OUT_FAMILIES:
        for t in range(tasks_per_family):
            shift = shifts[t % len(shifts)] if family == "shift" else None
            for _ in range(1000):
                keys = random_keys(rng, 1, keys_per_task, alphabet_size)[0]
                values = family_values(family, keys, rng, alphabet_size, shift)
                if task_signatures(keys, values)[0] not in seen:
                    break
            else:
                raise ValueError(f"no {family} task of {keys_per_task} keys over {alphabet_size} letters left that "
                                 "training has not seen: a larger --alphabet-size")

            def example(i, role):
                others = rng.choice([j for j in range(keys_per_task) if j != i], CHOICES - 1, replace=False)
                choices = [letters[values[j]] for j in rng.permutation([i, *others])]
                return {"context": letters[keys[i]], "choices": choices, "target": letters[values[i]],
                        "task": task, "family": family, "role": role}

            train += [example(i, "shot") for i in range(keys_per_task)]
            evaluation += [example(i, "query") for i in rng.choice(keys_per_task, queries, replace=False)]
            task += 1
    return train, evaluation


def held_out_shifts(alphabet_size):
    """The Caesar shifts s of the held-out family: 2 .. A - 2 (0, 1 are the trained copy and successor; A - 1,
    k -> k - 1, is left out too)."""
    return tuple(range(2, alphabet_size - 1))


def few_shot_task(train, evaluation):
    """A `FewShotTask` whose K shots come from the evaluated example's own task."""
    from keras_paperzoo.evaluation import FewShotTask

    class PerTaskShots(FewShotTask):
        def draw_shots(self, index, shots, seed):
            own = [j for j, other in enumerate(self.train) if other["task"] == self.evaluation[index]["task"]]
            if shots > len(own):
                raise ValueError(f"shots={shots} is more than the {len(own)} pairs of evaluation example {index}'s "
                                 "task")
            return [own[j] for j in np.random.default_rng((seed, index)).choice(len(own), shots, replace=False)]

    return PerTaskShots(train, evaluation, choices="choices", target_delimiter="", fewshot_delimiter="\n")


def tokenizer_for(alphabet_size):
    from keras_paperzoo.data.char_text import CharTokenizer

    return CharTokenizer("\n" + string.ascii_lowercase[:alphabet_size])


# --- evaluation ------------------------------------------------------------------------------
def mean_and_two_se(correct):
    correct = np.asarray(correct, "float64")
    se = float(np.std(correct, ddof=1) / np.sqrt(len(correct))) if len(correct) > 1 else 0.0
    return round(100 * float(correct.mean()), 2), round(200 * se, 2)


def accuracy_by_shots(correct_by_shots, task):
    """{"K": {"accuracy_percent", "two_standard_errors_points", "<family>_percent"}} from per-example flags."""
    out = {}
    for shots, correct in correct_by_shots.items():
        accuracy, two_se = mean_and_two_se(correct)
        out[str(shots)] = {"accuracy_percent": accuracy, "two_standard_errors_points": two_se}
        for family in HELD_OUT_FAMILIES:
            flags = [c for c, e in zip(correct, task.evaluation) if e["family"] == family]
            out[str(shots)][f"{family}_percent"] = mean_and_two_se(flags)[0]
    return out


def model_correct(lm, tokenizer, task, shots, seed, use_cache=None):
    from keras_paperzoo.evaluation import few_shot_evaluate

    return {k: [r["correct"] for r in few_shot_evaluate(lm, tokenizer, task, shots=k, seed=seed,
                                                        use_cache=use_cache)["records"]] for k in shots}


def unigram_correct(train_ids, tokenizer, task, shots):
    """The training text's letter frequencies (add-one) pick a choice; the prompt is never read, so K changes nothing."""
    counts = np.bincount(np.asarray(train_ids).ravel(), minlength=tokenizer.vocabulary_size()) + 1.0
    log_p = np.log(counts / counts.sum())
    correct = [int(np.argmax([log_p[tokenizer.encode(c)].sum() for c in task.choices_of(e)])) == task.target_index(e)
               for e in task.evaluation]
    return {k: list(correct) for k in shots}


def flat(low, high, n):
    """Is accuracy at K = 8 within 2 s.e. of K = 0's? (`accuracy_above`'s numbers, `holds` when not above.)"""
    from keras_paperzoo.evaluation.claims import two_standard_errors

    margin = two_standard_errors(high, low, n)
    return {"holds": bool(abs(high - low) <= margin), "difference_points": round(high - low, 2),
            "two_standard_errors_points": round(margin, 2)}


def claims(results, n):
    from keras_paperzoo.evaluation.claims import accuracy_above

    first, last = min(results["trained"], key=int), max(results["trained"], key=int)
    at = {name: (results[name][first]["accuracy_percent"], results[name][last]["accuracy_percent"])
          for name in MODELS}
    return {
        f"trained: accuracy at K = {last} above K = {first}": accuracy_above(at["trained"][1], at["trained"][0], n),
        f"trained above random init at K = {last}": accuracy_above(at["trained"][1], at["random init"][1], n),
        f"random init: flat (K = {last} within 2 s.e. of K = {first})": flat(*at["random init"], n),
        f"unigram: flat (K = {last} within 2 s.e. of K = {first})": flat(*at["unigram"], n),
    }


# --- the run ---------------------------------------------------------------------------------
def build_lm(args, tokenizer):
    import keras

    from keras_paperzoo.models import GPTBackbone, GPTCausalLM

    keras.utils.set_random_seed(args.seed)
    backbone = GPTBackbone(vocabulary_size=tokenizer.vocabulary_size(), num_layers=args.layers,
                           hidden_dim=args.width, num_heads=args.heads, intermediate_dim=4 * args.width,
                           max_sequence_length=3 * args.pairs, dropout=0.0)
    return GPTCausalLM(backbone, tokenizer=tokenizer)


def run(args):
    """Train, then evaluate the three models on the held-out tasks; returns the metrics."""
    import keras

    rng = np.random.default_rng(args.seed)
    tokenizer = tokenizer_for(args.alphabet_size)
    ids, seen = training_sequences(args.updates * args.batch_size, rng, args.alphabet_size, args.keys, args.pairs)
    train, evaluation = held_out_examples(rng, args.tasks, args.queries, set(seen), args.alphabet_size, args.keys)
    task = few_shot_task(train, evaluation)
    lm = build_lm(args, tokenizer)
    start = time.perf_counter()
    use_cache = None if args.scoring == "cache" else False
    correct = {"random init": model_correct(lm, tokenizer, task, args.shots, args.seed, use_cache),
               "unigram": unigram_correct(ids, tokenizer, task, args.shots)}
    evaluate_seconds = time.perf_counter() - start
    warmup = max(1, int(args.warmup * args.updates))
    lm.compile(optimizer=lm.paper_optimizer(total_steps=args.updates, warmup_steps=warmup,
                                            peak_learning_rate=args.learning_rate))
    start = time.perf_counter()
    loss = []
    for chunk in np.array_split(np.arange(len(ids)), args.chunks):  # a loss reading per chunk: the plateau, then the drop
        history = lm.fit(ids[chunk, :-1], ids[chunk, 1:], batch_size=args.batch_size, epochs=1, shuffle=False,
                         verbose=args.verbose)
        loss.append(round(float(history.history["loss"][-1]), 4))
        print(f"   updates {(chunk[-1] + 1) // args.batch_size}: loss {loss[-1]} nats/char", flush=True)
    train_seconds = time.perf_counter() - start
    start = time.perf_counter()
    correct["trained"] = model_correct(lm, tokenizer, task, args.shots, args.seed, use_cache)
    evaluate_seconds += time.perf_counter() - start
    results = {name: accuracy_by_shots(correct[name], task) for name in MODELS}
    n = len(task.evaluation)
    return {
        "paper": PAPER,
        "budget": {"backend": keras.backend.backend(), "updates": args.updates, "batch_size": args.batch_size,
                   "layers": args.layers, "width": args.width, "heads": args.heads, "learning_rate": args.learning_rate,
                   "warmup_steps": warmup, "alphabet_size": args.alphabet_size, "keys_per_task": args.keys,
                   "pairs_per_sequence": args.pairs, "held_out_tasks_per_family": args.tasks,
                   "queries_per_task": args.queries, "shots": list(args.shots), "seed": args.seed,
                   "cpu_cores": os.cpu_count()},
        "parameters": int(lm.count_params()),
        "evaluation_examples": n,
        "held_out_families": list(HELD_OUT_FAMILIES),
        "training_families": TRAIN_FAMILIES,
        "example_prompt_k8": task.prompt(0, max(args.shots), args.seed) + " -> " + task.target_text(evaluation[0]),
        "loss_per_chunk": loss,
        "ideal_loss_nats_per_char": round(ideal_loss(args), 4),
        "accuracy": results,
        "reader_accuracy_percent": {str(k): round(25 + 75 * min(k, args.keys) / args.keys, 1) for k in args.shots},
        "claims": claims(results, n),
        "train_seconds": round(train_seconds, 1),
        "evaluate_seconds": round(evaluate_seconds, 1),
    }


def ideal_loss(args):
    """Nats per predicted character of a model that knows the format and reads repeated pairs off the context.

    Per line "kv\\n": a key costs ln(keys per task) when it is one already seen (else ln of the
    chance of a new one over the unseen letters), "\\n" nothing, a value ln(letters not yet used) when its key is
    new and nothing when it repeats (random mappings; the other families cost nothing once known).
    Estimated by Monte Carlo over the sequences' key draws.
    """
    rng = np.random.default_rng(0)
    total, a, n = 0.0, args.alphabet_size, args.keys
    for _ in range(200):
        known = set()
        for i, p in enumerate(rng.integers(0, n, args.pairs)):
            new, seen = p not in known, len(known)
            if i:  # the first key is not predicted; a key is one of the n, seen ones with 1 / n each
                total += np.log(n * (a - seen) / (n - seen)) if new else np.log(n)
            total += TRAIN_FAMILIES["mapping"] * np.log(a - seen) if new else 0.0  # a new key's value (mappings)
            known.add(p)
    return total / 200 / (3 * args.pairs - 1)


# --- the report ------------------------------------------------------------------------------
def plot(metrics, path, width=640, height=440):
    """Accuracy vs K per model with its 2 s.e. bars (drawn over `common.line_plot`'s picture, same axes)."""
    from PIL import Image, ImageDraw

    shots = metrics["budget"]["shots"]
    x_range, y_range = (-4.0, max(shots) + 0.5), (0.0, 100.0)  # room on the left for the legend
    curves, bars = [], []
    for name in MODELS:
        rows = [metrics["accuracy"][name][str(k)] for k in shots]
        curves.append((name, COLOURS[name], shots, [r["accuracy_percent"] for r in rows], "dots"))
        bars += [(COLOURS[name], k, r["accuracy_percent"], r["two_standard_errors_points"]) for k, r in zip(shots, rows)]
    reader = metrics["reader_accuracy_percent"]
    curves.append((f"reader: 25 + 75 K / {metrics['budget']['keys_per_task']}", (60, 160, 60), shots,
                   [reader[str(k)] for k in shots], "line"))
    common.line_plot([("held-out tasks: accuracy (+- 2 s.e.) vs shots K, GPT-3 Fig. 1.2 in small", curves)], path,
                     x_range, y_range, "shots K", "accuracy (%)", width, height, shots)
    image = Image.open(path)
    draw = ImageDraw.Draw(image)
    x0, x1, y0, y1 = 50, width - 25, 30, height - 40  # line_plot's one panel

    def to_xy(x, y):
        return (x0 + (x - x_range[0]) / (x_range[1] - x_range[0]) * (x1 - x0),
                y1 - (min(max(y, y_range[0]), y_range[1]) - y_range[0]) / (y_range[1] - y_range[0]) * (y1 - y0))

    for i, (colour, k, accuracy, two_se) in enumerate(bars):
        (x, top), (_, bottom) = to_xy(k, accuracy + two_se), to_xy(k, accuracy - two_se)
        x += 4 * (i // len(shots) - 1)  # the three models side by side
        draw.line([(x, top), (x, bottom)], fill=colour, width=1)
        draw.line([(x - 3, top), (x + 3, top)], fill=colour)
        draw.line([(x - 3, bottom), (x + 3, bottom)], fill=colour)
    image.save(path)
    return path


def report(metrics):
    b = metrics["budget"]
    shots = b["shots"]
    lines = [
        "# GPT-3 in-context learning, in small",
        "",
        f"A {b['layers']}-layer x {b['width']} GPT ({b['heads']} heads, {metrics['parameters']:,} parameters) trained "
        f"for {b['updates']:,} updates of batch {b['batch_size']} (peak lr {b['learning_rate']:g}, warm-up "
        f"{b['warmup_steps']}) on sequences of {b['pairs_per_sequence']} \"kv\" lines of one task (families "
        + ", ".join(f"{k} {int(100 * v)} %" for k, v in metrics["training_families"].items())
        + f"), then evaluated on {metrics['evaluation_examples']} questions of held-out tasks ({b['held_out_tasks_per_family']}"
        f" random mappings never trained on and {b['held_out_tasks_per_family']} Caesar shifts s = 2..{b['alphabet_size'] - 2}, a family "
        f"never trained on; {b['queries_per_task']} questions each), {CHOICES}-way multiple choice by log-likelihood "
        f"(`few_shot_evaluate`). {b['backend']} backend, {b['cpu_cores']} shared CPU cores; training "
        f"{metrics['train_seconds'] / 60:.1f} min, evaluation {metrics['evaluate_seconds'] / 60:.1f} min; wall "
        f"{metrics.get('wall_seconds', 0) / 60:.1f} min, load average {metrics.get('load_average_1_5_15_min')}.",
        "",
        "A prompt at K = 8 (its answer after the arrow):",
        "",
        "```",
        metrics["example_prompt_k8"],
        "```",
        "",
        "| accuracy (%) +- 2 s.e. | " + " | ".join(f"K = {k}" for k in shots) + " |",
        "|---|" + "---|" * len(shots),
    ]
    for name in MODELS:
        rows = [metrics["accuracy"][name][str(k)] for k in shots]
        lines.append(f"| {name} | " + " | ".join(f"{r['accuracy_percent']:.1f} +- {r['two_standard_errors_points']:.1f}"
                                                 for r in rows) + " |")
        if name == "trained":
            for family in HELD_OUT_FAMILIES:
                lines.append(f"| trained, {family} tasks only | "
                             + " | ".join(f"{r[f'{family}_percent']:.1f}" for r in rows) + " |")
    reader = metrics["reader_accuracy_percent"]
    lines += [f"| reads the pair off the prompt (25 + 75 K / {b['keys_per_task']}) | "
              + " | ".join(f"{reader[str(k)]:.1f}" for k in shots) + " |",
              "",
              f"Chance is {100 / CHOICES:.0f} %. Training loss (nats/char) at the end of each chunk: "
              f"{', '.join(str(v) for v in metrics['loss_per_chunk'])}; a model that knows the format and reads "
              f"the repeated pairs off the context reaches about {metrics['ideal_loss_nats_per_char']} "
              "(`ideal_loss`). Curves: gpt3_icl_curves.png.",
              "",
              f"The paper (not this scale): {PAPER['source']}: random insertion "
              + " / ".join(f"{v} %" for v in PAPER["random_insertion_percent"].values())
              + " zero- / one- / few-shot; cycle letters "
              + " / ".join(f"{v} %" for v in PAPER["cycle_letters_percent"].values()) + ".",
              "",
              "Claims (holds = beyond 2 standard errors of the difference; flat = within them):",
              common.claims_text(metrics["claims"])]
    if metrics.get("notes"):
        lines += ["", "Notes:", *(f"- {note}" for note in metrics["notes"])]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = common.ArgumentParser(__doc__.splitlines()[0], backend="jax")
    parser.add_argument("--updates", type=int, default=6000)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--learning-rate", type=float, default=3e-3)
    parser.add_argument("--warmup", type=float, default=0.05, help="warm-up, a fraction of the updates")
    parser.add_argument("--alphabet-size", type=int, default=26, help="letters a.. for keys and values (<= 26)")
    parser.add_argument("--keys", type=int, default=8, help="keys per task (the most shots)")
    parser.add_argument("--pairs", type=int, default=12, help="kv lines per training sequence (context: 3 x this)")
    parser.add_argument("--tasks", type=int, default=100, help="held-out tasks per family")
    parser.add_argument("--queries", type=int, default=4, help="questions per held-out task")
    parser.add_argument("--shots", default="0,1,4,8")
    parser.add_argument("--chunks", type=int, default=20, help="fit calls, each reporting the loss")
    parser.add_argument("--scoring", default="cache", choices=("cache", "rows"),
                        help="few_shot_evaluate: the prompt once into the key/value cache, or batched rows (the "
                        "same log-likelihoods; rows is faster on eager torch)")
    parser.add_argument("--notes", action="append", default=[], help="a note for the results (repeatable)")
    args = parser.parse_args(argv)
    args.shots = common.comma_list(args.shots, "--shots", kind=int)
    for flag in ("updates", "batch_size", "layers", "width", "heads", "tasks", "queries", "chunks"):
        if getattr(args, flag) < 1:
            raise common.UsageError(f"--{flag.replace('_', '-')} {getattr(args, flag)}: must be >= 1")
    if args.chunks > args.updates:
        raise common.UsageError(f"--chunks {args.chunks}: at most --updates ({args.updates}), one fit call per chunk")
    if not 2 <= args.alphabet_size <= 26 or not CHOICES <= args.keys <= args.alphabet_size:
        raise common.UsageError(f"--alphabet-size {args.alphabet_size} / --keys {args.keys}: need "
                                f"{CHOICES} <= keys <= alphabet size <= 26")
    if max(args.shots) > args.keys or min(args.shots) < 0 or args.queries > args.keys:
        raise common.UsageError(f"--shots {args.shots} / --queries {args.queries}: each in [0, --keys {args.keys}]")
    if max(args.shots) + 1 > args.pairs:
        raise common.UsageError(f"--pairs {args.pairs}: the context (3 x pairs) must hold {max(args.shots)} shots "
                                "and the question")
    common.select_backend(args.backend)
    from keras_paperzoo.evaluation.run_records import timed

    metrics = timed(run, args)
    metrics["notes"] = args.notes
    output = pathlib.Path(args.output_dir)
    common.write_json(output / METRICS_FILE, metrics)
    plot(metrics, output / "gpt3_icl_curves.png")
    text = report(metrics)
    (output / "gpt3_icl_results.md").write_text(text, encoding="utf-8")
    print(text)
    return metrics


def paper_vs_ours(metrics):
    acc = metrics["accuracy"]
    shots = metrics["budget"]["shots"]
    first, last = str(min(shots)), str(max(shots))

    def curve(name):
        return " / ".join(f"{acc[name][str(k)]['accuracy_percent']:.1f}" for k in shots)

    ks = " / ".join(str(k) for k in shots)
    insertion = PAPER["random_insertion_percent"]
    return [
        ("few-shot gain over zero-shot (points)",
         f"+{insertion['few'] - insertion['zero']:.1f} (175B, random insertion, Table 3.10: verify)",
         f"{acc['trained'][last]['accuracy_percent'] - acc['trained'][first]['accuracy_percent']:+.1f} "
         f"(K = {last} vs {first}, {metrics['budget']['layers']}-layer {metrics['parameters']:,}-parameter GPT, "
         "held-out tasks)"),
        (f"accuracy at K = {ks} (%)", "zero / one / few-shot: " + " / ".join(f"{v}" for v in insertion.values()),
         f"trained {curve('trained')}; random init {curve('random init')}; unigram {curve('unigram')}"),
        ("claims", "accuracy rises with K (Fig. 1.2)",
         "; ".join(f"{name}: {'holds' if c['holds'] else 'not shown'}" for name, c in metrics["claims"].items())),
    ]


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps(main(), indent=2, default=str)[:2000])
