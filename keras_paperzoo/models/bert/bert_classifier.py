"""BERT fine-tuned for sequence classification, single sentences or pairs (Devlin et al. 2019, Sec. 4.1, Fig. 4a, b)."""


import keras

from keras_paperzoo.models.bert.bert_backbone import BertBackbone, check_task, task_head
from keras_paperzoo.models.bert.bert_optimizer import task_optimizer
from keras_paperzoo.models.checks import check_int
from keras_paperzoo.models.trainer import Trainer


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class BertClassifier(Trainer, keras.Model):
    """A `BertBackbone` with a classification layer on the pooled [CLS] state: logits = W dropout(C) + b.

    "The only new parameters introduced during fine-tuning are classification layer
    weights W in R^{K x H}" (Sec. 4.1); the reference `run_classifier.py` applies dropout
    0.1 to C first. Single sentences are packed [CLS] A [SEP] with segment ids 0
    (SST-2, CoLA), pairs [CLS] A [SEP] B [SEP] with B's segment ids 1 (MNLI, QQP, ...):
    `keras_paperzoo.data.bert_inputs.BertPacker` does both.

    `compile()` with no arguments gives the paper's fine-tuning setup: Adam with
    decoupled weight decay 0.01 (not on biases and LayerNorm), lr 2e-5 (the paper picks
    from {5e-5, 3e-5, 2e-5} on dev, App. A.3), sparse categorical cross-entropy on the
    logits and accuracy. Pass `total_steps` (epochs x steps per epoch; the paper trains
    2-4 epochs with batch 32) for the reference code's schedule, warmup over the first
    10 % then linear decay; without it the learning rate is constant.

    Args:
        backbone: a `BertBackbone` (pre-trained, or random for a baseline).
        num_classes: int >= 2.
        dropout: float, dropout on the pooled output (0.1).

    Example:

    ```python
    classifier = BertClassifier(BertBackbone.from_preset("bert_base"), num_classes=2)
    classifier.compile(total_steps=3 * len(train_batches))
    classifier.fit(train_batches, epochs=3)   # x: token_ids, segment_ids, padding_mask; y: labels
    ```
    """

    backbone_class = BertBackbone

    def __init__(self, backbone, num_classes, dropout=0.1, **kwargs):
        check_task("BertClassifier", backbone, dropout)
        num_classes = check_int("BertClassifier", "num_classes", num_classes, low=2, named=False)

        # === Layers and Functional Model ===
        inputs, logits = task_head(backbone, "pooled_output", num_classes, dropout, name="logits")  # (B, K)
        super().__init__(inputs=inputs, outputs=logits, **kwargs)

        # === Config ===
        self.backbone = backbone
        self.num_classes = num_classes
        self.dropout = dropout

    # --- compile with the paper's defaults ---------------------------------------------
    def paper_optimizer(self, total_steps=None, learning_rate=2e-5, weight_decay=0.01):
        """`task_optimizer`: warmup and linear decay over `total_steps`, else a constant rate (App. A.3)."""
        return task_optimizer(total_steps, learning_rate, weight_decay)

    def paper_loss(self):
        return keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def paper_metrics(self):
        return [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]
