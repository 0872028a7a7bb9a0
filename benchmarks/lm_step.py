"""Benchmark the language-model training steps (BERT-base, GPT-2 small) on every Keras backend against transformers.

Models (`common.LM_MODELS`):

- `bert_base`: `BertPretrainer(BertBackbone.from_preset("bert_base"))` with
  `compile()` (the paper's AdamW: `SelectiveDecayAdamW`, lr 1e-4 warmup + linear decay,
  weight decay 0.01 except biases and LayerNorm, eps 1e-6), masked LM on M = 20 chosen
  positions per sequence + next sentence prediction, batch 8 x 128 tokens, against
  transformers' `BertForPreTraining(BertConfig())`: `model.bert`, the chosen positions
  gathered, `model.cls` on them, the same two losses (`torch_reference/hf_lm.py`;
  `--bert-mlm full` runs the stock forward that scores all 128 positions instead).
- `gpt2_small`: `GPTCausalLM(GPTBackbone.from_preset("gpt2_small"))` with `compile()`
  (GPT-1's AdamW: lr 2.5e-4 warmup, weight decay 0.01 except biases and LayerNorm,
  eps 1e-8), mean next-token cross-entropy on x = ids[:, :-1], y = ids[:, 1:], batch
  4 x 256 tokens, against `GPT2LMHeadModel(GPT2Config())` with the same loss.

Both sides fp32, training mode (dropout 0.1 on), random weights, AdamW; torch threads 2
(`--threads` changes every framework). `bert_tiny` / `gpt_tiny` are smoke sizes.

    python benchmarks/lm_step.py [--models bert_base gpt2_small] [--repeats 3]
        [--modes fit step] [--threads 1] [--json out.json]

Machinery as `vision_step.py` / `ssl_step.py` (`turns.py`): per model, four processes
(transformers, Keras on JAX, TensorFlow, torch) start together and take turns
round-robin; Keras `fit()` epochs of N steps on NumPy arrays and the bare compiled
`train_step`, alternating; the reference's loop of N steps over N different batches.
Warmup dropped, median of `--repeats`. tokens/s = steps/s x B x T. MFU = steps/s x
FLOPs per step (`common.lm_step_flops`) / peak.
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import common  # noqa: E402
import turns  # noqa: E402

KERAS_BACKENDS, REFERENCE, ALL_RUNS = turns.KERAS_BACKENDS, turns.REFERENCE, turns.ALL_RUNS
MODELS = tuple(common.LM_MODELS)
DEFAULT_MODELS = ("bert_base", "gpt2_small")
DEFAULT_STEPS = {"bert_base": 2, "gpt2_small": 2, "bert_tiny": 3, "gpt_tiny": 3}


def model_config(model, batch_size=0, sequence_length=0):
    """`common.LM_MODELS[model]` with the batch size and sequence length filled in."""
    config = dict(common.LM_MODELS[model])
    config["batch_size"] = batch_size or config["batch_size"]
    config["sequence_length"] = sequence_length or config["sequence_length"]
    if config["sequence_length"] > config["max_sequence_length"]:
        raise ValueError(f"--seq-len {config['sequence_length']} exceeds {model}'s "
                         f"max_sequence_length {config['max_sequence_length']}.")
    return config


def make_batches(config, n):
    """NumPy (x, y) of n sequences for `config`'s family (seed 0), as both sides receive them."""
    sys.path.insert(0, os.path.join(HERE, "torch_reference"))
    import hf_lm

    if config["family"] == "bert":
        return hf_lm.bert_batches(n, config["sequence_length"], config["vocabulary_size"],
                                  config["masked_positions"])
    return hf_lm.gpt_batches(n, config["sequence_length"], config["vocabulary_size"])


def take(tree, start, stop):
    """Rows start:stop of every array in a (nested dict / tuple of) array(s)."""
    if isinstance(tree, dict):
        return {k: take(v, start, stop) for k, v in tree.items()}
    if isinstance(tree, tuple):
        return tuple(take(v, start, stop) for v in tree)
    return tree[start:stop]


