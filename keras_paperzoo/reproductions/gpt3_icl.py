"""GPT-3's in-context learning at a CPU budget: does accuracy rise with the shots K when the answer is not in them?

    paperzoo reproduce gpt3 --budget cpu                  # 3 seeds of a 2 x 64 GPT, 2,000 updates (JAX)
    paperzoo reproduce gpt3 --budget cpu --resume         # continue: seeds already finished are read back
    paperzoo reproduce gpt3 --budget smoke                # seconds, for the tests

The claim (Brown et al. 2020, Fig. 1.2 and Sec. 3.9.2): a language model conditioned on K
solved examples of a task answers more of its questions as K grows, with no gradient step
on the task (Sec. 2: zero-, one- and few-shot). At the smallest scale:

Tasks (`keras_paperzoo.data.icl_tasks`). An episode is a rule with a parameter drawn at
random per episode: a Caesar shift of a letter, x -> x + s mod 26 ("shift"), or an offset c
on both digits of a two-digit number, d -> d + c mod 10 ("digits"), written "input output"
one pair a line ("cf", "3782"; GPT-3 Sec. 2.4's layout: the K shots, then the question). The
question's input is never one of the shots' inputs, and its 4 choices are the answer and
the question under 3 other parameters of the family, none equal to a shot's output: nothing
can be copied from the prompt, so the answer comes from the rule the shots show, or from
nowhere (a "copy a choice the shots show, else guess" baseline is at chance; tested).
Evaluation: fresh episodes of both families, and shift episodes whose shifts s = 2, 7, 12,
17, 22 were never trained on ("shift, held out").

Training. The GPT (`GPTCausalLM`, 2 layers x 64, 4 heads, pre-LN, learned positions, no
dropout) is a plain next-character model on rows of 48 characters, each one episode (shift
60 %, digits 40 %, the trained parameters only, distinct inputs within a row), fresh rows at
every update (batch 32), GPT-1's optimizer (`paper_optimizer`: AdamW, warm-up over 5 % then
cosine) at a peak lr of 3e-3, 2,000 updates; 3 seeds (data, initialisation and evaluation
episodes). Each finished seed is written to --run-dir, so `--resume` continues an
interrupted run, and seeds may run apart (`--seed 1 --seeds 1`) and be gathered by a last
call with `--resume`. Not enough at this budget: the loss stays on the plateau of a model
that knows the format but not the rules (about 2.03 nats/char; reading the rules would give
about 0.97), see the results' notes.

Evaluation (`few_shot_evaluate`, lm-evaluation-harness's protocol, GPT-3 Sec. 2.4): 4-way
multiple choice by the log-likelihood of each choice after the prompt, K = 0, 1, 4, 8 shots
drawn (seeded) from the episode's 8 solved pairs. At K = 0 the prompt is the input alone
and the 4 choices are equally likely a priori: chance is 25 %; one shot determines the
rule. Beside the trained model: the same model before training (random init), a unigram
baseline (each choice scored by its characters' frequency in the training text, blind to
the prompt) and the copy-and-exclude baseline. Accuracy is the mean over seeds with 2
standard errors that cover the seed spread: the larger of the seeds' (2 sd / sqrt(seeds))
and the questions' binomial one; the claims compare K = 8 (and 1) with K = 0 by the same
rule, and require every seed to agree.

Writes gpt3_icl_metrics.json, gpt3_icl_results.md and gpt3_icl_curves.png into --output-dir
(the committed CPU run: applications/results/).
"""

import json
import os
import pathlib
import time

import numpy as np

from keras_paperzoo.data.icl_tasks import (HELD_OUT_SHIFTS, RULE_FAMILIES, RULE_VOCABULARY, copy_and_exclude,
                                           rule_episodes, rule_training_rows)
from keras_paperzoo.reproductions import common

METRICS_FILE = "gpt3_icl_metrics.json"
TRAINED_SHIFTS = tuple(s for s in RULE_FAMILIES["shift"] if s not in HELD_OUT_SHIFTS)
TRAIN_MIX = {"shift": 0.6, "digits": 0.4}
# The evaluation sets: (name, family, parameters). The headline pools the first two (parameters trained, episodes new).
EVALUATION_SETS = (("shift", "shift", TRAINED_SHIFTS), ("digits", "digits", RULE_FAMILIES["digits"]),
                   ("shift, held out", "shift", HELD_OUT_SHIFTS))
