"""Where one language-model training step spends its time: Keras-on-torch vs transformers, op by op.

Runs in one process (torch backend): the keras-paperzoo trainer's compiled `train_step`
and the transformers reference step of `lm_step.py`, `--steps` each after one warmup
step, under `torch.profiler` (CPU), and prints the wall time per step and the ops with
the most self CPU time on each side, plus Python-level time (wall minus the ops' self
time is interpreter and dispatch overhead). Same torch kernels on both sides, so the
differences are in which ops each model asks for.

    KERAS_BACKEND=torch python benchmarks/profile_lm.py --model bert_base [--threads 1]
"""

import argparse
import os
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "torch")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "torch_reference"))

import common  # noqa: E402
import lm_step  # noqa: E402


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


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="bert_base", choices=list(common.LM_MODELS))
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rows", type=int, default=18)
    p.add_argument("--sides", nargs="+", default=["keras", "transformers"], choices=["keras", "transformers"])
    args = p.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    import keras
    import hf_lm

    assert keras.backend.backend() == "torch", "run with KERAS_BACKEND=torch"
    config = lm_step.model_config(args.model)
    bsz = config["batch_size"]
    x, y = lm_step.make_batches(config, bsz)
    if "keras" in args.sides:
        model, description = lm_step.build_keras_model(config)
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


if __name__ == "__main__":
    main()
