"""The aggregate: runs/*.json -> table.json and table.md (mean +- s.e. over seeds, the test against random init).

For each row and metric (kNN, linear probe): the mean over the seeds done and its standard
error s.e. = s / sqrt(n) (s the sample standard deviation, ddof = 1). "Beats random init"
is a paired test over seeds: d_s = (trained at seed s) - (the same encoder at its
initialisation, seed s), and the row beats random init when mean(d) > 2 s.e.(d) ("with 2
s.e. to spare"); with one seed there is no s.e. and the answer is "n/a". For the rows on the
shared ResNet the initialisation at seed s is the "random init" row's encoder at seed s;
CMC, CPC, MAE, BEiT and iGPT are tested against their own encoder at initialisation (their
"init" columns). A row that does not beat random init shows why: the reason in
RUN_DIR/notes.json (written by hand after looking at the run) or, for known causes,
`KNOWN_REASONS`.
"""

import json
import math
import pathlib

from benchmarks.ssl_table import methods, references

METRICS = (("knn", "kNN"), ("probe", "linear probe"))
KNOWN_REASONS = {
    "cmc": "grey digits (R = G = B): CMC's ab view is a constant image, so its two views share nothing to learn "
           "(recipes/cmc.py, grey_images_note)",
}


def mean_se(values):
    """(mean, standard error) of `values`; the s.e. is None below two values."""
    n = len(values)
    if n == 0:
        return None, None
    mean = sum(values) / n
    if n < 2:
        return mean, None
    variance = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(variance / n)


def load_runs(run_dir):
    """{row: [record, ...] sorted by seed} of the finished runs in RUN_DIR/runs/."""
    out = {}
    for path in sorted((pathlib.Path(run_dir) / "runs").glob("*.json")):
        record = json.loads(path.read_text())
        out.setdefault(record["row"], []).append(record)
    return {row: sorted(records, key=lambda r: r["seed"]) for row, records in out.items()}


def summarize(records):
    """One row of table.json from its runs."""
    row = {"seeds": [r["seed"] for r in records], "label": records[0]["label"], "encoder": records[0]["encoder"],
           "updates": records[0]["updates"], "encoder_parameters": records[0]["encoder_parameters"]}
    for key, _ in METRICS:
        trained = [r[f"{key}_percent"] for r in records]
        at_init = [r[f"{key}_percent_at_init"] for r in records]
        row[f"{key}_mean"], row[f"{key}_se"] = mean_se(trained)
        row[f"{key}_at_init_mean"], row[f"{key}_at_init_se"] = mean_se(at_init)
        gain, gain_se = mean_se([t - i for t, i in zip(trained, at_init)])
        row[f"{key}_gain_mean"], row[f"{key}_gain_se"] = gain, gain_se
        row[f"{key}_beats_random_init"] = None if gain_se is None else bool(gain > 2 * gain_se)
    row["minutes_mean"], row["minutes_se"] = mean_se([r["minutes"] for r in records])
    row["cpu_minutes_mean"], _ = mean_se([r.get("cpu_minutes", r["minutes"]) for r in records])
    losses = [r["final_loss"] for r in records if r.get("final_loss") is not None]
    row["final_loss_mean"], _ = mean_se(losses)
    row["lightly_cifar10_knn_200_800_epochs"], row["solo_learn_cifar10_linear"] = references.cells(records[0]["row"])
    return row


def aggregate(run_dir):
    """Write RUN_DIR/table.json and table.md from the finished runs; return table.json's dict."""
    run_dir = pathlib.Path(run_dir)
    runs = load_runs(run_dir)
    notes_path = run_dir / "notes.json"
    notes = json.loads(notes_path.read_text()) if notes_path.exists() else {}
    budget_path = run_dir / "budget.json"
    budget = json.loads(budget_path.read_text()) if budget_path.exists() else {}
    rows = {row: summarize(runs[row]) for row in methods.ROWS if row in runs}
    for name, row in rows.items():
        if name not in (methods.RANDOM_INIT,) and row["knn_beats_random_init"] is False:
            row["why_not"] = notes.get(name) or KNOWN_REASONS.get(name) or "not above its initialisation at this budget"
    table = {"budget": budget, "rows": rows, "references": references.SETTINGS,
             "missing": [f"{row} (seeds {sorted(set(budget.get('seeds', [])) - set(rows.get(row, {}).get('seeds', [])))})"
                         for row in methods.ROWS if budget.get("seeds") and
                         set(rows.get(row, {}).get("seeds", [])) != set(budget["seeds"])]}
    table["failed"] = sorted(path.stem for path in (run_dir / "runs").glob("*.error"))
    (run_dir / "table.json").write_text(json.dumps(table, indent=2, sort_keys=True) + "\n")
    (run_dir / "table.md").write_text(markdown(table))
    return table