HEADLINE = ("shift", "digits")
CHOICES = 4
MODELS = ("trained", "random init", "unigram", "copy-and-exclude")
COLOURS = {"trained": (200, 60, 40), "random init": (150, 150, 150), "unigram": (40, 90, 200),
           "copy-and-exclude": (60, 160, 60)}
# GPT-3 175B on the word-scrambling tasks of Sec. 3.9.2 (Table 3.10), zero- / one- / few-shot accuracy (%).
# Not in the paper notes (shared/papers, Sec. 6.5): quoted from the paper, to verify against arXiv 2005.14165.
PAPER = {
    "source": "Brown et al. 2020, Table 3.10 / Fig. 1.2 (GPT-3 175B, K up to 100 in the few-shot column; "
              "numbers not in the paper notes: verify)",
    "random_insertion_percent": {"zero": 8.26, "one": 45.4, "few": 67.2},  # Fig. 1.2's task (with description)
    "cycle_letters_percent": {"zero": 3.66, "one": 21.7, "few": 37.9},
}


# --- tasks -----------------------------------------------------------------------------------
def tokenizer_for():
    from keras_paperzoo.data.char_text import CharTokenizer

    return CharTokenizer(RULE_VOCABULARY)


def training_families():
    """`rule_training_rows`'s mix: {family: (probability, the trained parameters)}."""
    return {"shift": (TRAIN_MIX["shift"], TRAINED_SHIFTS), "digits": (TRAIN_MIX["digits"], RULE_FAMILIES["digits"])}


