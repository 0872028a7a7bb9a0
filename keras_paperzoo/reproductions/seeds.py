"""One reproduction at several training seeds, and the spread over seeds (`paperzoo reproduce PAPER --seeds N`).

A claim that compares arms (residual vs plain, m = 0.999 vs m = 0, t = 0.1 vs t = 1.0) can
hold at one seed by the luck of that seed's initialisation and data order; the error bar of
a single run covers only the test items. `run_seeds` trains the reproduction at seeds
S, S + 1, ..., S + N - 1 (S: `--seed`, default 0), each in its own process and folder
(OUTPUT/seed-S, so each seed runs exactly as `--seed S` alone would, and an interrupted
command continues from the seeds already done), then `combine` writes, for each metrics
file the seeds share:

- each claim's difference at every seed, its mean, and the standard error of that mean
  over seeds (s.d. / sqrt(N), ddof 1): "above over seeds" when the mean exceeds 2 s.e.;
  how many seeds pass their own test (2 s.e. of the test items);
- each run's numbers (accuracies, errors, losses) at every seed, with mean and s.e.;
- the budget the seeds share (data, epochs, batch, updates per run), so that the file says
  what was trained;

into OUTPUT/PAPER_seeds_metrics.json and PAPER_seeds_results.md.

Example (the file a README row cites):

    paperzoo reproduce simclr --seeds 3 --output-dir runs/simclr-seeds
"""

import datetime
import json
import math
import pathlib
import shlex
import subprocess
import sys

# A run's numbers that are results (a key holding one of these), unless a word of the key is bookkeeping.
_RESULTS = ("percent", "accuracy", "error", "loss", "miou", "nmi", "bleu", "perplexity", "bound", "oscillation",
            "parzen", "nats", "deviation")
_NOT_RESULTS = ("seconds", "load", "checksum", "parameters", "steps", "updates", "seed", "epochs", "se")
# Where a claim keeps the difference it tests, in order of preference.
_DIFFERENCES = ("difference_points", "difference")
# Where a metrics file keeps its runs (arms), by reproduction.
_RUNS = ("runs", "nets", "methods")


def seed_folder(output_dir, seed):
    return pathlib.Path(output_dir) / f"seed-{seed}"


def seed_command(name, budget, seed, output_dir, extra=(), backend=None):
    """The `paperzoo reproduce` command of one seed: the same arguments, its own folder, `--seed seed` last."""
    return [sys.executable, "-m", "keras_paperzoo", "reproduce", name, "--budget", budget,
            "--output-dir", str(seed_folder(output_dir, seed)), *(["--backend", backend] if backend else []),
            *extra, "--seed", str(seed)]


def split_seed(extra):
    """(the first seed, `extra` without --seed): `--seeds N` counts from the last --seed given (default 0)."""
    extra, first, rest = list(extra), 0, []
    i = 0
    while i < len(extra):
        if extra[i] == "--seed" and i + 1 < len(extra):
            first, i = extra[i + 1], i + 2
            continue
        if extra[i].startswith("--seed="):
            first = extra[i].split("=", 1)[1]
        else:
            rest.append(extra[i])
        i += 1
    try:
        return int(first), rest
    except ValueError:
        raise ValueError(f"--seed {first!r} is not an integer; --seeds N runs seeds --seed, --seed + 1, ...") from None


def run_seeds(name, budget, seeds, extra=(), output_dir=None, backend=None, run=None):
    """Train `seeds` seeds of reproduction `name` (one process each, a seed already done is kept), then `combine`.

    `run(command) -> CompletedProcess` starts one seed (default `subprocess.run`).
    """
    run = run or subprocess.run
    if not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"--seeds {seeds!r} must be a whole number >= 1 (the training seeds to run)")
    output_dir = pathlib.Path(output_dir or pathlib.Path("runs") / "reproduce" / f"{name}-{budget}-seeds")
    first, extra = split_seed(extra)
    seed_list = list(range(first, first + seeds))
    for seed in seed_list:
        if (seed_folder(output_dir, seed) / f"reproduce_{name}.json").exists():
            print(f"== seed {seed}: kept from {seed_folder(output_dir, seed)} (delete the folder to retrain)",
                  flush=True)
            continue
        command = seed_command(name, budget, seed, output_dir, extra, backend)
        print(f"== seed {seed}: {' '.join(command[1:])}", flush=True)
        code = run(command).returncode
        if code != 0:
            raise RuntimeError(f"seed {seed} of `paperzoo reproduce {name}` stopped with exit code {code} (its "
                               "output is above); run the same command again to continue from the seeds done")
    command = shlex.join(["paperzoo", "reproduce", name, "--budget", budget, *extra, "--seeds", str(seeds)])
    combined = combine(name, output_dir, seed_list, command)
    print(report(combined))
    return combined


