"""Evaluation protocols and metrics.

- ``parzen``: the Gaussian Parzen-window log-likelihood of the GAN paper's Table 1.
- ``gan_theory``: the GAN paper's Section 4 (Proposition 1, Theorem 1) on density
  grids, and a classifier two-sample test.
- ``knn``: the weighted kNN classifier on frozen features (Wu et al. 2018, InstDisc).
- ``linear_probe``: a linear classifier on frozen features (MoCo, MAE protocols).
- ``bleu``: corpus BLEU with sacreBLEU (the Transformer's translation metric).
- ``few_shot``: zero-, one- and few-shot evaluation of a causal LM (GPT-3 Sec. 2.4).
- ``zero_shot``: GPT-2's zero-shot tasks (Sec. 3): LAMBADA, "TL;DR:" summaries with
  ROUGE, translation prompts with BLEU.
"""

from keras_paperzoo.evaluation.bleu import corpus_bleu
from keras_paperzoo.evaluation.gan_theory import (
    classifier_two_sample_test,
    js_divergence,
    kl_divergence,
    optimal_discriminator,
    value_function,
    virtual_training_criterion,
)
from keras_paperzoo.evaluation.features import extract_features
from keras_paperzoo.evaluation.few_shot import FewShotTask, few_shot_evaluate
from keras_paperzoo.evaluation.knn import knn_accuracy, knn_predict
from keras_paperzoo.evaluation.linear_probe import linear_probe
from keras_paperzoo.evaluation.parzen import (
    default_sigma_grid,
    parzen_evaluation,
    parzen_log_likelihood,
    select_sigma,
)
from keras_paperzoo.evaluation.zero_shot import (
    corpus_rouge,
    lambada_accuracy,
    summarize_tldr,
    translate_prompt,
)

__all__ = [
    "FewShotTask",
    "classifier_two_sample_test",
    "corpus_bleu",
    "corpus_rouge",
    "default_sigma_grid",
    "extract_features",
    "few_shot_evaluate",
    "knn_accuracy",
    "knn_predict",
    "lambada_accuracy",
    "linear_probe",
    "js_divergence",
    "kl_divergence",
    "optimal_discriminator",
    "parzen_evaluation",
    "parzen_log_likelihood",
    "select_sigma",
    "summarize_tldr",
    "translate_prompt",
    "value_function",
    "virtual_training_criterion",
]