def evaluation_examples(rng, episodes, queries, pool=8):
    """(shots, questions) of every evaluation set, `episodes` episodes each; each dict gets its set's name."""
    shots, questions = [], []
    for name, family, parameters in EVALUATION_SETS:
        s, q = rule_episodes(rng, family, parameters, episodes, queries, pool, CHOICES, first_task=len(shots) // pool)
        for example in s + q:
            example["set"] = name
        shots, questions = shots + s, questions + q
    return shots, questions


def few_shot_task(train, evaluation):
    """A `FewShotTask` whose K shots come from the evaluated question's own episode ("task")."""
    from keras_paperzoo.evaluation import FewShotTask

    episodes = {}
    for j, shot in enumerate(train):
        episodes.setdefault(shot["task"], []).append(j)

    class PerTaskShots(FewShotTask):
        def draw_shots(self, index, shots, seed):
            own = episodes.get(self.evaluation[index]["task"], [])
            if shots > len(own):
                raise ValueError(f"shots={shots} is more than the {len(own)} solved pairs of evaluation example "
                                 f"{index}'s episode")
            return [own[j] for j in np.random.default_rng((seed, index)).choice(len(own), shots, replace=False)]

    return PerTaskShots(train, evaluation, choices="choices", target_delimiter="", fewshot_delimiter="\n")


# --- evaluation ------------------------------------------------------------------------------
def model_correct(lm, tokenizer, task, shots, seed, use_cache=None):
    from keras_paperzoo.evaluation import few_shot_evaluate

    return {k: [bool(r["correct"]) for r in few_shot_evaluate(lm, tokenizer, task, shots=k, seed=seed,
                                                              use_cache=use_cache)["records"]] for k in shots}


def unigram_correct(train_ids, tokenizer, task, shots):
    """The training text's character frequencies (add-one) pick a choice; the prompt is never read."""
    counts = np.bincount(np.asarray(train_ids).ravel(), minlength=tokenizer.vocabulary_size()) + 1.0
    log_p = np.log(counts / counts.sum())
    correct = [int(np.argmax([log_p[tokenizer.encode(c)].sum() for c in task.choices_of(e)])) == task.target_index(e)
               for e in task.evaluation]
    return {k: list(correct) for k in shots}


def seed_accuracy(flags, sets, names):
    """Accuracy (%) of the questions whose set is in `names`."""
    chosen = [bool(f) for f, s in zip(flags, sets) if s in names]
    return 100.0 * float(np.mean(chosen))


def spread(per_seed, n):
    """(mean, 2 s.e.) of per-seed accuracies (%) over n questions each: the larger of the seeds' 2 sd / sqrt(seeds)
    and the pooled questions' binomial 2 s.e., so the bar covers the seed spread and the item noise."""
    x = np.asarray(per_seed, "float64")
    p = float(x.mean()) / 100.0
    binomial = 200.0 * np.sqrt(max(p * (1 - p), 1e-12) / (len(x) * n))
    seeds = 2.0 * float(np.std(x, ddof=1)) / np.sqrt(len(x)) if len(x) > 1 else 0.0
    return round(float(x.mean()), 2), round(max(seeds, float(binomial)), 2)


def summarize(runs):
    """{model: {"K": {"accuracy_percent", "two_standard_errors_points", "per_seed_percent", "<set>_percent"}}}."""
    sets = runs[0]["sets"]
    n = sum(s in HEADLINE for s in sets)
    out = {}
    for model in MODELS:
        out[model] = {}
        for k in runs[0]["correct"][model]:
            per_seed = [seed_accuracy(r["correct"][model][k], r["sets"], HEADLINE) for r in runs]
            mean, two_se = spread(per_seed, n)
            row = {"accuracy_percent": mean, "two_standard_errors_points": two_se,
                   "per_seed_percent": [round(a, 2) for a in per_seed]}
            for name, _, _ in EVALUATION_SETS:
                values = [seed_accuracy(r["correct"][model][k], r["sets"], (name,)) for r in runs]
                m = sum(s == name for s in sets)
                row[f"{name}_percent"], row[f"{name}_two_standard_errors_points"] = spread(values, m)
            out[model][str(k)] = row
    return out


def above(better, worse, n):
    """Is per-seed accuracy `better` above `worse` (lists, %, n questions each)? The mean difference beyond its
    2 s.e. (`spread`'s rule, on the per-seed differences) and every seed's difference above 0."""
    from keras_paperzoo.evaluation.claims import two_standard_errors

    differences = np.asarray(better, "float64") - np.asarray(worse, "float64")
    binomial = two_standard_errors(float(np.mean(better)), float(np.mean(worse)), len(differences) * n)
    seeds = 2.0 * float(np.std(differences, ddof=1)) / np.sqrt(len(differences)) if len(differences) > 1 else 0.0
    margin = max(binomial, seeds)
    mean = float(differences.mean())
    return {"holds": bool(mean > margin and differences.min() > 0), "difference_points": round(mean, 2),
            "two_standard_errors_points": round(margin, 2)}


def flat(first, last, n):
    """Is `last` within 2 s.e. of `first` (per-seed lists, %)? `above`'s numbers, `holds` when not above either way."""
    claim = above(last, first, n)
    return {**claim, "holds": bool(abs(claim["difference_points"]) <= claim["two_standard_errors_points"])}


def at_chance(per_seed, n):
    """Is the mean of per-seed accuracies (%) within 2 binomial s.e. of chance (100 / CHOICES)?"""
    mean, chance = float(np.mean(per_seed)), 100.0 / CHOICES
    margin = 200.0 * np.sqrt(chance / 100 * (1 - chance / 100) / (len(per_seed) * n))
    return {"holds": bool(abs(mean - chance) <= margin), "difference_points": round(mean - chance, 2),
            "two_standard_errors_points": round(float(margin), 2)}


def claims(results, n, held_out_n):
    shots = sorted(results["trained"], key=int)
    first, last = shots[0], shots[-1]
    one = next((k for k in shots if int(k) == 1), last)
    seeds = {model: {k: results[model][k]["per_seed_percent"] for k in shots} for model in MODELS}
    held = [results["trained"][k]["shift, held out_percent"] for k in (first, last)]
    out = {
        f"trained: accuracy at K = {last} above K = {first}": above(seeds["trained"][last], seeds["trained"][first], n),
        f"trained: accuracy at K = {one} above K = {first}": above(seeds["trained"][one], seeds["trained"][first], n),
        f"trained above random init at K = {last}": above(seeds["trained"][last], seeds["random init"][last], n),
        f"random init: flat (K = {last} within 2 s.e. of K = {first})":
            flat(seeds["random init"][first], seeds["random init"][last], n),
        f"unigram: flat (K = {last} within 2 s.e. of K = {first})":
            flat(seeds["unigram"][first], seeds["unigram"][last], n),
    }
    for k in shots:
        out[f"copy-and-exclude at chance at K = {k}"] = at_chance(seeds["copy-and-exclude"][k], n)
    # The held-out shifts: the mean over seeds only (their per-seed values are in the table).
    from keras_paperzoo.evaluation.claims import accuracy_above

    out[f"trained, held-out shifts: K = {last} above K = {first} (pooled seeds)"] = accuracy_above(
        held[1], held[0], held_out_n * len(seeds["trained"][first]))
    return out


# --- the run ---------------------------------------------------------------------------------
def build_lm(args, seed, tokenizer):
    import keras

    from keras_paperzoo.models import GPTBackbone, GPTCausalLM

    keras.utils.set_random_seed(seed)
    backbone = GPTBackbone(vocabulary_size=tokenizer.vocabulary_size(), num_layers=args.layers,
                           hidden_dim=args.width, num_heads=args.heads, intermediate_dim=4 * args.width,
                           max_sequence_length=args.length, dropout=0.0)
    return GPTCausalLM(backbone, tokenizer=tokenizer)


def run_seed(args, seed):
    """Train one seed, evaluate the four models on its evaluation episodes; returns per-question flags."""
    tokenizer = tokenizer_for()
    rng = np.random.default_rng(seed)
    ids = rule_training_rows(args.updates * args.batch_size, rng, training_families(), args.length)
    train, evaluation = evaluation_examples(np.random.default_rng((seed, 1)), args.tasks, args.queries,
                                            max(args.shots))
    task = few_shot_task(train, evaluation)
    lm = build_lm(args, seed, tokenizer)
    use_cache = None if args.scoring == "cache" else False
    start = time.perf_counter()
    correct = {"random init": model_correct(lm, tokenizer, task, args.shots, seed, use_cache),
               "unigram": unigram_correct(ids, tokenizer, task, args.shots),
               "copy-and-exclude": {k: copy_and_exclude(task, k, seed) for k in args.shots}}
    evaluate_seconds = time.perf_counter() - start
    warmup = max(1, int(args.warmup * args.updates))
    lm.compile(optimizer=lm.paper_optimizer(total_steps=args.updates, warmup_steps=warmup,
                                            peak_learning_rate=args.learning_rate))
    start, loss = time.perf_counter(), []
    for chunk in np.array_split(np.arange(len(ids)), args.chunks):
        history = lm.fit(ids[chunk, :-1], ids[chunk, 1:], batch_size=args.batch_size, epochs=1, shuffle=False,
                         verbose=args.verbose)
        loss.append(round(float(history.history["loss"][-1]), 4))
        print(f"   seed {seed}, updates {(chunk[-1] + 1) // args.batch_size}: loss {loss[-1]} nats/char", flush=True)
    train_seconds = time.perf_counter() - start
    start = time.perf_counter()
    correct["trained"] = model_correct(lm, tokenizer, task, args.shots, seed, use_cache)
    evaluate_seconds += time.perf_counter() - start
    examples = {}
    for index, example in enumerate(evaluation):
        examples.setdefault(example["set"], task.prompt(index, max(args.shots), seed) + " -> "
                            + task.target_text(example) + f"   (choices {', '.join(example['choices'])})")
    return {"seed": seed, "correct": {m: {str(k): v for k, v in correct[m].items()} for m in MODELS},
            "sets": [e["set"] for e in evaluation], "loss_per_chunk": loss, "warmup_steps": warmup,
            "parameters": int(lm.count_params()), "example_prompts": examples,
            "train_seconds": round(train_seconds, 1), "evaluate_seconds": round(evaluate_seconds, 1)}


def budget_of(args):
    import keras

    return {"backend": keras.backend.backend(), "updates": args.updates, "batch_size": args.batch_size,
            "layers": args.layers, "width": args.width, "heads": args.heads, "learning_rate": args.learning_rate,
            "warmup": args.warmup, "sequence_length": args.length, "episodes_per_set": args.tasks,
            "queries_per_episode": args.queries, "shots": list(args.shots),
            "seeds": list(range(args.seed, args.seed + args.seeds)), "cpu_cores": os.cpu_count()}


def same_run(budget):
    """What a seed's record must match to be read back: the budget but the seed list (seeds may run apart)."""
    return {k: v for k, v in budget.items() if k != "seeds"}


def run(args):
    """Every seed (read back from --run-dir with --resume when it finished before), then the summary."""
    import platform

    budget = budget_of(args)
    run_dir = pathlib.Path(args.run_dir or pathlib.Path(args.output_dir) / "gpt3_icl_run")
    runs = []
    for seed in budget["seeds"]:
        path = run_dir / f"seed_{seed}.json"
        saved = json.loads(path.read_text()) if args.resume and path.is_file() else None
        if saved and saved.get("budget") == same_run(budget):
            print(f"   seed {seed}: read back from {path}", flush=True)
            runs.append(saved["run"])
            continue
        runs.append(run_seed(args, seed))
        common.write_json(path, {"budget": same_run(budget), "run": runs[-1]})
    results = summarize(runs)
    n = sum(s in HEADLINE for s in runs[0]["sets"])
    held_out_n = sum(s == "shift, held out" for s in runs[0]["sets"])
    return {
        "paper": PAPER,
        "budget": budget,
        "device": f"{platform.machine()} CPU, {os.cpu_count()} cores (shared), {platform.system()}",
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "parameters": runs[0]["parameters"],
        "warmup_steps": runs[0]["warmup_steps"],
        "questions_per_seed": {"headline (shift + digits)": n, "shift, held out": held_out_n},
        "training_mix": TRAIN_MIX,
        "trained_shifts": list(TRAINED_SHIFTS),
        "held_out_shifts": list(HELD_OUT_SHIFTS),
        "example_prompts_k8": runs[0]["example_prompts"],
        "loss_per_chunk": {str(r["seed"]): r["loss_per_chunk"] for r in runs},
        "accuracy": results,
        "claims": claims(results, n, held_out_n),
        "train_seconds": round(sum(r["train_seconds"] for r in runs), 1),
        "evaluate_seconds": round(sum(r["evaluate_seconds"] for r in runs), 1),
    }


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
    held = [metrics["accuracy"]["trained"][str(k)]["shift, held out_percent"] for k in shots]
    curves.append(("trained, held-out shifts", (200, 140, 40), shots, held, "line"))
    common.line_plot([("rule episodes: accuracy (+- 2 s.e., seeds) vs shots K, GPT-3 Fig. 1.2 in small", curves)],
                     path, x_range, y_range, "shots K", "accuracy (%)", width, height, shots)
    image = Image.open(path)
    draw = ImageDraw.Draw(image)
    x0, x1, y0, y1 = 50, width - 25, 30, height - 40  # line_plot's one panel

    def to_xy(x, y):
        return (x0 + (x - x_range[0]) / (x_range[1] - x_range[0]) * (x1 - x0),
                y1 - (min(max(y, y_range[0]), y_range[1]) - y_range[0]) / (y_range[1] - y_range[0]) * (y1 - y0))

    for i, (colour, k, accuracy, two_se) in enumerate(bars):
        (x, top), (_, bottom) = to_xy(k, accuracy + two_se), to_xy(k, accuracy - two_se)
        x += 4 * (i // len(shots)) - 6  # the models side by side
        draw.line([(x, top), (x, bottom)], fill=colour, width=1)
        draw.line([(x - 3, top), (x + 3, top)], fill=colour)
        draw.line([(x - 3, bottom), (x + 3, bottom)], fill=colour)
    image.save(path)
    return path


def report(metrics):
    b = metrics["budget"]
    shots = b["shots"]
    q = metrics["questions_per_seed"]
    lines = [
        "# GPT-3 in-context learning, in small: rules read from the shots, never answers copied from them",
        "",
        f"A {b['layers']}-layer x {b['width']} GPT ({b['heads']} heads, {metrics['parameters']:,} parameters) trained "
        f"for {b['updates']:,} updates of batch {b['batch_size']} (peak lr {b['learning_rate']:g}, warm-up "
        f"{metrics['warmup_steps']}) on rows of {b['sequence_length']} characters, each one rule episode (Caesar "
        f"shifts of letters {int(100 * metrics['training_mix']['shift'])} %, digit offsets "
        f"{int(100 * metrics['training_mix']['digits'])} %; shifts {', '.join(map(str, metrics['held_out_shifts']))} "
        f"never trained on), seeds {', '.join(map(str, b['seeds']))}. Each seed is evaluated on its own "
        f"{q['headline (shift + digits)']} questions of new episodes (shift and digits, {b['episodes_per_set']} "
        f"episodes each, {b['queries_per_episode']} questions an episode) and {q['shift, held out']} of held-out "
        f"shifts, {CHOICES}-way multiple choice by log-likelihood (`few_shot_evaluate`). The question's input is "
        "never among the shots and no choice is a shot's output. Device: "
        f"{metrics['device']}, {b['backend']} backend, {metrics['date']}; training "
        f"{metrics['train_seconds'] / 60:.1f} min, evaluation {metrics['evaluate_seconds'] / 60:.1f} min (all "
        f"seeds); wall {metrics.get('wall_seconds', 0) / 60:.1f} min, load average "
        f"{metrics.get('load_average_1_5_15_min')}.",
        "",
        "Prompts at K = 8 (the answer after the arrow, then the 4 choices):",
        "",
        "```",
        *(f"[{name}]\n{text}" for name, text in metrics["example_prompts_k8"].items()),
        "```",
        "",
        "| accuracy (%), mean of seeds +- 2 s.e. (seeds) | " + " | ".join(f"K = {k}" for k in shots) + " |",
        "|---|" + "---|" * len(shots),
    ]
    for name in MODELS:
        rows = [metrics["accuracy"][name][str(k)] for k in shots]
        lines.append(f"| {name} | " + " | ".join(f"{r['accuracy_percent']:.1f} +- {r['two_standard_errors_points']:.1f}"
                                                 for r in rows) + " |")
        if name == "trained":
            lines.append("| trained, per seed | " + " | ".join(" / ".join(f"{a:.1f}" for a in r["per_seed_percent"])
                                                            for r in rows) + " |")
            for set_name, _, _ in EVALUATION_SETS:
                lines.append(f"| trained, {set_name} | " + " | ".join(
                    f"{r[f'{set_name}_percent']:.1f} +- {r[f'{set_name}_two_standard_errors_points']:.1f}"
                    for r in rows) + " |")
    lines += ["",
              f"Chance is {100 / CHOICES:.0f} %. The rows above pool shift and digits (parameters trained, episodes "
              "new); \"shift, held out\" are shifts no training row used. The 2 s.e. is the larger of the seeds' "
              "(2 sd / sqrt(seeds)) and the pooled questions' binomial one. copy-and-exclude: pick a choice the "
              "shots show as an output, else guess. Training loss (nats/char) at each chunk's end, per seed: "
              + "; ".join(f"seed {s}: {', '.join(str(v) for v in loss)}" for s, loss in metrics["loss_per_chunk"].items())
              + ". Curves: gpt3_icl_curves.png.",
              "",
              f"The paper (not this scale): {PAPER['source']}: random insertion "
              + " / ".join(f"{v} %" for v in PAPER["random_insertion_percent"].values())
              + " zero- / one- / few-shot; cycle letters "
              + " / ".join(f"{v} %" for v in PAPER["cycle_letters_percent"].values()) + ".",
              "",
              "Claims (holds = the mean difference beyond its 2 s.e. and every seed the same way; flat = within them):",
              common.claims_text(metrics["claims"])]
    if metrics.get("notes"):
        lines += ["", "Notes:", *(f"- {note}" for note in metrics["notes"])]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = common.ArgumentParser(__doc__.splitlines()[0], backend="jax")
    parser.add_argument("--seeds", type=int, default=3, help="training seeds: --seed, --seed + 1, ...")
    parser.add_argument("--updates", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--learning-rate", type=float, default=3e-3)
    parser.add_argument("--warmup", type=float, default=0.05, help="warm-up, a fraction of the updates")
    parser.add_argument("--length", type=int, default=48, help="characters per training row (the context)")
    parser.add_argument("--tasks", type=int, default=30, help="evaluation episodes per set (shift, digits, held out)")
    parser.add_argument("--queries", type=int, default=4, help="questions per evaluation episode")
    parser.add_argument("--shots", default="0,1,4,8")
    parser.add_argument("--chunks", type=int, default=10, help="fit calls per seed, each reporting the loss")
    parser.add_argument("--scoring", default="cache", choices=("cache", "rows"),
                        help="few_shot_evaluate: the prompt once into the key/value cache, or batched rows (the "
                        "same log-likelihoods; rows is faster on eager torch)")
    parser.add_argument("--run-dir", default=None, help="per-seed results (default: --output-dir/gpt3_icl_run)")
    parser.add_argument("--resume", action="store_true", help="read back the seeds --run-dir holds for this budget")
    parser.add_argument("--notes", action="append", default=[], help="a note for the results (repeatable)")
    args = parser.parse_args(argv)
    args.shots = common.comma_list(args.shots, "--shots", kind=int)
    for flag in ("seeds", "updates", "batch_size", "layers", "width", "heads", "tasks", "queries", "chunks"):
        if getattr(args, flag) < 1:
            raise common.UsageError(f"--{flag.replace('_', '-')} {getattr(args, flag)}: must be >= 1")
    if args.chunks > args.updates:
        raise common.UsageError(f"--chunks {args.chunks}: at most --updates ({args.updates}), one fit call per chunk")
    if min(args.shots) < 0 or max(args.shots) > 16 or 0 not in args.shots:
        raise common.UsageError(f"--shots {args.shots}: each in [0, 16], with 0 (the zero-shot baseline)")
    if args.queries > 26 - max(args.shots):
        raise common.UsageError(f"--queries {args.queries}: the 26 letters hold at most {26 - max(args.shots)} "
                                f"questions beside {max(args.shots)} shots")
    if args.length < 5 * max(args.shots) + 4:
        raise common.UsageError(f"--length {args.length}: the context must hold {max(args.shots)} digit shots and the "
                                f"question, {5 * max(args.shots) + 4} characters")
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
    acc = metrics["accuracy"]["trained"]
    shots = metrics["budget"]["shots"]
    first, last = str(min(shots)), str(max(shots))

    def curve(name):
        return " / ".join(f"{metrics['accuracy'][name][str(k)]['accuracy_percent']:.1f}" for k in shots)

    ks = " / ".join(str(k) for k in shots)
    insertion = PAPER["random_insertion_percent"]
    return [
        ("few-shot gain over zero-shot (points)",
         f"+{insertion['few'] - insertion['zero']:.1f} (175B, random insertion, Table 3.10: verify)",
         f"{acc[last]['accuracy_percent'] - acc[first]['accuracy_percent']:+.1f} (K = {last} vs {first}, "
         f"{metrics['budget']['layers']}-layer {metrics['parameters']:,}-parameter GPT, rule episodes, "
         f"{len(metrics['budget']['seeds'])} seeds)"),
        (f"accuracy at K = {ks} (%)", "zero / one / few-shot: " + " / ".join(f"{v}" for v in insertion.values()),
         f"trained {curve('trained')}; random init {curve('random init')}; unigram {curve('unigram')}; "
         f"copy-and-exclude {curve('copy-and-exclude')}"),
        ("claims", "accuracy rises with K (Fig. 1.2)",
         "; ".join(f"{name}: {'holds' if c['holds'] else 'not shown'}" for name, c in metrics["claims"].items())),
    ]


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps(main(), indent=2, default=str)[:2000])