# --- the spread over seeds ---------------------------------------------------------------------
def spread(values):
    """{"per_seed", "mean", "se"}: the standard error of the mean over seeds (None for one seed)."""
    n = len(values)
    mean = sum(values) / n
    se = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n) if n > 1 else None
    return {"per_seed": values, "mean": _round(mean), "se": None if se is None else _round(se)}


def _round(value):
    return float(f"{value:.4g}") if abs(value) < 1 else round(value, 4)


def combine_claims(per_seed):
    """Each claim that every seed states: its difference over seeds, and how many seeds pass their own test."""
    names = [n for n in per_seed[0].get("claims", {}) if all(n in m.get("claims", {}) for m in per_seed)]
    claims = {}
    for name in names:
        at = [m["claims"][name] for m in per_seed]
        if not all(isinstance(c, dict) and "holds" in c for c in at):
            continue
        claim = {"holds_at_seeds": sum(bool(c["holds"]) for c in at), "seeds": len(at)}
        key = next((k for k in _DIFFERENCES if all(_is_number(c.get(k)) for c in at)), None)
        if key:
            claim.update({"difference": key, **spread([float(c[key]) for c in at])})
            claim["above_over_seeds"] = claim["se"] is not None and claim["mean"] > 2 * claim["se"]
        if all(_is_number(c.get("ratio")) for c in at):  # better / worse, where the claim is a ratio (oscillation)
            claim["ratio"] = spread([float(c["ratio"]) for c in at])
        claims[name] = claim
    return claims


def combine_runs(per_seed):
    """Each run (arm) that every seed has: its result numbers over seeds."""
    where = next((k for k in _RUNS if all(isinstance(m.get(k), dict) for m in per_seed)), None)
    if where is None:
        return {}
    runs = {}
    for run in per_seed[0][where]:
        at = [m[where].get(run) for m in per_seed]
        if not all(isinstance(r, dict) for r in at):
            continue
        flat = [_flat(r) for r in at]
        numbers = {key: spread([float(f[key]) for f in flat]) for key in flat[0]
                   if _is_result(key) and all(_is_number(f.get(key)) for f in flat)}
        if numbers:
            runs[run] = numbers
    return runs


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_result(key):
    """A run's number that is a result: its key names one ("knn_h_percent"), and no word of it is bookkeeping."""
    words = key.replace(".", "_").split("_")
    return any(word in key for word in _RESULTS) and not any(word in words for word in _NOT_RESULTS)


def _flat(run):
    """A run's numbers, one level of nesting as "outer.inner" (InstDisc's objective_loss.oscillation)."""
    flat = {}
    for key, value in run.items():
        if isinstance(value, dict):
            flat.update({f"{key}.{inner}": v for inner, v in value.items()})
        else:
            flat[key] = value
    return flat


# Budget entries that differ by seed or machine by design: not part of the shared budget.
_PER_SEED = ("seed", "seeds", "device", "load_average_1_5_15_min")


def shared_budget(per_seed):
    """The `budget` entries every seed has with the same value, and `updates` (per run) where epochs x steps per
    epoch give it."""
    budgets = [m.get("budget") if isinstance(m.get("budget"), dict) else {} for m in per_seed]
    budget = {k: v for k, v in budgets[0].items()
              if k not in _PER_SEED and all(b.get(k) == v for b in budgets[1:])}
    if _is_number(budget.get("epochs")) and _is_number(budget.get("steps_per_epoch")) and "updates" not in budget:
        budget["updates"] = budget["epochs"] * budget["steps_per_epoch"]
    return budget