# --------------------------------------------------------------------------------------
# Workers (run in a subprocess each)
# --------------------------------------------------------------------------------------
def worker_reference(args):
    import torch

    sys.path.insert(0, os.path.join(HERE, "torch_reference"))
    import hf_lm

    result = {"run": REFERENCE, "torch_threads": turns.torch_threads(args.threads or 2),
              "versions": {"torch": torch.__version__}, "jit": "eager (PyTorch)"}
    import transformers

    result["versions"]["transformers"] = transformers.__version__
    torch.manual_seed(0)
    config = model_config(args.model, args.batch_size, args.seq_len)
    net = hf_lm.build(**config)
    result["model"] = hf_lm.describe(net)
    result["params"] = hf_lm.count_params(net)
    result["rss_after_import_mb"] = common.peak_rss_mb()
    if config["family"] == "bert":
        step_fn, result["optimizer"] = hf_lm.make_bert_step(net, args.bert_mlm)
        result["model"] += f", MLM head on {'the chosen positions' if args.bert_mlm == 'gathered' else 'all positions'}"
    else:
        step_fn, result["optimizer"] = hf_lm.make_gpt_step(net)
    steps, bsz = args.steps, config["batch_size"]
    x, y = hf_lm.to_torch(make_batches(config, steps * bsz))
    state = {"i": 0}

    def step():
        i = state["i"] % steps
        state["i"] += 1
        state["loss"] = step_fn(take(x, i * bsz, (i + 1) * bsz), take(y, i * bsz, (i + 1) * bsz))

    loop = turns.step_block(step, steps, lambda: float(state["loss"]))
    timings = turns.run_blocks({mode: loop for mode in args.modes}, args)
    turns.store_timings(result, timings, steps)
    result["final_loss"] = float(state["loss"])
    return result


def build_keras_model(config):
    """(compiled keras-paperzoo trainer, description) for an `LM_MODELS` entry."""
    from keras_paperzoo import models

    if config["family"] == "bert":
        backbone = models.BertBackbone.from_preset(config["preset"])
        trainer = models.BertPretrainer(backbone)
        description = f"BertPretrainer(BertBackbone.from_preset({config['preset']!r}))"
    else:
        trainer = models.GPTCausalLM(models.GPTBackbone.from_preset(config["preset"]))
        description = f"GPTCausalLM(GPTBackbone.from_preset({config['preset']!r}))"
    trainer.compile()
    return trainer, description + ".compile()"


def worker_keras(args):
    import keras_bench

    result = keras_bench.start_keras_worker(args.threads)
    config = model_config(args.model, args.batch_size, args.seq_len)
    model, result["model"] = build_keras_model(config)
    keras_bench.describe_model(result, model)
    bsz = config["batch_size"]
    x, y = make_batches(config, args.steps * bsz)
    first_batch = (take(x, 0, bsz), take(y, 0, bsz))
    return keras_bench.run_timed_blocks(result, model, {"x": x, "y": y, "batch_size": bsz}, first_batch, args)


# --------------------------------------------------------------------------------------
# Parent
# --------------------------------------------------------------------------------------
def make_worker(run, model, args, tmp):
    flags = ["--models", model, "--steps", str(args.steps), "--repeats", str(args.repeats),
             "--batch-size", str(args.batch_size), "--seq-len", str(args.seq_len), "--bert-mlm", args.bert_mlm]
    return turns.worker_process(__file__, run, args, flags, turns.phases(run, args), tmp)


def run_model(model, margs, log):
    """{run: result} of one model: all runs in one set of turns, or with `--pairs` one set
    per Keras backend together with its own reference process (stored as
    `torch_reference@<backend>`; each backend's ratio uses its own pair's reference)."""
    if not margs.pairs:
        return turns.run_turns(margs.runs, lambda run, tmp: make_worker(run, model, margs, tmp),
                               log, sequential=margs.sequential)
    results = {}
    for backend in [r for r in margs.runs if r != REFERENCE]:
        log(f"{model}: pair {REFERENCE} + {backend}")
        pair = turns.run_turns([REFERENCE, backend], lambda run, tmp: make_worker(run, model, margs, tmp),
                               log, sequential=margs.sequential)
        results[backend] = pair[backend]
        results[f"{REFERENCE}@{backend}"] = pair[REFERENCE]
    return results


def reference_for(results, run):
    """The reference result a run is compared with (its own pair's under `--pairs`)."""
    return results.get(f"{REFERENCE}@{run}", results.get(REFERENCE, {}))


def model_args(args, model):
    """`args` with this model's steps filled in."""
    margs = argparse.Namespace(**vars(args))
    margs.model = model
    margs.steps = args.steps or DEFAULT_STEPS[model]
    return margs


def rate_fmt(x):
    return turns.fmt(x, ".3f" if isinstance(x, (int, float)) and x < 1 else ".2f" if isinstance(x, (int, float)) and x < 10 else ".1f")


