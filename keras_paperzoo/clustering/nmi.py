"""Normalised mutual information between two clusterings (DeepCluster, Caron et al. 2018, Sec. 4.1, eq. 3).

NMI(A; B) = I(A; B) / sqrt(H(A) H(B)): 0 for independent assignments, 1 when one
determines the other (labels permuted or not). DeepCluster's Figure 2 plots it between
the clusters and the ImageNet labels (a) and between the assignments of consecutive
epochs (b). The geometric mean is the paper's (and scikit-learn's
`normalized_mutual_info_score(average_method="geometric")`).

Example:

```python
normalized_mutual_info([0, 0, 1, 1], [5, 5, 7, 7])   # 1.0
```
"""

import numpy as np


def normalized_mutual_info(a, b):
    """NMI(a; b) in [0, 1] of two integer labelings of the same N points (1.0 when both are constant)."""
    a, b = np.asarray(a).reshape(-1), np.asarray(b).reshape(-1)
    if len(a) != len(b):
        raise ValueError(f"normalized_mutual_info needs two labelings of the same points; got {len(a)} and {len(b)}.")
    _, a = np.unique(a, return_inverse=True)
    _, b = np.unique(b, return_inverse=True)
    joint = np.zeros((a.max() + 1, b.max() + 1), "float64")  # (|A|, |B|) counts
    np.add.at(joint, (a, b), 1.0)
    joint /= len(a)
    pa, pb = joint.sum(axis=1), joint.sum(axis=0)
    nonzero = joint > 0
    mutual = float(np.sum(joint[nonzero] * np.log(joint[nonzero] / np.outer(pa, pb)[nonzero])))
    ha, hb = -float(np.sum(pa * np.log(pa))), -float(np.sum(pb * np.log(pb)))
    if ha == 0.0 and hb == 0.0:
        return 1.0
    if ha == 0.0 or hb == 0.0:
        return 0.0
    return max(0.0, min(1.0, mutual / np.sqrt(ha * hb)))
