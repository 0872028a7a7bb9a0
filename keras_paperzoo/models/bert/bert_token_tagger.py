"""BERT fine-tuned for token tagging, CoNLL-2003 NER (Devlin et al. 2019, Sec. 5.3 / 4.3 of the preprint, Fig. 4d)."""


import keras
from keras import ops

from keras_paperzoo.models.bert.bert_backbone import BertBackbone, check_task, task_head
from keras_paperzoo.models.bert.bert_optimizer import task_optimizer
from keras_paperzoo.models.checks import check_int
from keras_paperzoo.models.trainer import Trainer

IGNORE = -1  # keras_paperzoo.data.conll.IGNORE: a position without a label


def tagging_loss(labels, logits, sample_weight=None):
    """Mean token cross-entropy over the labelled positions (labels >= 0, times `sample_weight` if given).

    Positions labelled `IGNORE` (-1: the non-first sub-tokens of a word, [CLS], [SEP],
    padding) add nothing, so the loss is the mean over words (Sec. 5.3).
    """
    labels = ops.convert_to_tensor(labels)
    weights = ops.cast(labels >= 0, logits.dtype)  # (B, T)
    if sample_weight is not None:
        weights = weights * ops.cast(sample_weight, logits.dtype)
    safe = ops.maximum(labels, 0)  # any class for ignored positions; their weight is 0
    per_token = keras.losses.sparse_categorical_crossentropy(safe, logits, from_logits=True)  # (B, T)
    return ops.sum(per_token * weights) / ops.maximum(ops.sum(weights), 1.0)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class BertTokenTagger(Trainer, keras.Model):
    """A `BertBackbone` with a classification layer on every final token state: logits_i = W dropout(T_i) + b.

    "We feed the final hidden representation T_i in R^H for each token i into a
    classification layer over the NER label set. The predictions are not conditioned on
    the surrounding predictions (i.e., non-autoregressive and no CRF)" (Sec. 5.3). Only
    the first WordPiece of each word is labelled: `keras_paperzoo.data.conll.align_words`
    gives the other positions the label -1, which the loss ignores (as well as any
    `sample_weight` 0), and the accuracy metric counts labelled positions only. Span F1
    over BIO tags, what the paper reports, is `keras_paperzoo.evaluation.tagging.span_f1`.

    `compile()` with no arguments gives the fine-tuning setup of `BertClassifier`: Adam
    with decoupled weight decay 0.01, lr 5e-5 (the middle of the paper's grid {5e-5, 3e-5,
    2e-5}, App. A.3, which also holds for NER), warmup and linear decay when
    `total_steps` is given.

    Args:
        backbone: a `BertBackbone`.
        num_tags: int >= 2, the tag set's size (9 for CoNLL-2003's BIO NER tags).
        dropout: float, dropout on the token states (0.1, the backbone's rate).

    Example:

    ```python
    sentences = read_conll("eng.train")
    tags = tag_names(sentences)
    x, labels, word_index = align_words(sentences, tokenizer, tags, sequence_length=128)
    tagger = BertTokenTagger(BertBackbone.from_preset("bert_base"), num_tags=len(tags))
    tagger.compile(total_steps=3 * len(labels) // 32)
    tagger.fit(x, labels, batch_size=32, epochs=3)
    predicted = word_tags(tagger.predict(x), word_index, sentences, tags)
    span_f1([t for _, t in sentences], predicted)["f1"]
    ```
    """

    backbone_class = BertBackbone
    fixed_loss = True  # token cross-entropy over the first sub-tokens

    def __init__(self, backbone, num_tags, dropout=0.1, **kwargs):
        check_task("BertTokenTagger", backbone, dropout)
        num_tags = check_int("BertTokenTagger", "num_tags", num_tags, low=2, named=False)

        # === Layers and Functional Model ===
        inputs, logits = task_head(backbone, "sequence_output", num_tags, dropout, name="tag_logits")  # (B, T, K)
        super().__init__(inputs=inputs, outputs=logits, **kwargs)

        # === Config ===
        self.backbone = backbone
        self.num_tags = num_tags
        self.dropout = dropout
        self.tag_accuracy = keras.metrics.SparseCategoricalAccuracy(name="accuracy")

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        loss = tagging_loss(y, y_pred, sample_weight)
        if self.losses:
            loss = loss + ops.sum(self.losses)
        return loss

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        weights = ops.cast(ops.convert_to_tensor(y) >= 0, "float32")  # (B, T): labelled positions
        if sample_weight is not None:
            weights = weights * ops.cast(sample_weight, "float32")
        self.tag_accuracy.update_state(ops.maximum(y, 0), y_pred, sample_weight=weights)
        return self.get_metrics_result()

    # --- compile with the paper's defaults ---------------------------------------------
    def paper_optimizer(self, total_steps=None, learning_rate=5e-5, weight_decay=0.01):
        """`task_optimizer`: warmup and linear decay over `total_steps`, else a constant rate (App. A.3)."""
        return task_optimizer(total_steps, learning_rate, weight_decay)
