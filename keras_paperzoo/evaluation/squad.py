"""SQuAD answers from start / end logits (n-best, v2.0 null answer) and the official EM / F1.

Decoding follows BERT (Devlin et al. 2019, Sec. 4.2, 4.3) and its `run_squad.py`: in
every window of a question, the `n_best_size` highest start and end logits are paired
into spans i <= j of at most `max_answer_length` pieces, both in the passage and i in
the window that gives it the most context, scored S.T_i + E.T_j; the best over windows
is the answer. For SQuAD v2.0, "we compare the score of the no-answer span s_null =
S.C + E.C to the score of the best non-null span s_ij = max_{j>=i} S.T_i + E.T_j. We
predict a non-null answer when s_ij > s_null + tau, where the threshold tau is selected
on the dev set to maximize F1" (Sec. 4.3); s_null is the lowest over the windows.

EM and F1 are the official `evaluate-v2.0.py`'s (the same as v1.1's on answerable
questions): answers normalised by lower-casing, removing punctuation, the articles
a / an / the and extra white space; F1 over the bag of words; the best over the gold
answers; an unanswerable question's gold answer is "".

Example:

```python
predictions = decode_spans(examples, info, start_logits, end_logits, version_2=True)
squad_scores(examples, predictions)   # {"exact_match": 80.1, "f1": 83.2, "total": 11873, ...}
```
"""

import collections
import re
import string

import numpy as np

PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text):
    """Lower-case, drop punctuation, the articles a / an / the and extra white space (official script)."""
    text = "".join(ch for ch in text.lower() if ch not in PUNCTUATION)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def exact_match(prediction, gold):
    """1 when the normalised strings are equal, else 0."""
    return int(normalize_answer(prediction) == normalize_answer(gold))


