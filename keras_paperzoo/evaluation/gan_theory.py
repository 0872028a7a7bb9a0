"""Section 4 of Goodfellow et al. (2014), "Generative Adversarial Nets", on grids.

Densities are NumPy arrays (or any array convertible with ``numpy.asarray``:
TensorFlow, JAX and CPU PyTorch tensors) evaluated on an evenly spaced grid of
spacing ``dx``; integrals become ``sum(...) * dx``. With ``dx=1`` the same
functions work on discrete distributions. Logs are natural (nats) and
0 log 0 = 0 throughout. The computations run in float64 NumPy because the
identities below are checked to 1e-6; they serve the tests and the 1-D toy of
Figure 1, not training.

Results implemented:
    Proposition 1 (eq. 2): D*_G(x) = p_data(x) / (p_data(x) + p_g(x)).
    Eq. 3 (eq. 1 after the change of variables x = G(z)):
        V(G, D) = int p_data log D + p_g log(1 - D) dx.
    Eq. 4: C(G) = max_D V(G, D) = E_pdata[log D*_G] + E_pg[log(1 - D*_G)].
    Theorem 1 (eqs. 5-6): C(G) = -log 4 + 2 JSD(p_data || p_g) >= -log 4,
        with equality iff p_g = p_data.
"""

import numpy as np
from scipy import special, stats


def optimal_discriminator(p_data, p_g):
    """The optimal discriminator for a fixed generator (Proposition 1, eq. 2).

    D*_G(x) = p_data(x) / (p_data(x) + p_g(x)). Pointwise this maximises
    y -> a log y + b log(1 - y) with a = p_data(x), b = p_g(x); that function is
    concave on (0, 1) (second derivative -a/y^2 - b/(1-y)^2 < 0), so a/(a+b) is
    its unique maximiser. Where p_data + p_g == 0 (outside both supports) the
    value does not affect V(G, D) and we return 0.5, the no-information answer.

    Args:
        p_data: non-negative array, data density (or probabilities).
        p_g: non-negative array broadcastable with ``p_data``, model density.

    Returns:
        float64 array of D* values in [0, 1], of the broadcast shape.

    Example:
        >>> optimal_discriminator([1.0, 0.0, 0.0], [3.0, 2.0, 0.0]).tolist()
        [0.25, 0.0, 0.5]
    """
    p_data, p_g = np.broadcast_arrays(_density("p_data", p_data), _density("p_g", p_g))
    total = p_data + p_g
    safe = np.where(total > 0, total, 1.0)
    return np.where(total > 0, p_data / safe, 0.5)


def kl_divergence(p, q, dx=1.0):
    """KL(p || q) = int p log(p / q) dx (used in Theorem 1, eq. 5).

    0 log(0 / q) = 0; a point with p > 0 and q == 0 makes the divergence +inf.

    Args:
        p: non-negative array, density on a grid (or probabilities if dx=1).
        q: non-negative array of the same shape.
        dx: grid spacing (> 0).

    Returns:
        Python float in nats; not symmetric in p and q.

    Example:
        >>> round(kl_divergence([0.5, 0.5], [0.9, 0.1]), 6)
        0.510826
    """
    p, q = _density_pair(p, q)
    return float(np.sum(special.rel_entr(p, q)) * _check_dx(dx))


def js_divergence(p, q, dx=1.0):
    """Jensen-Shannon divergence (Theorem 1, eq. 6).

    JSD(p || q) = KL(p || m) / 2 + KL(q || m) / 2 with m = (p + q) / 2;
    symmetric, in [0, log 2] for normalised p and q, and 0 iff p == q.

    Args:
        p: non-negative array, density on a grid (or probabilities if dx=1).
        q: non-negative array of the same shape.
        dx: grid spacing (> 0).

    Returns:
        Python float in nats.

    Example:
        >>> round(js_divergence([1.0, 0.0], [0.0, 1.0]), 6)  # disjoint: log 2
        0.693147
    """
    p, q = _density_pair(p, q)
    m = 0.5 * (p + q)
    return 0.5 * kl_divergence(p, m, dx) + 0.5 * kl_divergence(q, m, dx)


