"""keras_paperzoo/reproductions/bert_sst2.py runs end to end on a tiny stand-in for the shared data folder."""

import gzip
import json

import keras
import numpy as np
import pytest

from keras_paperzoo.reproductions import bert_sst2
from keras_paperzoo.reproductions.common import UsageError

pytestmark = pytest.mark.needs_tensorflow  # WordPiece and the tf.data pipelines


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


def _tiny(data, seeds="0,1"):
    return ["--data", str(data), "--layers", "1", "--hidden", "16", "--vocabulary-size", "120",
            "--sequence-length", "16", "--batch-size", "8", "--train-sentences", "16", "--finetune-epochs", "1",
            "--lr", "1e-4", "--finetune-seeds", seeds, "--verbose", "0"]


@pytest.mark.one_leg("torch")
@pytest.mark.slow(reason="a pre-training and four fine-tunings: about a minute on a quiet CPU")
def test_bert_sst2_tiny_budget(tmp_path):
    _fake_shared_data(tmp_path / "data")
    module = bert_sst2
    common = _tiny(tmp_path / "data")
    metrics = module.main(common + ["--output-dir", str(tmp_path / "out"), "--pretrain-steps", "2", "--save-at", "2",
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
    # An arm's error: the seeds' spread joined with the sampling error of one accuracy on the 8 dev sentences.
    values = np.array(row["pretrained"]["per_seed"])
    p = values.mean() / 100
    arm_two_se = 2 * np.hypot(values.std(ddof=1) / np.sqrt(2), 100 * np.sqrt(p * (1 - p) / 8))
    assert row["pretrained"]["two_se"] == pytest.approx(arm_two_se, abs=0.01)
    # Per-sentence results are saved (8 dev sentences), so the gain's error is the paired one, by hand:
    correct = {arm: np.array([[c == "1" for c in runs[f"{arm}/lr=0.0001/seed={s}"]["dev_correct"]] for s in (0, 1)],
                             dtype=float) for arm in ("pretrained", "random_init")}  # (seeds, sentences)
    assert correct["pretrained"].shape == (2, 8)
    assert 100 * correct["pretrained"].mean(1) == pytest.approx(
        [runs[f"pretrained/lr=0.0001/seed={s}"]["dev_accuracy_percent"] for s in (0, 1)], abs=0.01)
    per_sentence = 100 * (correct["pretrained"] - correct["random_init"]).mean(0)
    expected = 2 * np.sqrt(np.var(gains, ddof=1) / 2 + np.var(per_sentence, ddof=1) / 8)
    assert row["gain"]["paired"] and row["gain"]["two_se"] == pytest.approx(expected, abs=0.01)
    best = saved["best"]  # one rate: the best of each arm is it
    assert (best["pretrained_lr"], best["random_init_lr"]) == ("0.0001", "0.0001") and best["gain"] == row["gain"]
    assert saved["budget"]["pretrain_steps"] == 2 and len(saved["pretraining"]["loss"]) == 1
    table = (tmp_path / "out" / "bert_sst2_results.md").read_text()
    assert "| BERT-base (paper, GLUE test) | 93.5 | | |" in table
    # --save-at 2 saved the backbone after the last update, so its probe is the final backbone's.
    assert (tmp_path / "out" / "bert_sst2_backbone_2.keras").is_file()
    assert list(saved["probe"]) == ["0 (random init)", "2", "final"]
    assert saved["probe"]["2"] == saved["probe"]["final"]
    assert all(0.0 <= v <= 100.0 for row in saved["probe"].values() for v in row.values())
    assert "| final |" in table

    # Runs without per-sentence results (older metrics files) fall back to the unpaired bound.
    for run in saved["runs"].values():
        del run["dev_correct"]
    unpaired = module.summarise(saved)["summary"]["0.0001"]["gain"]
    p = np.mean([r["dev_accuracy_percent"] for r in saved["runs"].values()]) / 100
    bound = 2 * np.sqrt(np.var(gains, ddof=1) / 2 + 100**2 * 2 * p * (1 - p) / 872)
    assert not unpaired["paired"] and unpaired["two_se"] == pytest.approx(bound, abs=0.01)


@pytest.mark.slow(reason="a pre-training, two arms fine-tuned apart and merged, and a further pre-training")
@pytest.mark.one_leg("torch")
def test_bert_sst2_arms_apart_merged_and_pretrained_further(tmp_path):
    _fake_shared_data(tmp_path / "data")
    module = bert_sst2
    one_seed = _tiny(tmp_path / "data", seeds="0")
    first = module.main(one_seed + ["--output-dir", str(tmp_path / "out"), "--pretrain-steps", "2"])

    # The arms run apart (random init only, reusing the vocabulary), then merged.
    module.main(one_seed + ["--output-dir", str(tmp_path / "b"), "--pretrain-steps", "0", "--arms", "random_init",
                            "--vocabulary", str(tmp_path / "out" / "vocabulary.txt")])
    merged = module.main(["--merge", str(tmp_path / "out" / "bert_sst2_metrics.json"),
                          str(tmp_path / "b" / "bert_sst2_metrics.json"), "--output-dir", str(tmp_path / "m")])

    def results(runs):  # all but the wall time
        return {name: {k: v for k, v in run.items() if k != "seconds"} for name, run in runs.items()}

    assert results(merged["runs"]) == results(first["runs"])  # random init is deterministic per seed
    assert merged["summary"] == first["summary"] and merged["pretraining"] == first["pretraining"]

    # Pre-training further from a saved backbone, with other masks: a new schedule, the saved weights as the start.
    more = module.main(one_seed + ["--output-dir", str(tmp_path / "c"), "--arms", "pretrained", "--pretrain-steps", "2",
                                   "--pretrain-from", str(tmp_path / "out" / "bert_sst2_backbone.keras"),
                                   "--pretrain-seed", "1", "--vocabulary", str(tmp_path / "out" / "vocabulary.txt")])
    assert more["budget"]["pretrain_from"].endswith("bert_sst2_backbone.keras") and len(more["pretraining"]["loss"]) == 1
    start, end = (keras.saving.load_model(f) for f in (tmp_path / "out" / "bert_sst2_backbone.keras",
                                                       tmp_path / "c" / "bert_sst2_backbone.keras"))
    before = [keras.ops.convert_to_numpy(w) for w in start.weights]
    after = [keras.ops.convert_to_numpy(w) for w in end.weights]
    assert all(np.abs(a - b).max() < 0.05 for a, b in zip(before, after))  # a random init is ~0.02 per weight away
    assert any(np.abs(a - b).max() > 0 for a, b in zip(before, after))


def test_bert_sst2_refuses_bad_arguments_in_one_line(tmp_path, capsys):
    """Bad values are refused before anything is read or written, in one line naming the value and the rule."""
    module = bert_sst2
    backbone = tmp_path / "backbone.keras"
    backbone.write_bytes(b"")  # only its existence is checked before refusing
    _fake_shared_data(tmp_path / "data")
    refusals = [
        (["--pretrain-steps", "2", "--save-at", "3"], "--save-at [3]: each must be a multiple of 2"),
        (["--save-at", "2", "--pretrained", str(backbone)],
         "--save-at 2 needs this run to pre-train"),
        (["--save-at", "4k"], "--save-at '4k': expected comma-separated update counts"),
        (["--lr", "3e-4;1e-3"], "--lr '3e-4;1e-3': expected a comma-separated list of float values"),
        (["--pretrain-from", str(tmp_path / "nowhere.keras")], "nowhere.keras: no such file"),
        (["--pretrain-from", str(backbone), "--pretrained", str(backbone)], "--pretrain-from and --pretrained"),
        (["--pretrained", str(tmp_path / "backbone.h5")], "backbone.h5: no such file"),
        (["--vocabulary", str(tmp_path / "vocab.txt")], "vocab.txt: no such file"),
        (["--pretrained", str(tmp_path / "data" / "sst2" / "dev.tsv")], "dev.tsv: expected a .keras file"),
    ]
    for extra, message in refusals:
        with pytest.raises(UsageError) as refused:
            module.main(_tiny(tmp_path / "data") + ["--output-dir", str(tmp_path / "bad")] + extra)
        assert message in str(refused.value) and "\n" not in str(refused.value)
    assert not (tmp_path / "bad").exists()
