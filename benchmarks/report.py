"""The one report of every family: a Markdown table per model and a JSON payload.

The payload (`--json`), written after every finished batch of runs so that a stopped
benchmark keeps what it measured:

    {"family", "date", "machine" (`machine_info`), "settings" (the command line's options),
     "peak_gflops" (the MFU denominator), "loadavg_start", "loadavg_end", "wall_s",
     "models": {model: {"heading", "batch_size", "steps", "repeats", "modes", "item",
                        "items_per_step", "flops_per_step", "loadavg_start", "loadavg_end",
                        "results": {run: {...}}}}}

A run's result is what its worker measured ("fit" / "step": {"steps_per_s": {median, min,
max, spread, values}, "cpu_util", "wall_s"}, "peak_rss_mb", "loadavg_1min", ...) plus what
`derive` adds: for the headline rate (the `fit()` epochs when timed, else the bare step)
`steps_per_s`, `items_per_s` (images or tokens), `ratio_to_reference` and `mfu`; the same
with the prefix `bare_` for the bare compiled step; `peak_memory_mb` (the accelerator's peak
where measured, else the process's peak RSS). "vs ref" divides by the reference's rate in the
same kind of turn (fit turns / step turns), by its own pair's reference under `--pairs`.

`load(path)` also reads the payloads the scripts wrote before the harness
(benchmarks/results/*.json): the GAN's (one model, no "models") and the GPU's (a list).
Nothing here imports a deep-learning framework.
"""

import json
import os
import platform
import time

from .turns import KERAS_BACKENDS, REFERENCE

# The MFU denominator per device, GFLOP/s: the CPU machine's nominal fp32 peak (2 cores with
# AVX-512 FMA) and the dense bf16 peak of an H100 / H200 SXM. `--peak-gflops` overrides.
DEFAULT_PEAK_GFLOPS = {"cpu": 250.0, "gpu": 989_000.0}
MODES = (("fit", "", "fit"), ("step", "bare_", "bare"))  # (mode, field prefix, column label)


def machine_info():
    info = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "processor": platform.processor(),
        "cpu_count": os.cpu_count(),
    }
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu_model"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return info


def new_payload(family, args):
    settings = {k: v for k, v in vars(args).items() if k not in ("worker", "result_file", "json", "settings")}
    return {"family": family, "date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine_info(),
            "settings": settings, "peak_gflops": args.peak_gflops, "loadavg_start": os.getloadavg(),
            "models": {}}


def save(payload, path):
    with open(path, "w") as f:
        json.dump(payload, f, indent=2)


# --------------------------------------------------------------------------------------
# Derived numbers
# --------------------------------------------------------------------------------------
def is_reference(run):
    return run.startswith(REFERENCE)


def reference_for(results, run):
    """The reference result a run is compared with (its own pair's under `--pairs`)."""
    return results.get(f"{REFERENCE}@{run}", results.get(REFERENCE, {}))


def _median(result, mode):
    return result.get(mode, {}).get("steps_per_s", {}).get("median")


def derive(entry, peak_gflops):
    """Add steps/s, items/s, ratio to the reference, MFU and peak memory to every run of `entry`."""
    peak = peak_gflops * 1e9
    total = entry["flops_per_step"]["total"]
    results = entry["results"]
    for run, r in results.items():
        if "error" in r:
            continue
        ref = r if is_reference(run) else reference_for(results, run)
        for mode, prefix, _ in MODES:
            rate, ref_rate = _median(r, mode), _median(ref, mode)
            r[f"{prefix}steps_per_s"] = rate
            r[f"{prefix}items_per_s"] = rate * entry["items_per_step"] if rate else None
            r[f"{prefix}mfu"] = rate * total / peak if rate else None
            r[f"{prefix}ratio_to_reference"] = rate / ref_rate if rate and ref_rate else None
        if r["steps_per_s"] is None:  # no fit() timed: the bare step is the headline
            for key in ("steps_per_s", "items_per_s", "mfu", "ratio_to_reference"):
                r[key] = r[f"bare_{key}"]
        r["peak_memory_mb"] = r["peak_memory_gb"] * 1024 if "peak_memory_gb" in r else r.get("peak_rss_mb")
    return entry


# --------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------
def fmt(x, spec):
    return format(x, spec) if isinstance(x, (int, float)) and x == x else "-"


def rate_fmt(x):
    if not isinstance(x, (int, float)):
        return "-"
    return fmt(x, ".3f" if x < 1 else ".2f" if x < 10 else ",.1f" if x < 1000 else ",.0f")


def table(header, rows):
    """A Markdown table (columns padded to their widest cell) as a string."""
    rows = [tuple(str(c) for c in row) for row in rows]
    widths = [max(len(str(row[i])) for row in rows + [tuple(header)]) for i in range(len(header))]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |" for row in rows]
    return "\n".join(lines)


