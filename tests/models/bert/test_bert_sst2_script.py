"""applications/bert_sst2.py runs end to end on a tiny stand-in for the shared data folder."""

import gzip
import json

import pytest

from tests.applications.scripts import load_application


def _fake_shared_data(root):
    (root / "multi30k").mkdir(parents=True)
    (root / "sst2").mkdir()
    lines = ["First Citizen:", "Before we proceed any further, hear me speak.", "", "All:", "Speak, speak."] * 20
    (root / "tinyshakespeare.txt").write_text("\n".join(lines) + "\n")
    with gzip.open(root / "multi30k" / "train.en.gz", "wt") as f:
        f.write("\n".join(f"a dog runs on the grass number {i} ." for i in range(40)) + "\n")
    good = [f"a fine and moving film {i} ." for i in range(12)]
    bad = [f"a dull and tired film {i} ." for i in range(12)]
    rows = [f"{s}\t1" for s in good] + [f"{s}\t0" for s in bad]
    (root / "sst2" / "train.tsv").write_text("sentence\tlabel\n" + "\n".join(rows) + "\n")
    (root / "sst2" / "dev.tsv").write_text("sentence\tlabel\n" + "\n".join(rows[::3]) + "\n")


@pytest.mark.slow  # a pre-training and four fine-tunings: about a minute on a quiet CPU
def test_bert_sst2_tiny_budget(tmp_path, capsys):
    _fake_shared_data(tmp_path / "data")
    module = load_application("bert_sst2")
    common = ["--data", str(tmp_path / "data"), "--layers", "1", "--hidden", "16", "--vocabulary-size", "120",
              "--sequence-length", "16", "--batch-size", "8", "--train-sentences", "16", "--finetune-epochs", "1",
              "--lr", "1e-4", "--finetune-seeds", "0,1", "--verbose", "0"]
    metrics = module.main(common + ["--output", str(tmp_path / "out"), "--pretrain-steps", "2", "--save-at", "2",
                                    "--probe"])
    saved = json.loads((tmp_path / "out" / "bert_sst2_metrics.json").read_text())
    assert saved == json.loads(json.dumps(metrics))
    runs = saved["runs"]
    assert sorted(runs) == [f"{arm}/lr=0.0001/seed={s}" for arm in ("pretrained", "random_init") for s in (0, 1)]
    for run in runs.values():
        assert 0.0 <= run["dev_accuracy_percent"] <= 100.0
    row = saved["summary"]["0.0001"]
    gains = [runs[f"pretrained/lr=0.0001/seed={s}"]["dev_accuracy_percent"]
             - runs[f"random_init/lr=0.0001/seed={s}"]["dev_accuracy_percent"] for s in (0, 1)]
    assert row["gain"]["per_seed"] == pytest.approx(gains, abs=0.01)
    assert row["gain"]["mean"] == pytest.approx(sum(gains) / 2, abs=0.01)
    assert row["gain"]["two_se"] > 0 and row["pretrained"]["two_se"] > 0
    assert saved["budget"]["pretrain_steps"] == 2 and len(saved["pretraining"]["loss"]) == 1
    table = (tmp_path / "out" / "bert_sst2_results.md").read_text()
    assert "| BERT-base (paper, GLUE test) | 93.5 | | |" in table
    # --save-at 2 saved the backbone after the last update, so its probe is the final backbone's.
    assert (tmp_path / "out" / "bert_sst2_backbone_2.keras").is_file()
    assert list(saved["probe"]) == ["0 (random init)", "2", "final"]
    assert saved["probe"]["2"] == saved["probe"]["final"]
    assert all(0.0 <= v <= 100.0 for row in saved["probe"].values() for v in row.values())
    assert "| final |" in table

    # The arms run apart (random init only, reusing the vocabulary), then merged: the same summary.
    module.main(common + ["--output", str(tmp_path / "b"), "--pretrain-steps", "0", "--arms", "random_init",
                          "--vocabulary", str(tmp_path / "out" / "vocabulary.txt")])
    merged = module.main(["--merge", str(tmp_path / "out" / "bert_sst2_metrics.json"),
                          str(tmp_path / "b" / "bert_sst2_metrics.json"), "--output", str(tmp_path / "m")])
    assert merged["summary"]["0.0001"]["random_init"] == row["random_init"]  # random init is deterministic per seed

    # Bad values are refused before anything is read or written, in one line naming the value and the rule.
    refusals = [
        (["--pretrain-steps", "2", "--save-at", "3"], "--save-at [3]: each must be a multiple of 2"),
        (["--save-at", "2", "--pretrained", str(tmp_path / "out" / "bert_sst2_backbone.keras")],
         "--save-at 2 needs this run to pre-train"),
        (["--save-at", "4k"], "--save-at '4k': expected comma-separated update counts"),
        (["--lr", "3e-4;1e-3"], "--lr '3e-4;1e-3': expected a comma-separated list of float values"),
    ]
    for extra, message in refusals:
        with pytest.raises(SystemExit):
            module.main(common + ["--output", str(tmp_path / "bad")] + extra)
        assert message in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()