def virtual_training_criterion(p_data, p_g, dx=1.0):
    """C(G) = max_D V(G, D), computed from its closed form (eq. 4).

    C(G) = int p_data log(p_data / (p_data + p_g)) + p_g log(p_g / (p_data + p_g)) dx.
    Theorem 1 shows C(G) = -log 4 + 2 JSD(p_data || p_g), so its global minimum
    -log 4 is reached iff p_g = p_data. This function evaluates the integral
    directly (not through the JSD), so the theorem can be checked numerically.
    The identity needs p_data and p_g to integrate to 1 on the grid.

    Args:
        p_data: non-negative array, data density on the grid.
        p_g: non-negative array of the same shape, model density.
        dx: grid spacing (> 0).

    Returns:
        Python float.

    Example:
        >>> p = [0.2, 0.3, 0.5]
        >>> round(virtual_training_criterion(p, p), 6)  # -log 4
        -1.386294
    """
    p_data, p_g = _density_pair(p_data, p_g, ("p_data", "p_g"))
    total = p_data + p_g
    terms = special.rel_entr(p_data, total) + special.rel_entr(p_g, total)  # p log(p / total)
    return float(np.sum(terms) * _check_dx(dx))


def value_function(d, p_data, p_g, dx=1.0):
    """V(G, D) = int p_data log D + p_g log(1 - D) dx (eq. 1, as eq. 3).

    Eq. 1's expectation over z ~ p_z becomes one over x ~ p_g after the change
    of variables x = G(z) (eq. 3). 0 log 0 = 0, so D may be 0 or 1 where the
    matching density is 0; V is -inf if D = 0 on the support of p_data (or
    D = 1 on the support of p_g). At D = D*_G (Proposition 1) V equals C(G).

    Float64 caveat: where one density is below ~1e-16 times the other (e.g. far
    Gaussian tails), ``optimal_discriminator`` rounds to exactly 0 or 1 and V
    at that rounded D* is -inf; truncate such negligible densities to 0 first
    (or use ``virtual_training_criterion``, which never forms D*).

    Args:
        d: discriminator outputs in [0, 1] on the grid (broadcastable).
        p_data: non-negative array, data density.
        p_g: non-negative array, model density.
        dx: grid spacing (> 0).

    Returns:
        Python float.

    Example:
        >>> round(value_function(0.5, [0.5, 0.5], [0.5, 0.5]), 6)  # log(1/2) + log(1/2)
        -1.386294
    """
    d = np.asarray(d, dtype=np.float64)
    if not np.all((d >= 0) & (d <= 1)):
        raise ValueError("d (discriminator output) must lie in [0, 1] everywhere")
    d, p_data, p_g = np.broadcast_arrays(d, _density("p_data", p_data), _density("p_g", p_g))
    terms = special.xlogy(p_data, d) + special.xlogy(p_g, 1.0 - d)
    return float(np.sum(terms) * _check_dx(dx))