def report(model, results, margs, peak_gflops, flops, config):
    """Print this model's table; add tokens/s, ratios and MFU to `results`.

    "vs HF" divides by the reference's rate in the same kind of turn: Keras fit() by the
    reference loop timed in the fit turns, the bare step by the reference loop timed in
    the step turns (fit and step turns alternate).
    """
    peak = peak_gflops * 1e9
    tokens = config["batch_size"] * config["sequence_length"]
    rows = []
    runs = [r for r in margs.runs if r in results]
    if getattr(margs, "pairs", False):  # each backend after its own reference
        runs = [x for run in margs.runs if run != REFERENCE for x in (f"{REFERENCE}@{run}", run)]
    for run in runs:
        r = results.get(run, {})
        ref = r if run.startswith(REFERENCE) else reference_for(results, run)
        ref_rates = {mode: ref.get(mode, {}).get("steps_per_s", {}).get("median") for mode in ("fit", "step")}
        name = "keras/" + run if not run.startswith(REFERENCE) else "transformers (PyTorch)" + run[len(REFERENCE):]
        if "error" in r:
            rows.append((name, "FAILED: " + r["error"][:60]) + ("-",) * 11)
            continue
        for mode, prefix in (("fit", ""), ("step", "bare_")):
            rate = r.get(mode, {}).get("steps_per_s", {}).get("median")
            r[f"{prefix}steps_per_s"] = rate
            r[f"{prefix}tokens_per_s"] = rate * tokens if rate else None
            r[f"{prefix}mfu"] = rate * flops["total"] / peak if rate else None
            r[f"{prefix}ratio_to_reference"] = rate / ref_rates[mode] if rate and ref_rates[mode] else None
        fit = r.get("fit", {}).get("steps_per_s", {})
        util = r.get("fit", {}).get("cpu_util", {}).get("median")
        rows.append((
            name,
            r.get("jit", "-"),
            rate_fmt(r["steps_per_s"]),
            rate_fmt(r["tokens_per_s"]),
            f"{rate_fmt(fit.get('min', 0) * tokens)}-{rate_fmt(fit.get('max', 0) * tokens)}",
            turns.fmt(r["ratio_to_reference"], ".2f"),
            rate_fmt(r["bare_tokens_per_s"]),
            turns.fmt(r["bare_ratio_to_reference"], ".2f"),
            turns.fmt(r.get("peak_rss_mb"), ".0f"),
            turns.fmt(r["mfu"] * 100 if r["mfu"] else None, ".1f"),
            turns.fmt(util, ".2f"),
            " -> ".join(turns.fmt(x, ".1f") for x in r.get("loadavg_1min", [])),
        ))
    header = ("backend", "jit setting", "steps/s", "tokens/s", "min-max", "vs HF", "bare tokens/s",
              "bare vs HF", "peak RSS MB", "MFU %", "CPU util", "load avg")
    print(f"\n### {model}: batch {config['batch_size']} x {config['sequence_length']} tokens, "
          f"{margs.steps} steps x {margs.repeats} repeats, "
          + (f"--threads {margs.threads}" if margs.threads else "framework default threads (torch 2)"))
    print(turns.table(header, rows))
    print(f"FLOPs per step: {flops['description']} = {flops['total'] / 1e9:.1f} GFLOP (matmuls, bwd = 2 x "
          f"fwd); MFU of the fit() rate vs {peak_gflops:.0f} GFLOP/s. Reference 'bare' = its loop in the "
          "step turns.")
    for run in runs:
        r = results.get(run, {})
        extra = [r.get("model", ""), r.get("optimizer", ""), f"{r.get('params', 0):,} trainable params"]
        if "torch_threads" in r:
            extra.append(f"torch threads {r['torch_threads']}")
        if "warmup_s" in r:
            extra.append(f"warmup {r['warmup_s']:.1f}s")
        if "rss_after_import_mb" in r:
            extra.append(f"RSS after imports {r['rss_after_import_mb']:.0f} MB")
        if "final_loss" in r:
            extra.append(f"last loss {r['final_loss']:.3f}")
        if "subprocess_s" in r:
            extra.append(f"process {r['subprocess_s']:.0f}s")
        print(f"  {run}: " + "; ".join(e for e in extra if e))


