"""BERT fine-tuned for span extraction, SQuAD-style question answering (Devlin et al. 2019, Sec. 4.2, Fig. 4c)."""


import numpy as np

import keras
from keras import ops

from keras_paperzoo.models.bert.bert_backbone import BertBackbone, bert_initializer, check_task, task_inputs
from keras_paperzoo.models.bert.bert_optimizer import task_optimizer
from keras_paperzoo.models.trainer import Trainer


def span_loss(start_positions, end_positions, start_logits, end_logits):
    """Mean of the start and end cross-entropies (the reference `run_squad.py`'s (start + end) / 2)."""
    start = keras.losses.sparse_categorical_crossentropy(start_positions, start_logits, from_logits=True)
    end = keras.losses.sparse_categorical_crossentropy(end_positions, end_logits, from_logits=True)
    return 0.5 * (ops.mean(start) + ops.mean(end))


def best_spans(start_logits, end_logits, allowed=None, max_answer_length=30):
    """The (start, end) with start <= end < start + max_answer_length maximising S.T_i + E.T_j (Sec. 4.2).

    Args:
        start_logits, end_logits: (B, T) arrays.
        allowed: optional (B, T) bool, positions an answer may use (e.g. the passage's
            tokens; padding, [CLS] and the question excluded).
        max_answer_length: the longest span in tokens (30 in the reference code).

    Returns:
        (B, 2) int array of inclusive [start, end] token positions.
    """
    start_logits = np.asarray(start_logits, dtype="float64")
    end_logits = np.asarray(end_logits, dtype="float64")
    length = start_logits.shape[1]
    i, j = np.meshgrid(np.arange(length), np.arange(length), indexing="ij")
    valid = (j >= i) & (j < i + max_answer_length)  # (T, T)
    scores = start_logits[:, :, None] + end_logits[:, None, :]  # (B, T, T)
    mask = np.broadcast_to(valid, scores.shape)
    if allowed is not None:
        allowed = np.asarray(allowed, dtype=bool)
        mask = mask & allowed[:, :, None] & allowed[:, None, :]
    scores = np.where(mask, scores, -np.inf)
    flat = scores.reshape(len(scores), -1).argmax(-1)
    return np.stack([flat // length, flat % length], axis=-1)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class SpanLogits(keras.layers.Layer):
    """(B, T, 2) logits and a (B, T) padding mask -> start and end logits (B, T), padding at -1e9."""

    def call(self, logits, padding_mask):
        padding = (1.0 - ops.cast(padding_mask, logits.dtype)) * -1e9  # (B, T)
        return logits[..., 0] + padding, logits[..., 1] + padding

    def compute_output_spec(self, logits, padding_mask):
        out = keras.KerasTensor(logits.shape[:-1], dtype=logits.dtype)
        return out, keras.KerasTensor(logits.shape[:-1], dtype=logits.dtype)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class BertSpanExtractor(Trainer, keras.Model):
    """A `BertBackbone` with start and end vectors S, E in R^H: P(start = i) = softmax_i(S . T_i), the same for the end.

    "We only introduce a start vector S and an end vector E during fine-tuning" (Sec.
    4.2): one Dense(2) on the final token states T_i; padding positions get logit -1e9
    so they are never predicted. The question is sentence A, the passage sentence B.
    `best_spans` picks the highest-scoring span with end >= start.

    Targets (y): dict with `start_positions` and `end_positions` (B,) token indices.
    Outputs: dict `{"start_logits": (B, T), "end_logits": (B, T)}`. Metrics:
    `start_accuracy`, `end_accuracy`.

    `compile()` with no arguments gives the paper's SQuAD v1.1 setting: lr 5e-5 (batch
    32, 3 epochs), Adam with decoupled weight decay 0.01; pass `total_steps` for the
    reference warmup (10 %) and linear decay, else the rate is constant.

    Args:
        backbone: a `BertBackbone`.

    Example:

    ```python
    reader = BertSpanExtractor(BertBackbone.from_preset("bert_base"))
    reader.compile(total_steps=3 * len(squad_batches))
    reader.fit(squad_batches, epochs=3)  # y: {"start_positions": ..., "end_positions": ...}
    out = reader.predict(x)
    spans = best_spans(out["start_logits"], out["end_logits"], allowed=passage_mask)
    ```
    """

    backbone_class = BertBackbone
    fixed_loss = True  # the start/end cross-entropy

    def __init__(self, backbone, **kwargs):
        check_task("BertSpanExtractor", backbone)

        # === Layers ===
        span_dense = keras.layers.Dense(2, kernel_initializer=bert_initializer(), name="span_logits")

        # === Functional Model ===
        inputs = task_inputs(backbone)  # token_ids, segment_ids, padding_mask: (B, T) each
        sequence = backbone(inputs)["sequence_output"]  # (B, T, H)
        logits = span_dense(sequence)  # (B, T, 2): S . T_i and E . T_i
        start, end = SpanLogits(name="span_split")(logits, inputs["padding_mask"])  # 2 x (B, T)
        super().__init__(inputs=inputs, outputs={"start_logits": start, "end_logits": end}, **kwargs)

        # === Config ===
        self.backbone = backbone
        self.span_dense = span_dense
        self.start_accuracy = keras.metrics.SparseCategoricalAccuracy(name="start_accuracy")
        self.end_accuracy = keras.metrics.SparseCategoricalAccuracy(name="end_accuracy")

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        if sample_weight is not None:
            raise ValueError("BertSpanExtractor does not support sample_weight.")
        if not isinstance(y, dict) or "start_positions" not in y or "end_positions" not in y:
            got = sorted(y) if isinstance(y, dict) else type(y).__name__
            raise ValueError(f"BertSpanExtractor needs y as a dict with start_positions, end_positions; got {got}.")
        loss = span_loss(y["start_positions"], y["end_positions"], y_pred["start_logits"], y_pred["end_logits"])
        if self.losses:
            loss = loss + ops.sum(self.losses)
        return loss

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        self.start_accuracy.update_state(y["start_positions"], y_pred["start_logits"])
        self.end_accuracy.update_state(y["end_positions"], y_pred["end_logits"])
        return self.get_metrics_result()

    # --- compile with the paper's defaults ---------------------------------------------
    def paper_optimizer(self, total_steps=None, learning_rate=5e-5, weight_decay=0.01):
        """`task_optimizer` at SQuAD v1.1's lr 5e-5: warmup and linear decay over `total_steps`, else constant."""
        return task_optimizer(total_steps, learning_rate, weight_decay)
