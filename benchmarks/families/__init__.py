"""The benchmark families: one module each, saying only how to build its step on each side.

A family module has:

- a docstring (its first line is the subcommand's help; the rest says what is compared);
- `MODELS` (the `--models` choices), optionally `DEFAULT_MODELS`; `BATCH` and `STEPS`
  ({model: batch size / steps per timed block}); optionally `ITEM` ("images", "tokens"),
  `REPEATS`, `MODES`, `RUNS`, `WARMUP`, `DEVICES`, `RUN_TIMEOUT`, `SEQUENTIAL` (defaults of the
  shared options, `cli.shared_options`);
- `step_flops(args) -> {"total", "description", ...}` (from `flops.py`), optionally
  `items_per_step(args)` (default the batch size), `heading(args)`, `add_arguments(parser)`
  (the family's own options), `configure(args)`, `phases(run, args)` (default
  `turns.phases`) and `schedule(args)` (default: per model, all runs in one set of turns);
- `worker_reference(args)` and `worker_keras(args)`: the worker processes, each returning
  its result dict (`workers.run_reference_loop` / `workers.run_timed_blocks` do the timing).

`args` is the run's settings: the command line's options with `model`, its batch size and
steps filled in. No family module imports a deep-learning framework at import time.
"""

from . import cmc, cpc, gan, gpu, instdisc, lm, mim, selftest, ssl, vision

FAMILIES = {"vision": vision, "gan": gan, "lm": lm, "ssl": ssl, "cmc": cmc, "cpc": cpc, "instdisc": instdisc,
            "mim": mim, "gpu": gpu, "selftest": selftest}
for _name, _spec in FAMILIES.items():
    _spec.NAME = _name