def _pm(mean, se, digits=1):
    if mean is None:
        return "-"
    return f"{mean:.{digits}f}" if se is None else f"{mean:.{digits}f} +- {se:.{digits}f}"


def _beats(row, key):
    value = row.get(f"{key}_beats_random_init")
    gain = _pm(row.get(f"{key}_gain_mean"), row.get(f"{key}_gain_se"))
    return f"n/a ({gain})" if value is None else f"{'yes' if value else 'no'} ({gain})"


def markdown(table):
    budget, rows = table["budget"], table["rows"]
    lines = ["# Self-supervised methods at one CPU budget (`python -m benchmarks ssl-table`)", ""]
    if budget:
        lines += [
            f"Data: {budget.get('dataset')} at {budget.get('image_size')} x {budget.get('image_size')} (RGB, three equal "
            f"channels), {budget.get('train_images')} training images (class-balanced, seed 0, the same for every run), "
            f"{budget.get('test_images')} test images. Budget `{budget.get('name')}`: {budget.get('updates')} updates of "
            f"batch {budget.get('batch_size')} per run (BEiT: plus its tokenizer's, a quarter as many); backbone "
            f"`{budget.get('backbone')}` for the ResNet rows; seeds {budget.get('seeds')}; linear probe "
            f"{budget.get('probe_epochs')} epochs; {budget.get('backend')} backend, "
            f"{budget.get('workers', 1)} worker process(es), each on one core with one thread, at nice 19 on a 2-core "
            "machine shared with other jobs (minutes are wall time under that load; cpu minutes in table.json).", ""]
    lines += ["Mean +- s.e. over seeds (top-1 %, test set). \"beats random init\": the paired gain over the same "
              "encoder at initialisation, mean +- s.e. over seeds, above 2 s.e. (kNN).", "",
              "| row | encoder | kNN | probe | kNN at init | probe at init | beats random init (kNN gain) | "
              "probe gain | min / run (cpu min) | lightly kNN, 200 / 800 ep | solo-learn linear |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, row in rows.items():
        beats = "-" if name == methods.RANDOM_INIT else _beats(row, "knn")
        probe = "-" if name == methods.RANDOM_INIT else _pm(row.get("probe_gain_mean"), row.get("probe_gain_se"))
        lines.append(
            f"| {row['label']} ({len(row['seeds'])} seeds) | {row['encoder']} | {_pm(row['knn_mean'], row['knn_se'])} "
            f"| {_pm(row['probe_mean'], row['probe_se'])} | {_pm(row['knn_at_init_mean'], row['knn_at_init_se'])} | "
            f"{_pm(row['probe_at_init_mean'], row['probe_at_init_se'])} | {beats} | {probe} | "
            f"{_pm(row['minutes_mean'], None)} ({_pm(row['cpu_minutes_mean'], None)}) | "
            f"{row['lightly_cifar10_knn_200_800_epochs']} | "
            f"{row['solo_learn_cifar10_linear']} |")
    why = [(row["label"], row["why_not"]) for row in rows.values() if row.get("why_not")]
    if why:
        lines += ["", "Rows that do not beat random init, and why:", ""] + [f"- {label}: {reason}" for label, reason in why]
    if table.get("failed"):
        lines += ["", "Failed (traceback in runs/NAME.error; tried again by the next invocation): "
                  + ", ".join(table["failed"]) + "."]
    if table.get("missing"):
        lines += ["", "Not finished yet: " + ", ".join(table["missing"]) + "."]
    lines += ["", "Reference scale (CIFAR-10, not our data, backbone or budget):", "",
              f"- {table['references']['lightly']}", f"- {table['references']['solo_learn']}", ""]
    return "\n".join(lines)
