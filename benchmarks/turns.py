"""The round-robin scheduler: every run of a benchmark in its own process, timed blocks in turns.

A benchmark runs one subprocess per framework (the PyTorch reference, Keras on each
backend). The parent starts them all, then gives them their timed blocks in turns over a
pipe: one process runs one block (a warmup, a `fit()` epoch, N bare steps) while the
others wait on `stdin`, and the order rotates every round. Every framework is therefore
timed in the same minutes, so the drifting background load of a shared machine hits all
of them alike, and no warmup or import overlaps a timed block. A reference that imports
torchvision or timm cannot share a process with TensorFlow (duplicate LLVM options
abort), which is one more reason for one process per run.

Worker side (in the subprocess): `wait_turn(phase)` / `end_turn(phase)` around each
block, or `time_loop` for N-step blocks; `phases` / `run_blocks` / `store_timings` for
alternating fit and bare-step blocks; `run_worker` (or `start_worker` / `finish_worker`)
around the whole run (CPU pinning, peak RSS, load average, the result file).
Parent side: `worker_process` / `Worker` (one subprocess: `python -m benchmarks FAMILY
--worker RUN --settings JSON`) and `run_turns` (the schedule).

Nothing here imports a deep-learning framework.
"""

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time

MARK = "@@turn"
KERAS_BACKENDS = ("jax", "tensorflow", "torch")
REFERENCE = "torch_reference"
ALL_RUNS = (REFERENCE,) + KERAS_BACKENDS
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the folder holding `benchmarks/`


# --------------------------------------------------------------------------------------
# Measurement primitives
# --------------------------------------------------------------------------------------
def summarize(values):
    """Median, min, max and relative spread ((max - min) / median) of a list."""
    ordered = list(values)
    values = sorted(values)
    med = statistics.median(values)
    return {
        "median": med,
        "min": values[0],
        "max": values[-1],
        "spread": (values[-1] - values[0]) / med if med else float("nan"),
        "values": ordered,
    }


def peak_rss_mb():
    """Peak resident set size of this process in MB (ru_maxrss is KB on Linux)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def loadavg():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


class Stopwatch:
    """Wall and process-CPU time of a block: `with Stopwatch() as sw: ...; sw.wall`."""

    def __enter__(self):
        self.t0, self.c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.t0
        self.cpu = time.process_time() - self.c0
        return False


# --------------------------------------------------------------------------------------
# Worker side
# --------------------------------------------------------------------------------------
def wait_turn(phase):
    """Block until the parent says it is this process's turn for `phase`."""
    line = sys.stdin.readline()
    if line.strip() != f"go {phase}":
        raise RuntimeError(f"expected 'go {phase}' from the parent, got {line!r}")


def end_turn(phase):
    sys.stdout.write(f"{MARK} done {phase}\n")
    sys.stdout.flush()


def timed_block(run, phase):
    """Wait for the turn `phase`, time `run()` (wall and process CPU), end the turn."""
    wait_turn(phase)
    with Stopwatch() as sw:
        run()
    end_turn(phase)
    return sw


def step_block(step, steps, sync):
    """A function `run(n=steps)` running `n` calls of `step()` and then `sync()`."""

    def run(n=None):
        for _ in range(n or steps):
            step()
        sync()

    return run


def time_loop(step, steps, repeats, sync, name, warmup_steps=None):
    """Warmup steps, then `repeats` timed blocks of `steps` steps, each on its turn.

    Phases `{name}:warmup`, `{name}:0` ... Returns (warmup wall s, [wall s], [CPU s]).
    Each block ends with `sync()` (e.g. waiting for JAX's asynchronous dispatch).
    """
    warm = timed_block(step_block(step, steps if warmup_steps is None else warmup_steps, sync),
                       f"{name}:warmup")
    walls, cpus = [], []
    for i in range(repeats):
        sw = timed_block(step_block(step, steps, sync), f"{name}:{i}")
        walls.append(sw.wall)
        cpus.append(sw.cpu)
    return warm.wall, walls, cpus


def block_phases(name, repeats):
    """The phase names `time_loop(..., name)` goes through."""
    return [f"{name}:warmup"] + [f"{name}:{i}" for i in range(repeats)]


def rates(walls, cpus, steps):
    """steps/s and CPU utilisation (process CPU s / wall s) of timed blocks of `steps` steps."""
    return {
        "steps_per_s": summarize([steps / w for w in walls]),
        "cpu_util": summarize([c / w for c, w in zip(cpus, walls)]),
        "wall_s": walls,
    }


