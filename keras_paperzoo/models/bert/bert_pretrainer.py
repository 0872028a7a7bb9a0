"""BERT pre-training: masked LM and next sentence prediction (Devlin et al. 2019, Sec. 3.1, App. A.1)."""


import keras
import keras_hub
from keras import ops

from keras_paperzoo.models.bert.bert_backbone import (
    BertBackbone,
    activation_function,
    bert_initializer,
    check_task,
    task_inputs,
)
from keras_paperzoo.models.bert.bert_optimizer import PAPER_PRETRAINING_STEPS, pretraining_optimizer
from keras_paperzoo.models.trainer import Trainer


def masked_lm_loss(mask_ids, logits, mask_weights):
    """Mean cross-entropy over the chosen positions only (weights 0 for padding slots); Sec. 3.1 Task #1."""
    weights = ops.cast(mask_weights, "float32")  # (B, M)
    vocabulary = ops.shape(logits)[-1]
    # On a (B M, V) view: Keras's torch backend would run log-softmax over a strided class axis for (B, M, V).
    losses = keras.losses.sparse_categorical_crossentropy(
        ops.reshape(mask_ids, (-1,)), ops.reshape(logits, (-1, vocabulary)), from_logits=True)
    losses = ops.reshape(losses, ops.shape(weights))  # (B, M)
    return ops.sum(losses * weights) / ops.maximum(ops.sum(weights), 1.0)


