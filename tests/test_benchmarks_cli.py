"""`python -m benchmarks`: the command lists every family, and the harness writes the one report format.

The `selftest` family runs the real machinery (one process per run, timed blocks in turns, the
report and its JSON) on a pure-Python step, in seconds and without importing a framework.
Performance is never asserted.
"""

import json
import os
import subprocess
import sys

import pytest

# backend_free (tests/conftest.py): the harness starts its own child per backend whatever $KERAS_BACKEND is, and the
# selftest family imports no framework: every leg would run the same thing.
pytestmark = pytest.mark.backend_free("tensorflow")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAMILIES = ("vision", "gan", "lm", "ssl", "cmc", "cpc", "instdisc", "mim", "gpu", "selftest")


def _bench(*args, timeout=60):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "benchmarks", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_help_lists_every_family_and_tool():
    done = _bench("--help")
    assert done.returncode == 0, done.stderr
    for name in FAMILIES + ("report", "profile-lm", "profile-ops"):
        assert name in done.stdout


def test_every_family_has_the_shared_options():
    from benchmarks import cli

    parser = cli.build_parser()
    for name in FAMILIES:
        args = parser.parse_args([name])
        for option in ("models", "runs", "modes", "steps", "repeats", "warmup", "batch_size", "device", "threads",
                       "json", "peak_gflops"):
            assert hasattr(args, option), (name, option)


def test_selftest_writes_the_report_json(tmp_path):
    path = tmp_path / "selftest.json"
    done = _bench("selftest", "--steps", "1", "--repeats", "1", "--json", str(path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| keras/jax" in done.stdout and "Fastest Keras backend" in done.stdout
    payload = json.loads(path.read_text())
    for key in ("family", "date", "machine", "settings", "peak_gflops", "loadavg_start", "loadavg_end", "wall_s"):
        assert key in payload
    entry = payload["models"]["python_loop"]
    assert set(entry["results"]) == {"torch_reference", "jax", "tensorflow", "torch"}
    for result in entry["results"].values():
        for key in ("steps_per_s", "items_per_s", "ratio_to_reference", "mfu", "bare_steps_per_s",
                    "peak_memory_mb", "loadavg_1min", "fit", "step"):
            assert key in result, key
        assert result["steps_per_s"] > 0 and result["peak_memory_mb"] > 0
    assert entry["results"]["torch_reference"]["ratio_to_reference"] == 1.0
    again = _bench("report", str(path))
    assert again.returncode == 0 and "| keras/torch" in again.stdout


def test_ssl_family_feeds_swav_two_sizes_of_crops_and_knows_every_model():
    from benchmarks import flops
    from benchmarks.families import ssl

    assert "swav" in ssl.MODELS and "densecl" in ssl.MODELS
    for model in ssl.MODELS:
        assert ssl.BATCH[model] > 0 and ssl.STEPS[model] > 0, model
        assert flops.ssl_step_flops(model, 8)["total"] > 0, model
    assert ssl.view_sizes("swav") == [32, 32] + [14] * 6  # the preset's 2 x 32 + 6 x 14 crops
    assert ssl.view_sizes("densecl") == [32, 32] and ssl.view_sizes("mae_vit_s16") == [224]
    views = ssl.make_views("swav", 3, nchw=True)
    assert [v.shape for v in views] == [(3, 3, 32, 32)] * 2 + [(3, 3, 14, 14)] * 6
