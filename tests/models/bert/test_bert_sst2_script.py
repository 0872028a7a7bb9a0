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


@pytest.mark.slow  # a pre-training and two fine-tunings: four compiled steps, about a minute on a quiet CPU
def test_bert_sst2_tiny_budget(tmp_path):
    _fake_shared_data(tmp_path / "data")
    module = load_application("bert_sst2")
    metrics = module.main([
        "--data", str(tmp_path / "data"), "--output", str(tmp_path / "out"), "--layers", "1", "--hidden", "16",
        "--vocabulary-size", "120", "--sequence-length", "16", "--batch-size", "8", "--pretrain-steps", "2",
        "--train-sentences", "16", "--finetune-epochs", "1", "--verbose", "0",
    ])
    saved = json.loads((tmp_path / "out" / "bert_sst2_metrics.json").read_text())
    assert saved == json.loads(json.dumps(metrics))
    runs = saved["runs"]
    assert set(runs) == {"pretrained", "random_init"}
    for run in runs.values():
        assert 0.0 <= run["dev_accuracy_percent"] <= 100.0
    gain = runs["pretrained"]["dev_accuracy_percent"] - runs["random_init"]["dev_accuracy_percent"]
    assert abs(saved["pretraining_gain_points"] - gain) < 1e-6
    assert saved["budget"]["pretrain_steps"] == 2 and len(saved["pretraining"]["loss"]) == 1
    table = (tmp_path / "out" / "bert_sst2_results.md").read_text()
    assert "| BERT-base (paper, GLUE test) | 93.5 |" in table