def run_name(run):
    return "reference (PyTorch)" + run[len(REFERENCE):] if is_reference(run) else "keras/" + run


def _extras(r):
    """The per-run notes below a table: what ran, threads, warmup, memory, loss, time."""
    params = r.get("params")
    if isinstance(params, dict):
        params = " + ".join(f"{k} {v:,}" for k, v in params.items()) + " params"
    elif params is not None:
        params = f"{params:,} trainable params"
    extra = [r.get("model", ""), r.get("optimizer", ""), params, r.get("precision"), r.get("device_name")]
    if "torch_threads" in r:
        extra.append(f"torch threads {r['torch_threads']}")
    if "tf_threads" in r:
        extra.append(f"tf intra/inter op threads {r['tf_threads']['intra_op']}/{r['tf_threads']['inter_op']} "
                     "(0 = auto)")
    if r.get("steps_per_execution", 1) != 1:
        extra.append(f"steps_per_execution={r['steps_per_execution']}")
    if "warmup_s" in r:
        extra.append(f"warmup {r['warmup_s']:.1f}s")
    if "rss_after_import_mb" in r:
        extra.append(f"RSS after imports {r['rss_after_import_mb']:.0f} MB")
    if "final_loss" in r:
        extra.append(f"last loss {r['final_loss']:.3f}")
    elif "final_losses" in r:
        extra.append("last losses " + ", ".join(f"{k} {v:.3f}" for k, v in r["final_losses"].items()))
    if r.get("measured_matmul_gflops"):
        extra.append(f"1024^3 fp32 matmul measured {r['measured_matmul_gflops']:.0f} GFLOP/s")
    spread = r.get("fit", r.get("step", {})).get("steps_per_s", {}).get("spread")
    if spread is not None:
        extra.append(f"spread (max-min)/median {spread * 100:.0f}%")
    if "subprocess_s" in r:
        extra.append(f"process {r['subprocess_s']:.0f}s")
    return "; ".join(e for e in extra if e)


def model_table(model, entry, peak_gflops):
    """The Markdown table of one model's runs, with its heading, FLOP count and per-run notes."""
    item = entry["item"]
    modes = [m for m in MODES if m[0] in entry["modes"]]
    header = ["run", "jit setting"]
    for _, _, label in modes:
        header += [f"{label} steps/s", f"{label} {item}/s", f"{label} vs ref"]
    header += [f"min-max {item}/s", "peak MB", "MFU %", "CPU util", "load avg"]
    rows = []
    for run, r in entry["results"].items():
        if "error" in r:
            rows.append([run_name(run), "FAILED: " + r["error"][:60]] + ["-"] * (len(header) - 2))
            continue
        row = [run_name(run), r.get("jit", "-")]
        for _, prefix, _ in modes:
            row += [rate_fmt(r.get(f"{prefix}steps_per_s")), rate_fmt(r.get(f"{prefix}items_per_s")),
                    fmt(r.get(f"{prefix}ratio_to_reference"), ".2f")]
        head = r.get("fit") if "fit" in entry["modes"] and "fit" in r else r.get("step", {})
        stats, items = head.get("steps_per_s", {}), entry["items_per_step"]
        low, high = stats.get("min"), stats.get("max")
        row += [f"{rate_fmt(low * items if low else None)}-{rate_fmt(high * items if high else None)}",
                fmt(r.get("peak_memory_mb"), ",.0f"), fmt(r["mfu"] * 100 if r.get("mfu") else None, ".1f"),
                fmt(head.get("cpu_util", {}).get("median"), ".2f"),
                " -> ".join(fmt(x, ".1f") for x in r.get("loadavg_1min", []))]
        rows.append(row)
    flops = entry["flops_per_step"]
    lines = [f"\n### {model}: {entry['heading']}", table(header, rows),
             f"FLOPs per step: {flops.get('description', '')} = {flops['total'] / 1e9:,.2f} GFLOP (matmuls and "
             f"convs, backward = 2 x forward); MFU of the headline rate (fit() when timed, else the bare step) vs "
             f"{peak_gflops:,.0f} GFLOP/s. steps/s: median of the timed blocks; 'vs ref' against the reference's "
             "loop in the same kind of turn; peak MB: the accelerator's peak where measured, else peak RSS."]
    lines += [f"  {run}: {_extras(r)}" for run, r in entry["results"].items() if "error" not in r]
    return "\n".join(lines)


