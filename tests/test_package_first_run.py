"""Issue 33, item 7: `paperzoo train` whose output goes to a file or pipe prints one progress line an
epoch (Keras verbose=2), no progress bars, and on JAX / torch no TensorFlow start-up logs (TensorFlow
is imported there as a library, by keras-hub)."""

import os
import subprocess
import sys

import pytest

EPOCHS = 2


@pytest.mark.one_leg("jax")
@pytest.mark.needs_tensorflow
def test_a_run_into_a_pipe_prints_a_line_an_epoch_and_no_tensorflow_logs(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    done = subprocess.run(
        [sys.executable, "-m", "keras_paperzoo", "train", "gan", "--backend", "jax", "--epochs", str(EPOCHS),
         "--steps-per-epoch", "2", "--parzen-samples", "20", "--image-size", "8", "--output-dir", str(tmp_path / "gan")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "\r" not in done.stdout and "\u2501" not in done.stdout
    lines = done.stdout.splitlines()
    assert [line for line in lines if line.startswith("Epoch ")] == [f"Epoch {e}/{EPOCHS}" for e in range(1, EPOCHS + 1)]
    assert sum("/step" in line for line in lines) == EPOCHS, done.stdout
    for chatter in ("oneDNN", "cuda", "absl::InitializeLog", "I0000"):
        assert chatter not in done.stderr, done.stderr


@pytest.mark.one_leg("torch")
def test_gan_without_epochs_runs_a_short_first_run_and_names_the_papers_schedule(tmp_path, capsys, monkeypatch):
    from keras_paperzoo.cli import main
    from keras_paperzoo.recipes import gan

    monkeypatch.setattr(gan, "DEFAULT_UPDATES", 4)  # 600 in a user's run: about a minute of CPU
    code = main(["train", "gan", "--steps-per-epoch", "2", "--batch-size", "50", "--image-size", "8",
                 "--parzen-samples", "20", "--output-dir", str(tmp_path), "--verbose", "0"])
    out = capsys.readouterr().out
    assert code == 0
    assert "gan: 2 epochs (4 updates)" in out and "the paper's schedule: --epochs 250" in out, out
