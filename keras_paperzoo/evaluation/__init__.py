"""Evaluation of generative models (Goodfellow et al. 2014, "Generative Adversarial Nets").

- ``parzen``: the Gaussian Parzen-window log-likelihood of Table 1.
- ``gan_theory``: Section 4 (Proposition 1, Theorem 1) on density grids, and a
  classifier two-sample test.
"""

from keras_paperzoo.evaluation.gan_theory import (
    classifier_two_sample_test,
    js_divergence,
    kl_divergence,
    optimal_discriminator,
    value_function,
    virtual_training_criterion,
)
from keras_paperzoo.evaluation.parzen import (
    default_sigma_grid,
    parzen_evaluation,
    parzen_log_likelihood,
    select_sigma,
)

__all__ = [
    "classifier_two_sample_test",
    "default_sigma_grid",
    "js_divergence",
    "kl_divergence",
    "optimal_discriminator",
    "parzen_evaluation",
    "parzen_log_likelihood",
    "select_sigma",
    "value_function",
    "virtual_training_criterion",
]