def f1_score(prediction, gold):
    """Word-bag F1 of the normalised strings; when either is empty, 1 if both are, else 0."""
    predicted, truth = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not predicted or not truth:
        return float(predicted == truth)
    same = sum((collections.Counter(predicted) & collections.Counter(truth)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(truth)
    return 2 * precision * recall / (precision + recall)


def _gold_answers(example):
    answers = [a["text"] for a in example["answers"] if normalize_answer(a["text"])]
    return answers or [""]


def squad_scores(examples, predictions):
    """Official EM and F1 (x 100) of `predictions` ({id: text}) over `examples` (`read_squad`'s).

    A question without a prediction scores 0, as in the official script. Also
    `has_answer_*` and `no_answer_*` (SQuAD v2.0's split) where there are such questions.
    """
    scores = {"exact_match": [], "f1": [], "has_answer": []}
    for example in examples:
        gold = _gold_answers(example)
        prediction = predictions.get(example["id"])
        scores["has_answer"].append(gold != [""])
        scores["exact_match"].append(0 if prediction is None else max(exact_match(prediction, g) for g in gold))
        scores["f1"].append(0.0 if prediction is None else max(f1_score(prediction, g) for g in gold))
    has_answer = np.asarray(scores.pop("has_answer"), bool)
    result = {"total": len(examples)}
    for name, values in scores.items():
        values = 100.0 * np.asarray(values, "float64")
        result[name] = float(values.mean()) if len(values) else 0.0
        for part, rows in (("has_answer", has_answer), ("no_answer", ~has_answer)):
            if rows.any() and not rows.all():
                result[f"{part}_{name}"] = float(values[rows].mean())
    return result


def decode_spans(examples, info, start_logits, end_logits, n_best_size=20, max_answer_length=30, version_2=False,
                 null_score_diff_threshold=0.0, return_n_best=False):
    """Answer texts {id: text} from the (F, T) start and end logits of `squad_features` windows.

    Args:
        examples, info: `read_squad`'s examples and `squad_features`'s info.
        start_logits, end_logits: (F, T) arrays, the model's outputs for those windows.
        n_best_size: start and end candidates per window, and answers kept (20).
        max_answer_length: the longest answer in pieces (30).
        version_2: allow the null answer "" (SQuAD v2.0).
        null_score_diff_threshold: tau; "" when s_null - s_ij > tau (0.0; pick it on
            dev with `best_null_threshold`).
        return_n_best: also return {id: [(text, score), ...]} best first and the
            {id: s_null - s_ij} differences (v2.0; what `best_null_threshold` reads).

    Returns:
        {id: text}, or (that, n_best, null_differences) with `return_n_best`.
    """
    start_logits = np.asarray(start_logits, "float64")
    end_logits = np.asarray(end_logits, "float64")
    windows = collections.defaultdict(list)
    for row, index in enumerate(info["example_index"]):
        windows[int(index)].append(row)
    predictions, n_best, differences = {}, {}, {}
    for index, example in enumerate(examples):
        candidates, null_score = {}, np.inf
        for row in windows.get(index, []):
            start, end = start_logits[row], end_logits[row]
            spans, max_context = info["token_spans"][row], info["max_context"][row]
            null_score = min(null_score, start[0] + end[0])  # s_null = S.C + E.C
            for i in np.argsort(-start)[:n_best_size]:
                for j in np.argsort(-end)[:n_best_size]:
                    if spans[i, 0] < 0 or spans[j, 0] < 0 or not max_context[i]:
                        continue  # outside the passage, or i has more context in another window
                    if j < i or j - i + 1 > max_answer_length:
                        continue
                    text = example["context"][spans[i, 0]: spans[j, 1]]
                    score = start[i] + end[j]
                    candidates[text] = max(score, candidates.get(text, -np.inf))
        ranked = sorted(candidates.items(), key=lambda item: -item[1])[:n_best_size]
        best_text, best_score = ranked[0] if ranked else ("", -np.inf)
        if version_2:
            differences[example["id"]] = float(null_score - best_score)
            if null_score - best_score > null_score_diff_threshold:
                best_text = ""
            ranked = sorted(ranked + [("", null_score)], key=lambda item: -item[1])[:n_best_size]
        predictions[example["id"]] = best_text
        n_best[example["id"]] = [(text, float(score)) for text, score in ranked]
    return (predictions, n_best, differences) if return_n_best else predictions


def best_null_threshold(examples, n_best, differences):
    """The tau that maximises F1 on dev (Sec. 4.3), as the official v2.0 script's `find_best_thresh`.

    Args:
        examples: `read_squad`'s examples.
        n_best, differences: `decode_spans(..., version_2=True, return_n_best=True)`'s.

    Returns:
        (tau, F1 x 100 at tau); at tau a question is answered "" when its s_null - s_ij > tau.
    """
    if not examples:
        raise ValueError("best_null_threshold needs at least one example.")
    null_f1, answer_f1, difference = [], [], []
    for example in examples:
        gold = _gold_answers(example)
        texts = [text for text, _ in n_best.get(example["id"], []) if text]
        answer = texts[0] if texts else ""
        null_f1.append(max(f1_score("", g) for g in gold))
        answer_f1.append(max(f1_score(answer, g) for g in gold))
        difference.append(differences.get(example["id"], np.inf))
    order = np.argsort(difference, kind="stable")
    difference = np.asarray(difference, "float64")[order]
    null_f1, answer_f1 = np.asarray(null_f1)[order], np.asarray(answer_f1)[order]
    # tau below every difference: all null; tau = difference[k]: the first k + 1 answered, the rest null.
    taus = np.r_[difference[0] - 1.0 if np.isfinite(difference[0]) else 0.0, difference]
    answered = np.r_[0.0, np.cumsum(answer_f1)]
    nulls = np.r_[np.cumsum(null_f1[::-1])[::-1], 0.0]
    totals = answered + nulls
    valid = np.r_[True, np.r_[difference[1:] != difference[:-1], True]]  # the last of each run of equal taus
    totals = np.where(valid & np.isfinite(taus), totals, -np.inf)
    best = int(np.argmax(totals))
    return float(taus[best]), float(100.0 * totals[best] / len(examples))
