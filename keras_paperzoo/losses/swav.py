"""SwAV's swapped prediction loss (Caron et al. 2020, https://arxiv.org/abs/2006.09882, Sec. 3.1).

Each crop t of an image has scores s_t = z_t . C against the K prototypes. The codes
q_s of an assignment crop s (one of the full-size crops; `sinkhorn`) are the
targets that every *other* crop t must predict from its own scores:

    l(z_t, q_s) = - sum_k q_s^(k) log p_t^(k),   p_t = softmax(z_t . C / tau)    (eq. 2)

summed over the pairs (s, t != s) (eq. 1 for two crops: l(z_t, q_s) + l(z_s, q_t);
eq. 4 with multi-crop). As the authors' `main_swav.py` does, the sum over the other
crops t is divided by their number (V - 1) and the sum over assignment crops by
theirs, so that the loss is the mean cross-entropy per pair: ln K when every
prediction is uniform (the collapse the authors warn of: "loss stuck at ln K"),
whatever the number of crops.

Example:

```python
scores = [keras.random.normal((8, 30)) * 0.3 for _ in range(4)]   # 2 x full-size + 2 x small crops
codes = [sinkhorn(scores[0]), sinkhorn(scores[1])]                  # from the assignment crops 0 and 1
loss = swav_loss(scores, codes, crops_for_assign=(0, 1))            # about ln 30 here
```
"""

import numbers

from keras import ops

TEMPERATURE = 0.1  # SwAV's --temperature


def swav_loss(scores, codes, crops_for_assign=(0, 1), temperature=TEMPERATURE):
    """The swapped prediction loss (SwAV eq. 1-2, 4), mean per (assignment crop, other crop) pair, in float32.

    Args:
        scores: a list of V (B, K) scores z_t . C, one per crop (the assignment crops
            among them, at the indices `crops_for_assign`).
        codes: a list of (B, K) codes, one per assignment crop (targets: under
            stop-gradient here).
        crops_for_assign: the indices in `scores` of the crops the codes come from
            ((0, 1): the two full-size crops).
        temperature: tau > 0 of the softmax (0.1).

    Returns:
        Float32 scalar: the mean over pairs (s, t != s) of the batch-mean cross-entropy
        between q_s and softmax(s_t / tau).
    """
    if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real) or not temperature > 0:
        raise ValueError(f"swav_loss's temperature must be a number > 0; got temperature={temperature!r}.")
    scores = list(scores)
    crops_for_assign = [int(i) for i in crops_for_assign]
    if len(codes) != len(crops_for_assign):
        raise ValueError(f"swav_loss takes one code per assignment crop: {len(crops_for_assign)} crops_for_assign "
                         f"{crops_for_assign}, got {len(codes)} codes.")
    if len(scores) < 2 or any(not 0 <= i < len(scores) for i in crops_for_assign):
        raise ValueError(f"swav_loss's crops_for_assign {crops_for_assign} must index the {len(scores)} crops' scores "
                         "(at least 2 crops).")
    log_p = [ops.log_softmax(ops.cast(s, "float32") / temperature, axis=-1) for s in scores]  # V x (B, K)
    total = 0.0
    for code, s in zip(codes, crops_for_assign):
        q = ops.stop_gradient(ops.cast(code, "float32"))  # (B, K) targets
        others = [t for t in range(len(scores)) if t != s]
        subloss = sum(-ops.mean(ops.sum(q * log_p[t], axis=-1)) for t in others)  # sum over t != s of l(z_t, q_s)
        total = total + subloss / len(others)
    return total / len(crops_for_assign)
