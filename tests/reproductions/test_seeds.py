"""`paperzoo reproduce PAPER --seeds N` (keras_paperzoo/reproductions/seeds.py): one process and folder per seed,
a seed already done kept, and each claim's mean and standard error over seeds, against NumPy."""

import json
import subprocess

import numpy as np
import pytest

from keras_paperzoo.cli import build_parser, main
from keras_paperzoo.reproductions import seeds

pytestmark = pytest.mark.backend_free("torch")


def _metrics(difference, holds, knn, extra_claim=False):
    claims = {"residual below plain": {"holds": holds, "difference_points": difference, "two_standard_errors_points": 1.4},
              "loss falls": {"holds": True, "first_epoch": 2.0, "last_epoch": 1.0}}
    if extra_claim:
        claims["named at one seed only"] = {"holds": True, "difference_points": 9.0}
    return {"budget": {"dataset": "cifar10", "epochs": 6, "steps_per_epoch": 100, "batch_size": 128, "seed": seed_of(knn),
                       "load_average_1_5_15_min": [knn, 0, 0]},
            "claims": claims, "runs": {"plain": {"knn_percent": knn, "wall_seconds": 12.0, "run": "plain"},
                                       "residual": {"knn_percent": knn + difference}}}


def seed_of(knn):
    return int(knn * 10)  # differs by seed, as a run's seed does


def _write_seed(output_dir, seed, metrics, name="resnet"):
    folder = seeds.seed_folder(output_dir, seed)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "resnet_cifar_metrics.json").write_text(json.dumps(metrics))
    (folder / f"reproduce_{name}.json").write_text(json.dumps({"device": "CPU: 2 cores (test)"}))


def test_spread_is_the_standard_error_of_the_mean_over_seeds():
    values = [12.1, 9.4, 14.0]
    s = seeds.spread(values)
    assert s["mean"] == pytest.approx(np.mean(values), abs=1e-4)
    assert s["se"] == pytest.approx(np.std(values, ddof=1) / np.sqrt(3), abs=1e-4)
    assert seeds.spread([3.0]) == {"per_seed": [3.0], "mean": 3.0, "se": None}


def test_combine_gathers_each_claim_and_run_over_seeds(tmp_path):
    differences, knn = [12.1, 9.4, 14.0], [60.0, 58.5, 61.2]
    for seed, (d, k) in enumerate(zip(differences, knn)):
        _write_seed(tmp_path, seed, _metrics(d, holds=seed != 1, knn=k, extra_claim=seed == 0))
    combined = seeds.combine("resnet", tmp_path, [0, 1, 2], "paperzoo reproduce resnet --seeds 3")
    claims = combined["files"]["resnet_cifar"]["claims"]
    claim = claims["residual below plain"]
    assert claim["per_seed"] == differences and claim["holds_at_seeds"] == 2 and claim["seeds"] == 3
    se = np.std(differences, ddof=1) / np.sqrt(3)
    assert claim["above_over_seeds"] == (np.mean(differences) > 2 * se) and claim["above_over_seeds"]
    assert "mean" not in claims["loss falls"] and claims["loss falls"]["holds_at_seeds"] == 3
    assert "named at one seed only" not in claims  # a claim is combined only where every seed states it
    runs = combined["files"]["resnet_cifar"]["runs"]
    assert runs["plain"] == {"knn_percent": seeds.spread(knn)}  # times and labels are not results
    assert runs["residual"]["knn_percent"]["per_seed"] == pytest.approx(np.add(knn, differences).tolist())
    written = json.loads((tmp_path / "resnet_seeds_metrics.json").read_text())
    assert written["seeds"] == [0, 1, 2] and written["devices"] == ["CPU: 2 cores (test)"]
    text = (tmp_path / "resnet_seeds_results.md").read_text()
    assert "| residual below plain | +12.10 / +9.40 / +14.00 | +11.83 ± 1.33 | yes | 2/3 |" in text
    assert "| plain | knn_percent | 60.00 / 58.50 / 61.20 | 59.90 ± 0.781 |" in text
    # the budget every seed shares, with the updates it makes, and not what differs by seed
    assert combined["files"]["resnet_cifar"]["budget"] == {"dataset": "cifar10", "epochs": 6, "steps_per_epoch": 100,
                                                           "batch_size": 128, "updates": 600}
    assert "Budget (every seed): dataset cifar10, epochs 6, steps_per_epoch 100, batch_size 128, updates 600" in text