def next_sentence_loss(labels, logits):
    """Mean cross-entropy of IsNext (0) / NotNext (1) from the pooled [CLS] state; Sec. 3.1 Task #2."""
    return ops.mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class BertPretrainer(Trainer, keras.Model):
    """BERT's pre-training objective on a `BertBackbone`: masked LM plus next sentence prediction.

    One step, as Sec. 3.1 and App. A.1 describe it (the data side, choosing 15 % of the
    tokens and replacing 80 % of those by [MASK], 10 % by a random token and leaving
    10 % unchanged, and pairing sentences 50 % IsNext / 50 % NotNext, is
    `keras_paperzoo.data.bert_pretraining`):

    1. encode the packed pair [CLS] A [SEP] B [SEP] with the backbone;
    2. masked LM: the final states of the chosen positions go through a dense layer
       (H, the backbone's GELU), LayerNorm and the output layer tied to the token
       embedding plus a per-token bias (the reference code's `cls/predictions`,
       keras-hub's `MaskedLMHead`); cross-entropy on the chosen positions only;
    3. next sentence prediction: a 2-way softmax on the pooled output C (Fig. 1);
    4. the loss is the sum of the two mean losses (the reference `total_loss`).

    Inputs (x): dict with the backbone's `token_ids`, `segment_ids`, `padding_mask`
    and `mask_positions` (B, M) int, the chosen positions (padded with 0).
    Targets (y): dict with `mask_ids` (B, M) original token ids, `mask_weights` (B, M)
    1 for real predictions and 0 for padding slots, `next_sentence_labels` (B,) 0 for
    IsNext, 1 for NotNext (the reference code's convention).
    Outputs: dict `{"mlm_logits": (B, M, V), "nsp_logits": (B, 2)}`.
    Metrics: `mlm_loss`, `nsp_loss`, `mlm_accuracy` (over chosen positions),
    `nsp_accuracy`.

    `compile()` with no arguments gives the paper's optimizer: Adam (0.9, 0.999) with
    decoupled weight decay 0.01 (not on biases and LayerNorm), lr 1e-4 with linear
    warmup over the first 1 % of `total_steps` (10,000 of the paper's 1,000,000) and
    linear decay to 0; pass `total_steps` to scale the schedule to your run.

    Args:
        backbone: a `BertBackbone`.

    Example:

    ```python
    backbone = BertBackbone.from_preset("bert_tiny", vocabulary_size=1000, max_sequence_length=64)
    pretrainer = BertPretrainer(backbone)
    pretrainer.compile(total_steps=2_000)
    pretrainer.fit(bert_pretraining_dataset(documents, tokenizer, sequence_length=64), epochs=2)
    backbone.save("bert_tiny_pretrained.keras")  # then BertClassifier(backbone, num_classes=2)
    ```
    """

    backbone_class = BertBackbone
    fixed_loss = True  # masked LM + next sentence prediction

    def __init__(self, backbone, **kwargs):
        check_task("BertPretrainer", backbone)

        # === Layers ===
        masked_lm_head = keras_hub.layers.MaskedLMHead(
            token_embedding=backbone.token_embedding,
            intermediate_activation=activation_function(backbone.activation),
            layer_norm_epsilon=backbone.layer_norm_epsilon,
            kernel_initializer=bert_initializer(),
            name="masked_lm_head",
        )
        next_sentence_head = keras.layers.Dense(2, kernel_initializer=bert_initializer(), name="next_sentence_head")

        # === Functional Model ===
        inputs = task_inputs(backbone)  # token_ids, segment_ids, padding_mask: (B, T) each
        inputs["mask_positions"] = keras.Input((None,), dtype="int32", name="mask_positions")
        encoded = backbone({name: inputs[name] for name in backbone.input})
        outputs = {
            "mlm_logits": masked_lm_head(encoded["sequence_output"], mask_positions=inputs["mask_positions"]),
            "nsp_logits": next_sentence_head(encoded["pooled_output"]),  # (B, 2)
        }
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

        # === Config ===
        self.backbone = backbone
        self.masked_lm_head = masked_lm_head
        self.next_sentence_head = next_sentence_head
        self.mlm_loss_tracker = keras.metrics.Mean(name="mlm_loss")
        self.nsp_loss_tracker = keras.metrics.Mean(name="nsp_loss")
        self.mlm_accuracy = keras.metrics.SparseCategoricalAccuracy(name="mlm_accuracy")
        self.nsp_accuracy = keras.metrics.SparseCategoricalAccuracy(name="nsp_accuracy")

    # --- the objective -----------------------------------------------------------------
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        if sample_weight is not None:
            raise ValueError("BertPretrainer weights its masked-LM loss with y['mask_weights']; sample_weight is not supported.")
        _check_targets(y)
        loss = masked_lm_loss(y["mask_ids"], y_pred["mlm_logits"], y["mask_weights"])
        loss = loss + next_sentence_loss(y["next_sentence_labels"], y_pred["nsp_logits"])
        if self.losses:
            loss = loss + ops.sum(self.losses)
        return loss

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        self.mlm_loss_tracker.update_state(masked_lm_loss(y["mask_ids"], y_pred["mlm_logits"], y["mask_weights"]))
        self.nsp_loss_tracker.update_state(next_sentence_loss(y["next_sentence_labels"], y_pred["nsp_logits"]))
        self.mlm_accuracy.update_state(y["mask_ids"], y_pred["mlm_logits"], sample_weight=y["mask_weights"])
        self.nsp_accuracy.update_state(y["next_sentence_labels"], y_pred["nsp_logits"])
        return self.get_metrics_result()

    # --- compile with the paper's defaults ---------------------------------------------
    def paper_optimizer(self, total_steps=PAPER_PRETRAINING_STEPS, learning_rate=1e-4, weight_decay=0.01):
        """`pretraining_optimizer`: warmup over 1 % of `total_steps`, then linear decay (App. A.2)."""
        return pretraining_optimizer(total_steps, learning_rate, weight_decay)


def _check_targets(y):
    needed = ("mask_ids", "mask_weights", "next_sentence_labels")
    if not isinstance(y, dict) or any(name not in y for name in needed):
        got = sorted(y) if isinstance(y, dict) else type(y).__name__
        raise ValueError(f"BertPretrainer needs y as a dict with {', '.join(needed)}; got {got}.")
