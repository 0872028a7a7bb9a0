"""Run a test module on several virtual JAX CPU devices, in a subprocess, and read its results.

The devices exist only if XLA_FLAGS is set before JAX is imported, so the multi-device
measurements (MoCo's shuffled BN, SimCLR's global negatives, every trainer under
`DataParallel`) run as `python -m MODULE ARGS...`, which prints one line
`RESULTS <json>`; `measure_on_devices` returns that JSON.
"""

import json
import os
import pathlib
import subprocess
import sys

from tests.conftest import with_fast_xla_flags

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
JAX_ONLY = ("multi-device test: keras.distribution.DataParallel over virtual CPU devices "
            "(XLA_FLAGS=--xla_force_host_platform_device_count) is JAX-only")


def measure_on_devices(module, *args, devices=4, timeout=600):
    """`python -m module *args` on `devices` virtual CPU devices (JAX); its RESULTS JSON."""
    env = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="3",
               XLA_FLAGS=with_fast_xla_flags(f"--xla_force_host_platform_device_count={devices}"),
               PYTHONPATH=os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-m", module, *args], cwd=REPO_ROOT, env=env,
                         capture_output=True, text=True, timeout=timeout)
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULTS ")]
    assert run.returncode == 0 and lines, f"subprocess failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    return json.loads(lines[-1][len("RESULTS "):])