def summary(all_results, models):
    """The fastest Keras timing of each model against the reference in the same turns."""
    rows = []
    for model in models:
        res = all_results[model]["results"]
        best = None
        for run in KERAS_BACKENDS:
            ref = reference_for(res, run)
            for prefix, label in (("", "fit"), ("bare_", "bare step")):
                ratio = res.get(run, {}).get(f"{prefix}ratio_to_reference")
                if ratio and (best is None or ratio > best[0]):
                    best = (ratio, f"keras/{run} ({label})", res[run][f"{prefix}tokens_per_s"],
                            ref.get(f"{prefix}tokens_per_s"))
        if best is None:
            rows.append((model, "-", "-", "-", "-"))
            continue
        rows.append((model, best[1], rate_fmt(best[2]), rate_fmt(best[3]), turns.fmt(best[0], ".2f")))
    print("\n### Fastest Keras backend vs transformers (same turns)\n")
    print(turns.table(("model", "fastest Keras", "tokens/s", "transformers tokens/s", "ratio"), rows))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS), choices=MODELS)
    p.add_argument("--runs", nargs="+", default=list(ALL_RUNS), choices=ALL_RUNS)
    p.add_argument("--modes", nargs="+", default=["fit", "step"], choices=["fit", "step"],
                   help="Keras timings: fit() epochs and/or the bare compiled train_step")
    p.add_argument("--steps", type=int, default=0,
                   help=f"steps per timed block (0: per model, {DEFAULT_STEPS})")
    p.add_argument("--repeats", type=int, default=3, help="timed blocks (median reported)")
    p.add_argument("--batch-size", type=int, default=0, help="0: the model's (BERT 8, GPT-2 4)")
    p.add_argument("--seq-len", type=int, default=0, help="0: the model's (BERT 128, GPT-2 256)")
    p.add_argument("--bert-mlm", default="gathered", choices=["gathered", "full"],
                   help="transformers' MLM head on the chosen positions (as ours) or on all positions")
    p.add_argument("--threads", type=int, default=0,
                   help="limit every framework to this many threads and CPUs (0: defaults, torch 2)")
    p.add_argument("--sequential", action="store_true", help="one process after another")
    p.add_argument("--pairs", action="store_true",
                   help="one set of turns per Keras backend with its own reference process (half the "
                   "memory of four processes at once; each ratio against its own pair's reference)")
    p.add_argument("--peak-gflops", type=float, default=common.DEFAULT_PEAK_GFLOPS)
    p.add_argument("--json", help="write all results to this JSON file")
    p.add_argument("--from-json", help="print the tables of a results JSON written by --json")
    p.add_argument("--worker", choices=ALL_RUNS, help=argparse.SUPPRESS)
    p.add_argument("--result-file", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        turns.run_worker(model_args(args, args.models[0]), worker_reference, worker_keras)
        return
    if args.from_json:
        with open(args.from_json) as f:
            payload = json.load(f)
        saved = argparse.Namespace(**payload["settings"])
        for model, entry in payload["models"].items():
            margs = model_args(saved, model)
            margs.steps = entry["steps"]
            report(model, entry["results"], margs, saved.peak_gflops, entry["flops_per_step"], entry["config"])
        summary(payload["models"], list(payload["models"]))
        turns.print_load(payload)
        return
    t0 = time.perf_counter()

    def log(message):
        print(f"[{time.perf_counter() - t0:5.0f}s] {message}", flush=True)

    payload = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": common.machine_info(),
               "settings": {k: v for k, v in vars(args).items()
                            if k not in ("worker", "result_file", "json")},
               "loadavg_start": os.getloadavg(), "models": {}}
    for model in args.models:
        margs = model_args(args, model)
        config = model_config(model, args.batch_size, args.seq_len)
        load0 = os.getloadavg()
        log(f"{model}: {', '.join(args.runs)} (batch {config['batch_size']} x {config['sequence_length']}, "
            f"{margs.steps} steps x {margs.repeats} repeats, load {load0[0]:.1f})")
        results = run_model(model, margs, log)
        flops = common.lm_step_flops(**config)
        report(model, results, margs, args.peak_gflops, flops, config)
        payload["models"][model] = {"config": config, "steps": margs.steps, "flops_per_step": flops,
                                    "results": results, "loadavg_start": load0, "loadavg_end": os.getloadavg()}
        payload["loadavg_end"] = os.getloadavg()
        payload["wall_s"] = time.perf_counter() - t0
        if args.json:  # after every model: a stopped run keeps what it measured
            with open(args.json, "w") as f:
                json.dump(payload, f, indent=2)
    log("done")
    summary(payload["models"], args.models)
    turns.print_load(payload)
    if args.json:
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