def combine(name, output_dir, seed_list, command):
    """PAPER_seeds_metrics.json / _results.md in `output_dir` from the metrics files that every seed folder holds."""
    output_dir = pathlib.Path(output_dir)
    folders = [seed_folder(output_dir, s) for s in seed_list]
    stems = sorted(p.name for p in folders[0].glob("*_metrics.json")
                   if all((f / p.name).is_file() for f in folders[1:]))
    if not stems:
        raise FileNotFoundError(f"no metrics file is in every seed folder of {output_dir} (seeds {seed_list})")
    files = {}
    for stem in stems:
        per_seed = [json.loads((f / stem).read_text()) for f in folders]
        files[stem.removesuffix("_metrics.json")] = {"budget": shared_budget(per_seed),
                                                     "claims": combine_claims(per_seed),
                                                     "runs": combine_runs(per_seed)}
    summaries = [folder / f"reproduce_{name}.json" for folder in folders]
    devices = sorted({json.loads(p.read_text()).get("device", "?") for p in summaries if p.is_file()})
    combined = {"reproduction": name, "command": command, "seeds": seed_list,
                "date": datetime.date.today().isoformat(), "devices": devices,
                "rule": "per seed: the claim's difference; over seeds: mean and s.e. = s.d. / sqrt(N) (ddof 1); "
                        "above over seeds: mean > 2 s.e.; holds_at_seeds: seeds passing their own test "
                        "(2 s.e. of the test items)",
                "files": files}
    from keras_paperzoo.reproductions.common import write_json

    write_json(output_dir / f"{name}_seeds_metrics.json", combined)
    (output_dir / f"{name}_seeds_results.md").write_text(report(combined), encoding="utf-8")
    return combined


def _number(value, sign=""):
    """Two decimals, or three significant digits for a number under 1 (an oscillation of 0.0074)."""
    if value is None:
        return "-"
    return f"{value:{sign}.3g}" if 0 < abs(value) < 1 else f"{value:{sign}.2f}"


def _budget_value(value):
    """A budget entry as text: a whole number with thousands commas, a list as the paper writes widths (24-64-96),
    anything else as is."""
    if _is_number(value) and float(value).is_integer():
        return f"{int(value):,}"
    if isinstance(value, (list, tuple)):
        return "-".join(map(str, value))
    return str(value)


def _per_seed(spread_, sign=""):
    return " / ".join(_number(v, sign) for v in spread_["per_seed"])


def report(combined):
    """The Markdown of `combine`'s result: one table of claims and one of runs per metrics file."""
    seeds = combined["seeds"]
    lines = [f"# `{combined['command']}`: {len(seeds)} training seeds ({', '.join(map(str, seeds))})", "",
             f"{combined['date']}; {'; '.join(combined['devices'])}. Each seed in its own folder (seed-S) and process; "
             f"{combined['rule']}.", ""]
    for stem, data in combined["files"].items():
        lines += [f"## {stem}", ""]
        if data.get("budget"):
            lines += ["Budget (every seed): " + ", ".join(f"{k} {_budget_value(v)}" for k, v in data["budget"].items()),
                      ""]
        if data["claims"]:
            lines += ["| claim | difference per seed | mean ± s.e. over seeds | above over seeds | seeds passing |",
                      "|---|---|---|---|---|"]
            for name, c in data["claims"].items():
                if "mean" in c:
                    lines.append(f"| {name} | {_per_seed(c, '+')} | {_number(c['mean'], '+')} ± {_number(c['se'])} | "
                                 f"{'yes' if c['above_over_seeds'] else 'no'} | {c['holds_at_seeds']}/{c['seeds']} |")
                else:
                    lines.append(f"| {name} | - | - | - | {c['holds_at_seeds']}/{c['seeds']} |")
                if "ratio" in c:
                    r = c["ratio"]
                    lines.append(f"| {name} (ratio) | {_per_seed(r)} | {_number(r['mean'])} ± {_number(r['se'])} | | |")
            lines.append("")
        if data["runs"]:
            lines += ["| run | result | per seed | mean ± s.e. |", "|---|---|---|---|"]
            for run, numbers in data["runs"].items():
                for key, s in numbers.items():
                    lines.append(f"| {run} | {key} | {_per_seed(s)} | {_number(s['mean'])} ± {_number(s['se'])} |")
            lines.append("")
    return "\n".join(lines)
