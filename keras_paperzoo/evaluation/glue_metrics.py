"""The GLUE metrics beside accuracy (Wang et al. 2018; BERT, Devlin et al. 2019, Sec. 4.1, Table 1).

BERT's Table 1 reports F1 for QQP and MRPC, Spearman correlation for STS-B and
Matthews correlation for CoLA (accuracy elsewhere); GLUE's leaderboard adds accuracy
beside F1 and Pearson beside Spearman. Plain NumPy, the same numbers as
scikit-learn's `matthews_corrcoef` and `f1_score` and SciPy's `pearsonr` and
`spearmanr`.

Example:

```python
matthews_correlation([1, 0, 1, 1], [1, 0, 0, 1])   # 0.5773...
f1([1, 0, 1, 1], [1, 0, 0, 1])                      # 0.8
spearman([1.0, 2.0, 3.0], [0.1, 0.5, 0.4])          # 0.5
```
"""

import numpy as np


def _paired(name, labels, predictions):
    labels, predictions = np.asarray(labels).reshape(-1), np.asarray(predictions).reshape(-1)
    if len(labels) != len(predictions):
        raise ValueError(f"{name} needs one prediction per label; got {len(labels)} labels and "
                         f"{len(predictions)} predictions.")
    if not len(labels):
        raise ValueError(f"{name} needs at least one label.")
    return labels, predictions


def matthews_correlation(labels, predictions):
    """Matthews correlation coefficient (CoLA), in [-1, 1]; 0 when either side is constant.

    The multi-class form (Gorodkin 2004) from the confusion matrix C:
    (c s - sum_k p_k t_k) / sqrt((s^2 - sum_k p_k^2)(s^2 - sum_k t_k^2)), with c correct,
    s samples, t_k true and p_k predicted counts of class k; the two-class case is
    (TP TN - FP FN) / sqrt((TP + FP)(TP + FN)(TN + FP)(TN + FN)).
    """
    labels, predictions = _paired("matthews_correlation", labels, predictions)
    classes, indices = np.unique(np.concatenate([labels, predictions]), return_inverse=True)
    true, predicted = indices[: len(labels)], indices[len(labels):]
    true_counts = np.bincount(true, minlength=len(classes)).astype("float64")
    predicted_counts = np.bincount(predicted, minlength=len(classes)).astype("float64")
    correct, samples = float(np.sum(true == predicted)), float(len(labels))
    numerator = correct * samples - true_counts @ predicted_counts
    denominator = np.sqrt((samples**2 - predicted_counts @ predicted_counts) * (samples**2 - true_counts @ true_counts))
    return float(numerator / denominator) if denominator > 0 else 0.0


def f1(labels, predictions, positive=1):
    """F1 of the `positive` class (MRPC, QQP): 2 TP / (2 TP + FP + FN); 0 when there is no positive at all."""
    labels, predictions = _paired("f1", labels, predictions)
    true_positive = np.sum((predictions == positive) & (labels == positive))
    wrong = np.sum((predictions == positive) != (labels == positive))  # FP + FN
    total = 2 * true_positive + wrong
    return float(2 * true_positive / total) if total else 0.0


def pearson(labels, predictions):
    """Pearson correlation (STS-B): the covariance over the product of the standard deviations."""
    labels, predictions = _paired("pearson", labels, predictions)
    a = labels.astype("float64") - labels.mean()
    b = predictions.astype("float64") - predictions.mean()
    denominator = np.sqrt((a @ a) * (b @ b))
    if denominator == 0:
        raise ValueError("pearson is undefined when the labels or the predictions are constant.")
    return float(a @ b / denominator)


def _ranks(values):
    """Ranks 1..n, tied values sharing their mean rank (SciPy's rankdata 'average')."""
    order = np.argsort(values, kind="mergesort")
    sorted_values = values[order]
    starts = np.r_[True, sorted_values[1:] != sorted_values[:-1]]  # first of each run of ties
    group = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    last = np.r_[first[1:], len(values)] - 1
    ranks = np.empty(len(values), "float64")
    ranks[order] = (first[group] + last[group]) / 2.0 + 1.0
    return ranks


def spearman(labels, predictions):
    """Spearman rank correlation (STS-B, BERT's Table 1): Pearson of the ranks, ties at their mean rank."""
    labels, predictions = _paired("spearman", labels, predictions)
    return pearson(_ranks(labels.astype("float64")), _ranks(predictions.astype("float64")))


def accuracy(labels, predictions):
    """The fraction of predictions equal to their labels (most GLUE tasks)."""
    labels, predictions = _paired("accuracy", labels, predictions)
    return float(np.mean(labels == predictions))


# What GLUE reports per task (BERT's Table 1 shows the first of each).
TASK_METRICS = {
    "cola": (matthews_correlation,),
    "stsb": (spearman, pearson),
    "mrpc": (f1, accuracy),
    "qqp": (f1, accuracy),
    **{task: (accuracy,) for task in ("sst2", "mnli", "mnli_matched", "mnli_mismatched", "qnli", "rte", "wnli", "ax")},
}


def glue_metrics(task, labels, predictions):
    """The metrics GLUE reports for `task` (lower-case name, e.g. "cola", "stsb"), as {name: float}."""
    if task not in TASK_METRICS:
        raise ValueError(f"glue_metrics task {task!r} should be one of {', '.join(sorted(TASK_METRICS))}.")
    return {metric.__name__: metric(labels, predictions) for metric in TASK_METRICS[task]}
