"""keras_paperzoo/reproductions/transformer_multi30k.py: a tiny budget on real Multi30k pairs writes its report."""

import json

import keras
import pytest

from keras_paperzoo.reproductions import transformer_multi30k as app

pytestmark = pytest.mark.needs_tensorflow  # the translation batches are tf.data


@pytest.mark.one_leg("torch")
def test_tiny_budget_writes_metrics_and_results(tmp_path, shared_data):
    pytest.importorskip("sacrebleu")
    metrics = app.main([
        "--data", str(shared_data / "multi30k"), "--preset", "transformer_tiny", "--updates", "2",
        "--batch-size", "16", "--train-pairs", "64", "--test-pairs", "3", "--beam-size", "2",
        "--vocabulary-size", "300", "--output-dir", str(tmp_path), "--verbose", "0",
        "--updates-per-epoch", "1", "--average-last", "2", "--buckets", "24,64", "--warmup-steps", "1",
    ])
    saved = json.loads((tmp_path / "transformer_multi30k_metrics.json").read_text())
    assert saved["total_updates"] == 2 and saved["test_pairs"] == 3 and saved["train_pairs"] == 64
    assert saved["averaged_snapshots"] == ["epoch_0001.npz", "epoch_0002.npz"] and saved["buckets"] == [24, 64]
    assert saved["dataset"] == "multi30k" and saved["backend"] == keras.backend.backend()
    assert saved["samples"][0]["reference"].startswith("A man in an orange hat")
    report = (tmp_path / "transformer_multi30k_results.md").read_text()
    assert f"| {metrics['test_bleu']:.2f} |" in report and "mid-30s" in report
