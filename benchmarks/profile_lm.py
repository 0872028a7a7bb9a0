"""Where one language-model training step spends its time: Keras-on-torch vs transformers, op by op.

Runs in one process (torch backend): the keras-paperzoo trainer's compiled `train_step`
and the transformers reference step of the `lm` family, `--steps` each after one warmup
step, under `torch.profiler` (CPU), and prints the wall time per step and the ops with
the most self CPU time on each side, plus Python-level time (wall minus the ops' self
time is interpreter and dispatch overhead). Same torch kernels on both sides, so the
differences are in which ops each model asks for.

    python -m benchmarks profile-lm --model bert_base [--threads 1]
    python -m benchmarks profile-lm --model gpt_tiny --steps 1 --rows 5   # smoke
"""

import os
import time

from . import flops


def profile(step, steps, label, rows):
    from torch.profiler import ProfilerActivity, profile as torch_profile

    step()  # warmup
    t0 = time.perf_counter()
    with torch_profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step()
    wall = (time.perf_counter() - t0) / steps
    events = prof.key_averages()
    total_self = sum(e.self_cpu_time_total for e in events) / steps / 1e6
    print(f"\n## {label}: {wall:.2f} s per step (profiled), ops' self CPU {total_self:.2f} s per step")
    top = sorted(events, key=lambda e: e.self_cpu_time_total, reverse=True)[:rows]
    print("| op | calls/step | self CPU s/step | share |\n|---|---|---|---|")
    for e in top:
        t = e.self_cpu_time_total / steps / 1e6
        print(f"| {e.key} | {e.count / steps:.0f} | {t:.3f} | {100 * t / total_self:.1f} % |")
    return {"wall_s": wall, "self_cpu_s": total_self,
            "ops": {e.key: [e.count / steps, e.self_cpu_time_total / steps / 1e6] for e in top}}


def add_arguments(p, add_shared):
    p.add_argument("--model", default="bert_base", choices=list(flops.LM_MODELS))
    add_shared(p, ["--steps", "--threads"], steps=2, threads=2)
    p.add_argument("--rows", type=int, default=18)
    p.add_argument("--sides", nargs="+", default=["keras", "transformers"], choices=["keras", "transformers"])


def main(args):
    os.environ.setdefault("KERAS_BACKEND", "torch")
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    import keras

    from .families import lm
    from .torch_reference import hf_lm

    assert keras.backend.backend() == "torch", "run with KERAS_BACKEND=torch"
    config = lm.model_config(args.model)
    bsz = config["batch_size"]
    x, y = lm.make_batches(config, bsz)
    if "keras" in args.sides:
        model, description = lm.build_keras_model(config)
        data = keras.tree.map_structure(torch.as_tensor, (x, y))
        model._symbolic_build(data_batch=data)
        profile(lambda: float(next(iter(model.train_step(data).values()))), args.steps,
                f"keras/torch {description}", args.rows)
        del model
    if "transformers" in args.sides:
        net = hf_lm.build(**config)
        if config["family"] == "bert":
            step, _ = hf_lm.make_bert_step(net)
        else:
            step, _ = hf_lm.make_gpt_step(net)
        tx, ty = hf_lm.to_torch(x), hf_lm.to_torch(y)
        profile(lambda: float(step(tx, ty)), args.steps, hf_lm.describe(net), args.rows)