def test_a_budget_entry_reads_as_text():
    # whole numbers with thousands commas, widths as the papers write them (conv 24-64-96), anything else as is
    assert seeds._budget_value(50000) == "50,000" and seeds._budget_value(600.0) == "600"
    assert seeds._budget_value([24, 64, 96]) == "24-64-96" and seeds._budget_value((256, 256)) == "256-256"
    assert seeds._budget_value(0.5) == "0.5" and seeds._budget_value("cifar10") == "cifar10"


def test_a_difference_within_two_standard_errors_over_seeds_is_not_above(tmp_path):
    for seed, d in enumerate([8.0, -6.0, 1.0]):  # each seed may pass its own test; the seeds disagree
        _write_seed(tmp_path, seed, _metrics(d, holds=d > 1.4, knn=50.0))
    claim = seeds.combine("resnet", tmp_path, [0, 1, 2], "c")["files"]["resnet_cifar"]["claims"]["residual below plain"]
    assert claim["mean"] == pytest.approx(1.0) and not claim["above_over_seeds"] and claim["holds_at_seeds"] == 1


def test_run_seeds_runs_each_seed_in_its_own_process_and_keeps_seeds_done(tmp_path):
    commands = []

    def run(command):
        commands.append(command)
        seed = int(command[command.index("--seed") + 1])
        _write_seed(tmp_path, seed, _metrics(10.0 + seed, True, 50.0))
        return subprocess.CompletedProcess(command, 0)

    seeds.run_seeds("resnet", "smoke", 2, ["--nets", "plain20_cifar", "--seed", "4"], tmp_path, "jax", run=run)
    assert [c[c.index("--seed") + 1] for c in commands] == ["4", "5"]
    assert commands[0][1:] == ["-m", "keras_paperzoo", "reproduce", "resnet", "--budget", "smoke", "--output-dir",
                               str(tmp_path / "seed-4"), "--backend", "jax", "--nets", "plain20_cifar", "--seed", "4"]
    # each seed's command is the plain `paperzoo reproduce ... --seed S`, as the CLI parses it
    args, extra = build_parser().parse_known_args(commands[1][3:])
    assert (args.paper, args.output_dir, args.seeds, extra) == ("resnet", str(tmp_path / "seed-5"), None,
                                                                ["--nets", "plain20_cifar", "--seed", "5"])
    combined = json.loads((tmp_path / "resnet_seeds_metrics.json").read_text())
    assert combined["seeds"] == [4, 5] and combined["command"] == (
        "paperzoo reproduce resnet --budget smoke --nets plain20_cifar --seeds 2")
    seeds.run_seeds("resnet", "smoke", 3, ["--seed", "4"], tmp_path, run=run)  # seeds 4 and 5 are kept
    assert [c[c.index("--seed") + 1] for c in commands] == ["4", "5", "6"]
    # the command as a shell takes it back: an argument with a space is quoted
    seeds.run_seeds("resnet", "smoke", 3, ["--nets", "fixed scale", "--seed", "4"], tmp_path, run=run)
    assert json.loads((tmp_path / "resnet_seeds_metrics.json").read_text())["command"] == (
        "paperzoo reproduce resnet --budget smoke --nets 'fixed scale' --seeds 3")


def test_a_failed_seed_stops_with_one_line_and_the_seeds_done_stay(tmp_path, capsys, monkeypatch):
    def run(command):
        seed = int(command[command.index("--seed") + 1])
        if seed == 1:
            return subprocess.CompletedProcess(command, 3)
        _write_seed(tmp_path, seed, _metrics(10.0, True, 50.0))
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(subprocess, "run", run)
    assert main(["reproduce", "resnet", "--seeds", "2", "--output-dir", str(tmp_path)]) == 2
    error = capsys.readouterr().err.strip()
    assert error == ("paperzoo: error: seed 1 of `paperzoo reproduce resnet` stopped with exit code 3 (its output is "
                     "above); run the same command again to continue from the seeds done")
    assert (tmp_path / "seed-0" / "reproduce_resnet.json").exists()


def test_bad_seeds_get_one_line(capsys, tmp_path):
    assert main(["reproduce", "resnet", "--output-dir", str(tmp_path), "--seeds", "0"]) == 2
    assert "argument --seeds: 0 must be at least 1" in capsys.readouterr().err
    assert main(["reproduce", "resnet", "--output-dir", str(tmp_path), "--seeds", "2", "--seed", "x"]) == 2
    assert capsys.readouterr().err == (
        "paperzoo: error: --seed 'x' is not an integer; --seeds N runs seeds --seed, --seed + 1, ...\n")
    assert not any(tmp_path.iterdir())  # nothing ran
