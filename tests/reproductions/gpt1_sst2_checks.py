"""What `paperzoo reproduce gpt1 --budget smoke` must show (used by test_reproduce.py; not a test file itself)."""

METRICS_FILE = "gpt1_sst2_metrics.json"


def check_smoke_output(out, metrics):
    """Both parts ran both arms with one seed; the summaries, zero-shot scores and claims are there and in range."""
    assert set(metrics["parts"]) == {"sst2", "choice"} and metrics["budget"]["data"] == "sample"
    sst2, choice = metrics["parts"]["sst2"], metrics["parts"]["choice"]
    assert sst2["task"] == "sample_sentiment" and sst2["train_sentences"] == 32 and sst2["dev_sentences"] == 100
    assert sorted(sst2["runs"]) == ["pretrained/lr=0.001/seed=0", "random_init/lr=0.001/seed=0"]
    assert sorted(choice["runs"]) == ["pretrained/lr=0.001/seed=0", "random_init/lr=0.001/seed=0"]
    # 12 names, 4 labelled: 2 questions (ball colour, city) per name, 4 answers each.
    assert (choice["train_questions"], choice["test_questions"], choice["choices"]) == (8, 16, 4)
    for part, n in ((sst2, 100), (choice, 16)):
        for run in part["runs"].values():
            assert len(run["dev_correct"]) == n and set(run["dev_correct"]) <= {"0", "1"}
            assert run["dev_accuracy_percent"] == round(100 * run["dev_correct"].count("1") / n, 2)
        assert part["best"] and part["best"]["gain"]["paired"]
        zero_shot = part["zero_shot"]
        assert len(zero_shot["pretrained_correct"]) == n and 0 <= zero_shot["pretrained_percent"] <= 100
    assert sst2["runs"]["pretrained/lr=0.001/seed=0"]["updates"] == 4  # 32 sentences / batch 8 x 1 epoch
    assert list(sst2["zero_shot"]["by_updates"]) == ["0", "2", "4"]
    assert len(metrics["claims"]) == 4 and all("holds" in c for c in metrics["claims"].values())
    text = (out / "gpt1_sst2_results.md").read_text(encoding="utf-8")
    assert "| GPT-1 (paper; SST-2 test, Table 4 / Table 5 without pre-training) | 91.3 | 84.0 | +7.3 |" in text
    assert "(b) synthetic multiple choice: 8 labelled questions, 16 on held-out names, 4 answers" in text
