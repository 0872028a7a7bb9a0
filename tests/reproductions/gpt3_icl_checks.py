"""What `paperzoo reproduce gpt3 --budget smoke` must show (used by test_reproduce.py; not a test file itself)."""

import json

METRICS_FILE = "gpt3_icl_metrics.json"


def check_smoke_output(out, metrics):
    """Three models x K = 0, 1, 4, 8 on the held-out questions, accuracies and 2 s.e. consistent, claims, picture."""
    from PIL import Image

    b = metrics["budget"]
    assert b["shots"] == [0, 1, 4, 8] and b["updates"] == 8 and b["keys_per_task"] == 8
    n = metrics["evaluation_examples"]
    assert n == 2 * b["held_out_tasks_per_family"] * b["queries_per_task"] == 16
    for name in ("trained", "random init", "unigram"):
        assert sorted(metrics["accuracy"][name], key=int) == ["0", "1", "4", "8"]
        for row in metrics["accuracy"][name].values():
            correct = round(row["accuracy_percent"] * n / 100)
            assert abs(row["accuracy_percent"] - 100 * correct / n) < 0.01  # a count of the 16 questions
            p = correct / n
            two_se = 200 * (p * (1 - p) / (n - 1)) ** 0.5  # sample std (ddof 1) / sqrt(n)
            assert abs(row["two_standard_errors_points"] - two_se) < 0.02
    unigram = {row["accuracy_percent"] for row in metrics["accuracy"]["unigram"].values()}
    assert len(unigram) == 1  # blind to the prompt: the same at every K
    assert metrics["reader_accuracy_percent"] == {"0": 25.0, "1": 34.4, "4": 62.5, "8": 100.0}
    assert len(metrics["claims"]) == 4 and all("holds" in c for c in metrics["claims"].values())
    assert metrics["claims"]["unigram: flat (K = 8 within 2 s.e. of K = 0)"]["holds"]
    assert len(metrics["loss_per_chunk"]) == 1 and all(v > 0 for v in metrics["loss_per_chunk"])
    prompt = metrics["example_prompt_k8"]
    lines = prompt.split("\n")  # 8 shots "kv", then the question "k" and its answer after the arrow
    assert len(lines) == 9 and all(len(line) == 2 and line.isalpha() for line in lines[:8])
    assert lines[8][0] + lines[8][-1] in lines[:8]  # the question's pair is among the 8 shots
    text = (out / "gpt3_icl_results.md").read_text(encoding="utf-8")
    assert "| trained |" in text and "| random init |" in text and "| unigram |" in text and "67.2" in text
    assert Image.open(out / "gpt3_icl_curves.png").size == (640, 440)
    assert json.loads((out / METRICS_FILE).read_text()) == metrics