def summary(payload):
    """The fastest Keras timing of each model against its reference."""
    rows = []
    for model, entry in payload["models"].items():
        res, item, best = entry["results"], entry["item"], None
        for run in KERAS_BACKENDS:
            ref = reference_for(res, run)
            for prefix, label in (("", "headline"), ("bare_", "bare step")):
                ratio = res.get(run, {}).get(f"{prefix}ratio_to_reference")
                if ratio and (best is None or ratio > best[0]):
                    best = (ratio, f"keras/{run} ({label})", res[run][f"{prefix}items_per_s"],
                            ref.get(f"{prefix}items_per_s"))
        if best is None:
            rows.append((model, "-", "-", "-", "-"))
            continue
        rows.append((model, best[1], f"{rate_fmt(best[2])} {item}/s", f"{rate_fmt(best[3])} {item}/s",
                     fmt(best[0], ".2f")))
    return "\n### Fastest Keras backend vs the reference\n\n" + table(
        ("model", "fastest Keras", "rate", "reference rate", "ratio"), rows)


def load_line(payload):
    end, wall = payload.get("loadavg_end", [float("nan")])[0], payload.get("wall_s", float("nan"))
    lines = [f"\n{payload['date']}; 1-min load average {payload['loadavg_start'][0]:.1f} -> {end:.1f}; "
             f"{wall:.0f} s in all."]
    for model, entry in payload["models"].items():
        if "loadavg_start" in entry and "loadavg_end" in entry:
            lines.append(f"  {model}: load {entry['loadavg_start'][0]:.1f} -> {entry['loadavg_end'][0]:.1f}")
    return "\n".join(lines)


def render(payload):
    """Every model's table, the summary and the load line of a payload."""
    peak = payload["peak_gflops"]
    parts = [model_table(model, derive(entry, peak), peak) for model, entry in payload["models"].items()]
    return "\n".join(parts + [summary(payload), load_line(payload)])


# --------------------------------------------------------------------------------------
# Reading payloads, the old scripts' included
# --------------------------------------------------------------------------------------
def load(path):
    """A payload from `path`, in the harness's shape whatever script or version wrote it."""
    with open(path) as f:
        payload = json.load(f)
    if isinstance(payload.get("results"), list):
        return _from_gpu_step(payload)
    if "models" not in payload and "results" in payload:
        return _from_gan_step(payload)
    if "models" not in payload:
        raise ValueError(f"{path} is not a benchmark payload (a profile-ops result?)")
    settings = payload["settings"]
    payload.setdefault("peak_gflops", settings.get("peak_gflops", DEFAULT_PEAK_GFLOPS["cpu"]))
    for model, entry in payload["models"].items():
        config = entry.get("config")  # the lm script's (before the harness)
        entry.setdefault("batch_size", config["batch_size"] if config else settings.get("batch_size"))
        entry.setdefault("item", "tokens" if config else "images")
        entry.setdefault("items_per_step", entry["batch_size"] * (config["sequence_length"] if config else 1))
        entry.setdefault("modes", settings.get("modes", ["fit", "step"]))
        entry.setdefault("heading", f"batch {entry['batch_size']}, {entry.get('steps')} steps x "
                                    f"{settings.get('repeats')} repeats")
        entry["flops_per_step"].setdefault("description", "")
    return payload


def _from_gan_step(payload):
    settings = payload["settings"]
    entry = {"heading": f"batch {settings['batch_size']}, {settings['steps']} steps x {settings['repeats']} repeats",
             "batch_size": settings["batch_size"], "steps": settings["steps"], "item": "images",
             "items_per_step": settings["batch_size"], "modes": settings["modes"],
             "flops_per_step": dict(payload["flops_per_step"], description="D update + G update"),
             "results": payload["results"]}
    return {"family": "gan", "date": payload["date"], "machine": payload["machine"], "settings": settings,
            "peak_gflops": settings["peak_gflops"], "loadavg_start": [float("nan")],
            "models": {settings.get("preset", "gan_mnist"): entry}}


def _from_gpu_step(payload):
    models = {}
    for r in payload["results"]:
        entry = models.setdefault(r["model_name"], {
            "heading": "bf16, bare compiled step", "item": "items", "modes": ["step"], "results": {},
            "items_per_step": round(r["items_per_s"] / r["steps_per_s"]) if "steps_per_s" in r else 1,
            "flops_per_step": {"total": r.get("step_tflop", 0) * 1e12, "description": ""}})
        if "step_tflop" in r:
            entry["items_per_step"] = round(r["items_per_s"] / r["steps_per_s"])
            entry["flops_per_step"]["total"] = r["step_tflop"] * 1e12
        if "median_s_per_step" in r:
            rate = 1 / r["median_s_per_step"]
            r.setdefault("step", {"steps_per_s": {"median": rate, "min": 1 / max(r["s_per_step"]),
                                                  "max": 1 / min(r["s_per_step"])}})
        entry["results"][r["run"]] = r
    return {"family": "gpu", "date": "-", "machine": payload["machine"], "settings": payload["args"],
            "peak_gflops": payload["peak_tflops"] * 1000, "loadavg_start": [float("nan")], "models": models}
