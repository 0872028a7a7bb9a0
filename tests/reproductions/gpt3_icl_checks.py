"""What `paperzoo reproduce gpt3 --budget smoke` must show (used by test_reproduce.py; not a test file itself)."""

import json

METRICS_FILE = "gpt3_icl_metrics.json"


def check_smoke_output(out, metrics):
    """Four models x K = 0, 1, 4, 8 on one seed's questions, accuracies and 2 s.e. consistent, claims, picture."""
    from PIL import Image

    b = metrics["budget"]
    assert b["shots"] == [0, 1, 4, 8] and b["updates"] == 8 and b["seeds"] == [0]
    n = metrics["questions_per_seed"]["headline (shift + digits)"]
    assert n == 2 * b["episodes_per_set"] * b["queries_per_episode"] == 8
    assert metrics["questions_per_seed"]["shift, held out"] == 4
    for name in ("trained", "random init", "unigram", "copy-and-exclude"):
        assert sorted(metrics["accuracy"][name], key=int) == ["0", "1", "4", "8"]
        for row in metrics["accuracy"][name].values():
            correct = round(row["accuracy_percent"] * n / 100)
            assert abs(row["accuracy_percent"] - 100 * correct / n) < 0.01  # a count of the 8 questions
            assert row["per_seed_percent"] == [row["accuracy_percent"]]
            p = correct / n
            assert abs(row["two_standard_errors_points"] - 200 * (max(p * (1 - p), 1e-12) / n) ** 0.5) < 0.02
    unigram = {row["accuracy_percent"] for row in metrics["accuracy"]["unigram"].values()}
    assert len(unigram) == 1  # blind to the prompt: the same at every K
    assert len(metrics["claims"]) == 10 and all("holds" in c for c in metrics["claims"].values())
    assert metrics["claims"]["unigram: flat (K = 8 within 2 s.e. of K = 0)"]["holds"]
    assert len(metrics["loss_per_chunk"]["0"]) == 1 and all(v > 0 for v in metrics["loss_per_chunk"]["0"])
    prompt = metrics["example_prompts_k8"]["shift"]
    lines = prompt.split("\n")  # 8 shots "xy", then the question "x", its answer after the arrow, the choices
    assert len(lines) == 9 and all(len(line) == 2 and line.isalpha() for line in lines[:8])
    assert lines[8][0] not in {line[0] for line in lines[:8]}  # the question's input is not among the shots
    text = (out / "gpt3_icl_results.md").read_text(encoding="utf-8")
    assert "| trained |" in text and "| random init |" in text and "| copy-and-exclude |" in text and "67.2" in text
    assert Image.open(out / "gpt3_icl_curves.png").size == (640, 440)
    assert json.loads((out / METRICS_FILE).read_text()) == metrics
    assert (out / "gpt3_icl_run" / "seed_0.json").is_file()  # the per-seed record --resume reads back
