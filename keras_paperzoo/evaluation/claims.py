"""Is one accuracy above another by more than chance? Two binomial standard errors over the test images.

A reproduction at a small budget tells a difference from noise this way: accuracies
p and q measured on the same n test images differ by more than

    2 sqrt((p (1 - p) + q (1 - q)) / n)

(about 1.2 points for n = 5,000 near 75 %). The bound treats the two measurements
as independent, which overstates the noise of a paired comparison: a claim it
accepts holds; one it rejects is "not shown", not refuted.

Example:

```python
accuracy_above(84.0, 80.5, n=5000)
# {'holds': True, 'difference_points': 3.5, 'two_standard_errors_points': 1.53}
```
"""

import numpy as np


def two_standard_errors(p_percent, q_percent, n):
    """2 s.e. (points) of the difference of two accuracies (%) over `n` test images."""
    if not n or n < 1:
        raise ValueError(f"n (test images) must be >= 1; got {n!r}.")
    p, q = p_percent / 100.0, q_percent / 100.0
    return 200.0 * float(np.sqrt((p * (1 - p) + q * (1 - q)) / n))


def accuracy_above(better_percent, worse_percent, n):
    """{"holds", "difference_points", "two_standard_errors_points"}: is `better` above `worse` by > 2 s.e.?"""
    margin = two_standard_errors(better_percent, worse_percent, n)
    difference = better_percent - worse_percent
    return {"holds": bool(difference > margin), "difference_points": round(float(difference), 2),
            "two_standard_errors_points": round(margin, 2)}



def paired_bootstrap_above(metric, better, worse, labels, seed=0, resamples=200):
    """Is metric(better, labels) above metric(worse, labels) by more than 2 s.e. of a paired bootstrap?

    For a metric that is not a mean over the rows (NMI of two clusterings, mIoU), the
    standard error comes from `resamples` draws of the rows with replacement, the same
    rows for both (paired), seeded by `seed`.

    Args:
        metric: callable(predictions, labels) -> float.
        better, worse, labels: arrays with the rows on the first axis.

    Returns:
        {"holds", "difference", "two_standard_errors"} in the metric's units.

    Example:

    ```python
    paired_bootstrap_above(lambda p, y: float(np.mean(p == y)), np.ones(100), np.zeros(100), np.ones(100))
    # {'holds': True, 'difference': 1.0, 'two_standard_errors': 0.0}
    ```
    """
    better, worse, labels = np.asarray(better), np.asarray(worse), np.asarray(labels)
    if not (isinstance(resamples, int) and resamples >= 2):
        raise ValueError(f"resamples must be an int >= 2; got {resamples!r}.")
    difference = metric(better, labels) - metric(worse, labels)
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(resamples):
        rows = rng.integers(0, len(labels), len(labels))
        draws.append(metric(better[rows], labels[rows]) - metric(worse[rows], labels[rows]))
    margin = 2.0 * float(np.std(draws, ddof=1))
    return {"holds": bool(difference > margin), "difference": float(difference), "two_standard_errors": margin}

def claim_line(name, claim):
    """The claim as one Markdown list line: holds / not shown, and its numbers.

    A comparison (from `accuracy_above`) reads "(difference +3.50 points, 2 s.e. 1.53)";
    any other claim lists its numbers as they are ("(first_epoch 0.1, last_epoch 0.001)").
    """
    verdict = "holds" if claim["holds"] else "not shown"
    if "difference_points" in claim:
        detail = (f"difference {claim['difference_points']:+.2f} points, "
                  f"2 s.e. {claim['two_standard_errors_points']:.2f}")
    else:
        detail = ", ".join(f"{key} {value:.4g}" if isinstance(value, float) else f"{key} {value}"
                           for key, value in claim.items() if key != "holds")
    return f"- {name}: {verdict} ({detail})"