def classifier_two_sample_test(x_a, x_b, classifier="logistic", test_fraction=0.5, seed=0):
    """Can a classifier tell x_a from x_b? A C2ST (Lopez-Paz & Oquab, 2017).

    A trained discriminator approximates D*_G of Proposition 1; for balanced
    classes the Bayes classifier thresholds D* at 1/2 and its accuracy is
    1/2 + TV(p_a, p_b)/2, so held-out accuracy near 1/2 means the samples look
    alike (e.g. generated vs real images, or train vs deployment data when
    checking distribution shift). The larger set is subsampled so both classes
    have min(n_a, n_b) rows; a stratified split trains on ``1 - test_fraction``
    and the number of correct held-out predictions is tested with a one-sided
    binomial test against chance 0.5 (H1: accuracy > 0.5).

    Args:
        x_a: array (n_a, ...), first sample; trailing axes are flattened.
        x_b: array (n_b, ...), second sample, same features per row.
        classifier: "logistic" (standardised logistic regression), "mlp"
            (one hidden layer of 32 ReLU units) or a scikit-learn classifier
            (it is cloned before fitting).
        test_fraction: held-out share of the balanced data, in (0, 1).
        seed: seed for subsampling, the split and the MLP initialisation.

    Returns:
        dict with ``accuracy``, ``p_value``, ``num_correct``, ``num_test``,
        ``num_train``.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> out = classifier_two_sample_test(rng.normal(size=(200, 2)),
        ...                                  rng.normal(loc=3.0, size=(200, 2)))
        >>> out["accuracy"] > 0.9 and out["p_value"] < 1e-6
        True
    """
    from sklearn.model_selection import train_test_split

    features, labels = _balanced_dataset(x_a, x_b, seed)
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1); got {test_fraction}")
    x_train, x_test, y_train, y_test = train_test_split(
        features, labels, test_size=test_fraction, stratify=labels, random_state=seed
    )
    model = _make_classifier(classifier, seed).fit(x_train, y_train)
    num_correct = int(np.sum(model.predict(x_test) == y_test))
    num_test = int(y_test.shape[0])
    return {
        "accuracy": num_correct / num_test,
        "p_value": float(stats.binomtest(num_correct, num_test, 0.5, alternative="greater").pvalue),
        "num_correct": num_correct,
        "num_test": num_test,
        "num_train": int(y_train.shape[0]),
    }


def _balanced_dataset(x_a, x_b, seed):
    """Stack equal-size subsamples of x_a (label 0) and x_b (label 1)."""
    x_a = np.asarray(x_a, dtype=np.float64)
    x_b = np.asarray(x_b, dtype=np.float64)
    x_a, x_b = x_a.reshape(x_a.shape[0], -1), x_b.reshape(x_b.shape[0], -1)  # (n, d)
    if x_a.shape[1] != x_b.shape[1]:
        raise ValueError(f"feature sizes must match: x_a has d={x_a.shape[1]}, x_b has d={x_b.shape[1]}")
    n = min(x_a.shape[0], x_b.shape[0])
    if n < 4:
        raise ValueError(f"need at least 4 rows in each of x_a and x_b; got {x_a.shape[0]} and {x_b.shape[0]}")
    rng = np.random.default_rng(seed)
    x_a = x_a[rng.permutation(x_a.shape[0])[:n]]
    x_b = x_b[rng.permutation(x_b.shape[0])[:n]]
    labels = np.concatenate([np.zeros(n, dtype=int), np.ones(n, dtype=int)])  # (2n,)
    return np.concatenate([x_a, x_b]), labels


def _make_classifier(classifier, seed):
    from sklearn.base import clone
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if classifier == "logistic":
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    if classifier == "mlp":
        mlp = MLPClassifier(hidden_layer_sizes=(32,), max_iter=500, random_state=seed)
        return make_pipeline(StandardScaler(), mlp)
    if isinstance(classifier, str):
        raise ValueError(f"classifier must be 'logistic', 'mlp' or a scikit-learn estimator; got {classifier!r}")
    return clone(classifier)


def _density(name, p):
    arr = np.asarray(p, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    if np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative (a density); its minimum is {arr.min()}")
    return arr


def _density_pair(p, q, names=("p", "q")):
    p, q = _density(names[0], p), _density(names[1], q)
    if p.shape != q.shape:
        raise ValueError(f"densities must share a grid: shapes {p.shape} and {q.shape} differ")
    return p, q


def _check_dx(dx):
    if not (np.ndim(dx) == 0 and np.isfinite(dx) and dx > 0):
        raise ValueError(f"dx (grid spacing) must be a finite number > 0; got {dx}")
    return float(dx)
