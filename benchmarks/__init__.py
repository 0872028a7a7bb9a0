"""keras-paperzoo's training steps against PyTorch references: `python -m benchmarks FAMILY [options]`.

Layout (no module imports a deep-learning framework at import time; workers import theirs):

- `cli.py`: the command (one subcommand per family, the shared options) and the runner.
- `turns.py`: the round-robin scheduler, one process per run, timed blocks in turns.
- `report.py`: the one report: a table per model and the JSON payload (steps/s, ratio to the
  reference, peak memory, MFU, the machine and its load).
- `flops.py`: the analytic FLOP counts (the MFU numerators) and the architectures they need.
- `workers.py`: what the Keras and PyTorch worker processes share (fit and bare-step blocks,
  the reference loop, data).
- `families/`: one module per family, saying only how to build its step on each side.
- `torch_reference/`: the PyTorch references (plain PyTorch, timm, transformers).
- `profile_lm.py`, `profile_ops.py`: profilers (`profile-lm`, `profile-ops`).
- `results/`: recorded payloads; `FINDINGS.md`: the dated results and what they showed.
"""
