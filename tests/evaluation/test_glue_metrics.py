"""GLUE metrics (Matthews correlation, F1, Pearson, Spearman) against scikit-learn and SciPy."""

import numpy as np
import pytest

from keras_paperzoo.evaluation.glue_metrics import f1, glue_metrics, matthews_correlation, pearson, spearman

pytestmark = pytest.mark.backend_free("jax")
sklearn_metrics = pytest.importorskip("sklearn.metrics")
stats = pytest.importorskip("scipy.stats")


def test_matthews_and_f1_match_scikit_learn():
    rng = np.random.default_rng(0)
    for classes in (2, 3):
        labels = rng.integers(0, classes, 200)
        predictions = np.where(rng.random(200) < 0.7, labels, rng.integers(0, classes, 200))
        assert matthews_correlation(labels, predictions) == pytest.approx(
            sklearn_metrics.matthews_corrcoef(labels, predictions), abs=1e-12)
    labels = rng.integers(0, 2, 100)
    predictions = np.where(rng.random(100) < 0.6, labels, 1 - labels)
    assert f1(labels, predictions) == pytest.approx(sklearn_metrics.f1_score(labels, predictions), abs=1e-12)
    # Hand-counted: TP 2, FP 0, FN 1 -> F1 0.8; MCC (2*1 - 0*1) / sqrt(2*3*1*2) = 0.5774.
    assert f1([1, 0, 1, 1], [1, 0, 0, 1]) == pytest.approx(0.8)
    assert matthews_correlation([1, 0, 1, 1], [1, 0, 0, 1]) == pytest.approx(2 / np.sqrt(12))
    assert matthews_correlation([1, 1, 0], [1, 1, 1]) == 0.0  # constant predictions
    assert f1([0, 0], [0, 0]) == 0.0


def test_correlations_match_scipy():
    rng = np.random.default_rng(1)
    labels = rng.uniform(0, 5, 300)
    predictions = labels + rng.normal(0, 1.5, 300)
    assert pearson(labels, predictions) == pytest.approx(stats.pearsonr(labels, predictions)[0], abs=1e-12)
    assert spearman(labels, predictions) == pytest.approx(stats.spearmanr(labels, predictions)[0], abs=1e-12)
    tied_labels, tied_predictions = np.round(labels), np.round(predictions * 2) / 2  # many ties
    assert spearman(tied_labels, tied_predictions) == pytest.approx(
        stats.spearmanr(tied_labels, tied_predictions)[0], abs=1e-12)
    assert spearman([1.0, 2.0, 3.0], [0.1, 0.5, 0.4]) == pytest.approx(0.5)


def test_glue_task_metrics_and_errors():
    assert set(glue_metrics("stsb", [1.0, 2.0, 3.5], [1.1, 1.9, 3.0])) == {"pearson", "spearman"}
    assert glue_metrics("mrpc", [1, 0, 1, 1], [1, 0, 0, 1]) == {"accuracy": 0.75, "f1": pytest.approx(0.8)}
    assert glue_metrics("cola", [1, 0, 1, 1], [1, 0, 0, 1]) == {"matthews_correlation": pytest.approx(2 / np.sqrt(12))}
    assert glue_metrics("sst2", [1, 0], [1, 1]) == {"accuracy": 0.5}
    with pytest.raises(ValueError, match="task 'squad' should be one of"):
        glue_metrics("squad", [1], [1])
    with pytest.raises(ValueError, match="one prediction per label; got 2 labels and 1 predictions"):
        f1([1, 0], [1])
    with pytest.raises(ValueError, match="pearson is undefined"):
        pearson([1.0, 1.0], [1.0, 2.0])
