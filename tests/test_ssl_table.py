"""`python -m benchmarks ssl-table` (issue 36 item 3): the smoke table's structure, the resume skip, the s.e. arithmetic.

The end-to-end test trains two rows at the smoke budget in this process (embedded digits, 2
updates): the random-init row at seeds 0 and 1 and SimCLR at seed 0, then runs the command
again and checks that nothing is retrained. The aggregate's arithmetic (mean, s.e. over
seeds, the paired 2-s.e. test against the initialisation) is checked against NumPy on
records written by hand.
"""

import json

import numpy as np
import pytest

from benchmarks.ssl_table import methods, references, runs, table


def _record(row, seed, knn, probe, knn_init, probe_init, minutes=1.0):
    return {"row": row, "label": methods.LABELS[row], "seed": seed, "encoder": methods.encoder_of(row),
            "knn_percent": knn, "probe_percent": probe, "knn_percent_at_init": knn_init,
            "probe_percent_at_init": probe_init, "updates": 10, "final_loss": 1.0, "encoder_parameters": 5,
            "minutes": minutes, "cpu_minutes": minutes}


def _se(values):
    return float(np.std(values, ddof=1) / np.sqrt(len(values)))


@pytest.mark.backend_free("tensorflow")
def test_aggregate_mean_se_and_the_two_se_test_against_numpy(tmp_path):
    knn, init = [70.0, 74.0, 71.5], [60.0, 61.0, 59.5]
    probe, probe_init = [80.0, 80.5, 81.5], [80.0, 80.0, 81.0]
    for seed in range(3):
        runs.write_json(runs.result_path(tmp_path, "byol", seed),
                        _record("byol", seed, knn[seed], probe[seed], init[seed], probe_init[seed], minutes=seed + 1))
        runs.write_json(runs.result_path(tmp_path, "cmc", seed), _record("cmc", seed, 50.0 + seed, 50, 52.0, 50))
    runs.write_json(runs.result_path(tmp_path, "mae", 0), _record("mae", 0, 40.0, 40.0, 30.0, 30.0))
    out = table.aggregate(tmp_path)
    byol = out["rows"]["byol"]
    assert byol["knn_mean"] == pytest.approx(np.mean(knn))
    assert byol["knn_se"] == pytest.approx(_se(knn))
    gain = np.subtract(knn, init)
    assert byol["knn_gain_mean"] == pytest.approx(gain.mean())
    assert byol["knn_gain_se"] == pytest.approx(_se(gain))
    assert byol["knn_beats_random_init"] is True  # gain 11.67 +- 1.01
    probe_gain = np.subtract(probe, probe_init)  # 0.33 +- 0.17: not above 2 s.e.
    assert byol["probe_gain_se"] == pytest.approx(_se(probe_gain))
    assert byol["probe_beats_random_init"] is bool(probe_gain.mean() > 2 * _se(probe_gain)) is False
    assert byol["minutes_mean"] == pytest.approx(2.0)
    assert out["rows"]["cmc"]["knn_beats_random_init"] is False and "grey" in out["rows"]["cmc"]["why_not"]
    assert out["rows"]["mae"]["knn_se"] is None and out["rows"]["mae"]["knn_beats_random_init"] is None  # one seed
    text = (tmp_path / "table.md").read_text()
    assert f"| BYOL (3 seeds) | {methods.encoder_of('byol')} | {np.mean(knn):.1f} +- {_se(knn):.1f} |" in text
    assert f"yes ({gain.mean():.1f} +- {_se(gain):.1f})" in text
    assert "| MAE (1 seeds) |" in text and "n/a (10.0)" in text
    assert "- CMC: grey digits" in text
    assert f"{references.LIGHTLY['byol'][0]} / {references.LIGHTLY['byol'][1]}" in text
    assert references.LIGHTLY_URL in text and references.SOLO_LEARN_URL in text


@pytest.mark.backend_free("tensorflow")
def test_a_claimed_run_is_skipped_and_a_dead_claim_taken_over(tmp_path):
    assert runs.claim(tmp_path, "simclr", 0)
    assert not runs.claim(tmp_path, "simclr", 0)  # this process holds it
    runs.result_path(tmp_path, "simclr", 0).with_suffix(".claim").write_text("999999999")  # no such process
    assert runs.claim(tmp_path, "simclr", 0)
    runs.release(tmp_path, "simclr", 0)
    runs.write_json(runs.result_path(tmp_path, "simclr", 0), {"row": "simclr"})
    assert not runs.claim(tmp_path, "simclr", 0)  # finished


@pytest.mark.one_leg("torch")  # 5 s on torch, 16-33 s on JAX (compiling); the harness is the same on every leg
def test_smoke_table_runs_and_resumes(tmp_path, capsys):
    import keras

    from benchmarks import cli

    argv = ["ssl-table", "--budget", "smoke", "--rows", "random_init", "simclr", "--seeds", "0", "1",
            "--output", str(tmp_path), "--run-id", "smoke"]
    runs.write_json(runs.result_path(tmp_path / "smoke", "simclr", 1),  # as if another process had done it
                    _record("simclr", 1, 50.0, 50.0, 40.0, 40.0))
    assert cli.main(argv) == 0
    folder = tmp_path / "smoke"
    done = sorted(path.name for path in (folder / "runs").glob("*.json"))
    assert done == ["random_init_seed0.json", "random_init_seed1.json", "simclr_seed0.json", "simclr_seed1.json"]
    record = json.loads((folder / "runs" / "simclr_seed0.json").read_text())
    for key in ("knn_percent", "probe_percent", "knn_percent_at_init", "minutes", "updates", "final_loss", "device",
                "date", "backend", "versions", "budget"):
        assert key in record, key
    assert record["updates"] == 2 and record["backend"] == keras.backend.backend() and 0 <= record["knn_percent"] <= 100
    random_init = [json.loads((folder / "runs" / f"random_init_seed{s}.json").read_text()) for s in (0, 1)]
    # SimCLR's trainer builds the shared ResNet from the seed: at initialisation it is the random-init row's encoder
    assert record["knn_percent_at_init"] == random_init[0]["knn_percent"]
    out = json.loads((folder / "table.json").read_text())
    assert set(out["rows"]) == {"random_init", "simclr"} and out["budget"]["name"] == "smoke"
    knn = [r["knn_percent"] for r in random_init]
    assert out["rows"]["random_init"]["knn_mean"] == pytest.approx(np.mean(knn))
    assert out["rows"]["random_init"]["knn_se"] == pytest.approx(_se(knn))
    assert "| random init (2 seeds) |" in (folder / "table.md").read_text()
    stamps = {path.name: path.stat().st_mtime_ns for path in (folder / "runs").glob("*.json")}
    capsys.readouterr()
    assert cli.main(argv) == 0  # again: every run is finished, none is retrained
    assert ": start (" not in capsys.readouterr().out
    assert stamps == {path.name: path.stat().st_mtime_ns for path in (folder / "runs").glob("*.json")}