def torch_threads(threads):
    """Apply `--threads` to torch (0: leave torch's default); return the thread count."""
    import torch

    if threads:
        torch.set_num_threads(threads)
    return torch.get_num_threads()


def thread_env(threads):
    """Environment limiting every framework's compute threads to `threads` (0: none)."""
    if not threads:
        return {}
    n = str(threads)
    env = {"OMP_NUM_THREADS": n, "MKL_NUM_THREADS": n,
           "TF_NUM_INTRAOP_THREADS": n, "TF_NUM_INTEROP_THREADS": n}
    if threads == 1:
        env["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"
                            " intra_op_parallelism_threads=1").strip()
    else:
        env["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                            + f" intra_op_parallelism_threads={threads}").strip()
    return env


def start_worker(threads):
    """Call first in a worker: pins the process to `threads` CPUs (0: no pinning).

    XLA's CPU runtime (JAX) keeps a thread per core whatever XLA_FLAGS say, so
    `--threads` also pins the process, before any framework loads. Returns the
    bookkeeping `finish_worker` needs.
    """
    cpus = None
    if threads and hasattr(os, "sched_setaffinity"):
        cpus = sorted(os.sched_getaffinity(0))[:threads]
        os.sched_setaffinity(0, cpus)
    return {"t0": time.perf_counter(), "load0": loadavg(), "cpus": cpus}


def finish_worker(result, started, result_file):
    """Add CPU affinity, peak RSS, load average and duration; write the result file."""
    result["cpu_affinity"] = started["cpus"]
    result["peak_rss_mb"] = peak_rss_mb()
    result["loadavg_1min"] = [started["load0"], loadavg()]
    result["process_s"] = time.perf_counter() - started["t0"]
    with open(result_file, "w") as f:
        json.dump(result, f)


def phases(run, args):
    """The timed blocks of one run, in order: warmups, then repeat i of every mode.

    Fit and bare-step blocks alternate (fit:0, step:0, fit:1, ...) so both see the same
    load; the reference runs its loop in both kinds of turns.
    """
    modes = [m for m in ("fit", "step") if m in args.modes]
    return [f"{mode}:{label}" for label in ["warmup"] + list(range(args.repeats)) for mode in modes]


def run_blocks(blocks, args):
    """Play `blocks` ({mode: function}) in the order of `phases`; return per-mode timings.

    A warmup turn calls `blocks[mode](args.warmup)` when `args.warmup` is set (a bare-step or
    reference loop then warms up on that many steps; a fit() block is always one epoch),
    else `blocks[mode]()`, one block like the timed ones.
    """
    timings = {mode: {"walls": [], "cpus": []} for mode in blocks}
    warmup = getattr(args, "warmup", 0)
    for phase in phases(None, args):
        mode, label = phase.split(":")
        block = blocks[mode]
        if label == "warmup" and warmup:
            block = (lambda b: lambda: b(warmup))(block)
        sw = timed_block(block, phase)
        if label == "warmup":
            timings[mode]["warmup_s"] = sw.wall
        else:
            timings[mode]["walls"].append(sw.wall)
            timings[mode]["cpus"].append(sw.cpu)
    return timings


def store_timings(result, timings, steps):
    """`result[mode]` = the rates of `run_blocks`' timings (steps per block) with its warmup time."""
    for mode, t in timings.items():
        result[mode] = rates(t["walls"], t["cpus"], steps)
        result[mode]["warmup_s"] = t["warmup_s"]
    result["warmup_s"] = timings[next(iter(timings))]["warmup_s"]


def run_worker(args, worker_reference, worker_keras):
    """A worker subprocess's whole life: pin, run `worker_reference(args)` for the reference run or
    `worker_keras(args)`, then write the result file (`finish_worker`)."""
    started = start_worker(args.threads)
    result = worker_reference(args) if args.worker == REFERENCE else worker_keras(args)
    finish_worker(result, started, args.result_file)


# --------------------------------------------------------------------------------------
# Parent side
# --------------------------------------------------------------------------------------
def worker_process(family, run, args, phase_names, tmp):
    """The `Worker` running `python -m benchmarks FAMILY --worker RUN --settings JSON` (the JSON is
    `vars(args)`: the run's settings, model included), with KERAS_BACKEND=RUN unless the reference,
    the thread settings of `args.threads`, and on `args.device == "cpu"` no accelerator in sight.
    The reference runs under `args.reference_python` when set (an interpreter whose environment
    has the reference's packages, e.g. torchvision and lightly with the torch they need; it must
    find this folder's `benchmarks` package, which it does through PYTHONPATH), else under this
    interpreter."""
    env = {"KERAS_BACKEND": run} if run != REFERENCE else {}
    env.update(thread_env(args.threads))
    if getattr(args, "device", "cpu") == "cpu":
        env["JAX_PLATFORMS"] = "cpu"
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    python = sys.executable
    if run == REFERENCE and getattr(args, "reference_python", None):
        python = args.reference_python
    cmd = [python, "-m", "benchmarks", family, "--worker", run, "--settings", json.dumps(vars(args))]
    return Worker(run, cmd, env, phase_names, tmp, timeout=getattr(args, "run_timeout", 0))


class Worker:
    """One benchmark subprocess, driven turn by turn over its stdin/stdout.

    Args:
        run: the run's name (also names its files in `tmp`).
        cmd: the command line; `--result-file <path>` is appended.
        env: extra environment variables.
        phases: the phase names the worker will wait for, in order.
        tmp: a directory for the result file and the worker's stderr.
        timeout: seconds after which the process is killed and the run reported as failed
            (0: none).
    """

    def __init__(self, run, cmd, env, phases, tmp, timeout=0):
        self.run = run
        self.result_file = os.path.join(tmp, f"{run}.json")
        self.stderr_path = os.path.join(tmp, f"{run}.stderr")
        self.phases = list(phases)
        self.error = None
        full_env = dict(os.environ)
        full_env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        full_env.update(env)
        self.t0 = time.perf_counter()
        self.stderr = open(self.stderr_path, "w")
        self.proc = subprocess.Popen(list(cmd) + ["--result-file", self.result_file], env=full_env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, text=True)
        self.timer = None
        if timeout:
            self.timer = threading.Timer(timeout, self._kill, args=(timeout,))
            self.timer.daemon = True
            self.timer.start()

    def _kill(self, timeout):
        self.error = f"timed out after {timeout} s"
        self.proc.kill()

    def take_turn(self, phase):
        if self.error:
            return
        try:
            self.proc.stdin.write(f"go {phase}\n")
            self.proc.stdin.flush()
            while True:
                line = self.proc.stdout.readline()
                if not line:
                    raise RuntimeError("worker exited")
                if line.startswith(MARK):
                    if line.split()[-1] != phase:
                        raise RuntimeError(f"out of step: {line!r} for {phase}")
                    return
        except (BrokenPipeError, RuntimeError) as exc:
            self.error = self.error or str(exc)

    def finish(self):
        if not self.error:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
        self.proc.stdout.read()
        code = self.proc.wait()
        if self.timer:
            self.timer.cancel()
        self.stderr.close()
        if code != 0 or self.error:
            with open(self.stderr_path) as f:
                tail = f.read()[-3000:]
            sys.stderr.write(f"--- {self.run} failed ({self.error or code}) ---\n{tail}\n")
            return {"run": self.run, "error": f"{self.error or ''} exit code {code}".strip(),
                    "stderr_tail": tail}
        with open(self.result_file) as f:
            result = json.load(f)
        result["subprocess_s"] = time.perf_counter() - self.t0
        return result


def run_turns(runs, make_worker, log, sequential=False):
    """Start every run, then give them their timed blocks in rotating round-robin.

    `make_worker(run, tmp)` returns a `Worker`. The phases are played in the order of
    `merge_phases`, each by every worker that has it, the workers' order rotating. With
    `sequential=True`, one run at a time instead
    (each starts after the previous one has exited). Returns {run: result dict}.
    """
    with tempfile.TemporaryDirectory() as tmp:
        if sequential:
            results = {}
            for run in runs:
                worker = make_worker(run, tmp)
                log(f"{run}: " + ", ".join(worker.phases))
                for phase in worker.phases:
                    worker.take_turn(phase)
                results[run] = worker.finish()
            return results
        workers = [make_worker(run, tmp) for run in runs]
        order = merge_phases([w.phases for w in workers])
        for k, phase in enumerate(order):
            turn = [w for w in workers if phase in w.phases]
            if turn:
                shift = k % len(turn)
                turn = turn[shift:] + turn[:shift]
            log(f"{phase}: " + ", ".join(w.run for w in turn))
            for worker in turn:
                worker.take_turn(phase)
        return {w.run: w.finish() for w in workers}


def merge_phases(lists):
    """One order of all phases that keeps the order of every list (each worker's own).

    A phase missing from the merged order so far is inserted right after the phase
    that precedes it in its list (or first). Raises if two lists order phases differently.
    """
    order = []
    for phases in lists:
        position = 0
        for phase in phases:
            if phase in order:
                if order.index(phase) < position:
                    raise ValueError(f"workers disagree on the order of phase {phase!r}")
                position = order.index(phase) + 1
            else:
                order.insert(position, phase)
                position += 1
    return order
