"""GPT-1 supervised fine-tuning (Radford et al. 2018, Sec. 3.2-3.3): a linear head on the last token plus an auxiliary LM loss.

The four task shapes of Sec. 3.3 (Figure 1): classification and entailment (one
sequence), similarity (both orderings, representations added), multiple choice (one
sequence per answer, softmax over the answers); inputs from `gpt_task_inputs.pack_task_inputs`.
"""

import keras
from keras import ops

from keras_paperzoo.layers.sequence_folding import FoldSequences, UnfoldSequences
from keras_paperzoo.models.gpt.gpt_backbone import INITIALIZER_RANGE, GPTBackbone
from keras_paperzoo.models.gpt.gpt_task_inputs import TASKS
from keras_paperzoo.models.trainer import Trainer
from keras_paperzoo.training.schedules import WarmupLinearDecay
from keras_paperzoo.training.selective_decay import SelectiveDecayAdamW


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class LastTokenPooling(keras.layers.Layer):
    """(B, T, D) hidden states and a (B, T) padding mask -> (B, D), the state of each row's last real token.

    GPT-1 reads "the final transformer block's activation h_l^m" at the last input
    token (the extract token of Sec. 3.3's traversal inputs); rows are right-padded.
    """

    def call(self, hidden, padding_mask):
        last = ops.sum(ops.cast(padding_mask, "int32"), axis=-1) - 1  # (B,), index of the last real token
        last = ops.maximum(last, 0)
        return ops.take_along_axis(hidden, last[:, None, None], axis=1)[:, 0, :]  # (B, D)

    def compute_output_shape(self, hidden_shape, padding_mask_shape=None):
        return (hidden_shape[0], hidden_shape[-1])


def fine_tuning_optimizer(total_steps, learning_rate=6.25e-5, warmup_fraction=0.002, weight_decay=0.01):
    """GPT-1 Sec. 4.1 "Fine-tuning details": lr 6.25e-5, linear decay, warmup over 0.2 % of training.

    The pre-training's decoupled weight decay (0.01 on non bias or gain weights) is kept:
    the paper lists no change to it for fine-tuning.
    """
    total_steps = int(total_steps)
    schedule = WarmupLinearDecay(learning_rate, int(warmup_fraction * total_steps), total_steps)
    return SelectiveDecayAdamW(schedule, weight_decay=weight_decay)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class GPTClassifier(Trainer, keras.Model):
    """GPT-1 fine-tuning on a task of Sec. 3.3: L_3(C) = L_2(C) + lambda L_1(C) (eq. 5).

    Inputs {"token_ids": int, "padding_mask": bool}, GPT-1's traversal-style sequences
    (Sec. 3.3, Figure 1: start token, text, [delimiter, text,] extract token;
    right-padded), built by `pack_task_inputs`. By `task`:

    - "classification", "entailment" ([<s> premise $ hypothesis <e>]): (B, T) inputs,
      outputs {"logits": (B, num_classes), "lm_logits": (B, T, V)};
    - "similarity": (B, 2, T) inputs, the two orderings [<s> A $ B <e>] and
      [<s> B $ A <e>], each through the transformer; their final representations are
      ADDED ("added element-wise before being fed into the linear output layer"), so
      the logits (B, num_classes) are symmetric in A and B; "lm_logits" (B, 2, T, V);
    - "multiple_choice": (B, N, T) inputs, [<s> context $ answer_k <e>] for N >= 2
      answers, each through the transformer, one linear score each, "normalized via a
      softmax layer" over the N: "logits" (B, N), labels the index of the right
      answer; `num_classes` is None (the head has one output); "lm_logits" (B, N, T, V).

    - Task head (eq. 3-4): P(y | x^1..x^m) = softmax(h_l^m W_y), h_l^m the last
      block's state at the last real token (`LastTokenPooling`), with classifier
      dropout 0.1 ("dropout to the classifier with a rate of 0.1"); W_y is the only
      new parameter besides the embeddings of any new delimiter tokens.
    - Auxiliary objective (eq. 5): the language-model loss L_1 on the same inputs
      (next-token cross-entropy over the real tokens), weighted by `lm_weight`
      (lambda = 0.5 in Sec. 4.1). `lm_weight=0` is plain fine-tuning (the paper's
      ablation "w/o aux LM"). For similarity and multiple choice it covers every
      sequence (both orderings, every answer).

    The start, delimiter and extract tokens are new embeddings: `add_task_tokens(backbone)`
    adds them to the vocabulary, `task_token_ids(backbone)` gives their ids.

    Logged: `loss` (L_3), `task_loss` (L_2), `lm_loss` (L_1), `accuracy`.
    `compile()` with no arguments: GPT-1's fine-tuning optimizer (`fine_tuning_optimizer`,
    lr 6.25e-5, linear decay with 0.2 % warmup) over `total_steps` (default 1000; give
    your run's: the paper's 3 epochs at batch 32).

    Args:
        backbone: a `GPTBackbone` (pre-trained).
        num_classes: int >= 2; None for "multiple_choice".
        lm_weight: float >= 0, lambda.
        dropout: float in [0, 1), the classifier's dropout.
        task: one of "classification" (default), "entailment", "similarity",
            "multiple_choice".

    Example:

    ```python
    classifier = GPTClassifier(GPTBackbone.from_preset("gpt1"), num_classes=2)
    classifier.compile(total_steps=3 * len(train) // 32)
    classifier.fit({"token_ids": ids, "padding_mask": mask}, labels, batch_size=32, epochs=3)

    backbone = add_task_tokens(GPTBackbone.from_preset("gpt1"))
    x = pack_task_inputs("similarity", [([5, 6], [7])], 512, task_token_ids(backbone))
    GPTClassifier(backbone, num_classes=2, task="similarity")(x)["logits"]  # (1, 2)
    ```
    """

    backbone_class = GPTBackbone
    fixed_loss = True  # eq. (5)

    def __init__(self, backbone, num_classes=None, lm_weight=0.5, dropout=0.1, task="classification", **kwargs):
        if not isinstance(backbone, GPTBackbone):
            raise ValueError(f"GPTClassifier needs a GPTBackbone; got {type(backbone).__name__}.")
        if task not in TASKS:
            raise ValueError(f"GPTClassifier task must be one of {TASKS}; got {task!r}.")
        if task == "multiple_choice":
            if num_classes is not None:
                raise ValueError(
                    f"GPTClassifier multiple_choice scores each answer with one output: num_classes must be None "
                    f"(the number of answers comes with the inputs); got {num_classes!r}."
                )
        elif isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 2:
            raise ValueError(f"GPTClassifier num_classes must be an int >= 2; got {num_classes!r}.")
        if not lm_weight >= 0:
            raise ValueError(f"GPTClassifier lm_weight (lambda of eq. 5) must be >= 0; got {lm_weight!r}.")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"GPTClassifier dropout must be in [0, 1); got {dropout!r}.")
        # === Layers ===
        pooling = LastTokenPooling(name="last_token")
        classifier_dropout = keras.layers.Dropout(dropout, name="classifier_dropout")
        head = keras.layers.Dense(
            num_classes or 1, kernel_initializer=keras.initializers.RandomNormal(stddev=INITIALIZER_RANGE),
            name="classifier",
        )  # W_y
        # === Functional Model ===
        shape = {"similarity": (2, None), "multiple_choice": (None, None)}.get(task, (None,))
        token_ids = keras.Input(shape, dtype="int32", name="token_ids")
        padding_mask = keras.Input(shape, dtype="bool", name="padding_mask")
        if len(shape) == 1:  # classification, entailment: one sequence per example
            hidden = backbone(token_ids)  # (B, T, D)
            features = pooling(hidden, padding_mask)  # h_l^m, (B, D)
            lm_logits = backbone.token_embedding(hidden, reverse=True)  # (B, T, V), for L_1
        else:  # similarity, multiple choice: S sequences per example, each through the transformer
            fold, unfold = FoldSequences(name="fold_sequences"), UnfoldSequences(name="unfold_sequences")
            hidden = backbone(fold(token_ids))  # (B*S, T, D)
            features = unfold(pooling(hidden, fold(padding_mask)), token_ids)  # (B, S, D)
            lm_logits = unfold(backbone.token_embedding(hidden, reverse=True), token_ids)  # (B, S, T, V)
            if task == "similarity":
                features = ops.sum(features, axis=1)  # h(A $ B) + h(B $ A), (B, D)
        logits = head(classifier_dropout(features))  # h W_y: (B, K), or (B, N, 1) for multiple choice
        if task == "multiple_choice":
            logits = ops.squeeze(logits, axis=-1)  # (B, N), one score per answer; softmax in the loss
        super().__init__(
            inputs={"token_ids": token_ids, "padding_mask": padding_mask},
            outputs={"logits": logits, "lm_logits": lm_logits},
            **kwargs,
        )
        # === Config ===
        self.backbone = backbone
        self.num_classes = num_classes
        self.lm_weight = float(lm_weight)
        self.dropout = dropout
        self.task = task
        self.task_loss_tracker = keras.metrics.Mean(name="task_loss")
        self.lm_loss_tracker = keras.metrics.Mean(name="lm_loss")
        self.accuracy_tracker = keras.metrics.SparseCategoricalAccuracy(name="accuracy")

    # --- the objective, eq. (5) ------------------------------------------------------------
    def losses_of(self, x, y, y_pred):
        """(L_2, L_1): mean task cross-entropy and mean next-token cross-entropy over real tokens.

        Multiple choice: the cross-entropy of a softmax over the N answers' scores. L_1
        covers every sequence of every example (both orderings, all answers).
        """
        if self.task == "multiple_choice" and y_pred["logits"].shape[-1] == 1:
            raise ValueError("GPTClassifier multiple_choice needs at least 2 answers per example; got 1.")
        task = ops.mean(keras.losses.sparse_categorical_crossentropy(y, y_pred["logits"], from_logits=True))
        length = ops.shape(x["token_ids"])[-1]
        ids = ops.reshape(x["token_ids"], (-1, length))  # (B*S, T)
        mask = ops.reshape(ops.cast(x["padding_mask"], "float32"), (-1, length))  # (B*S, T)
        lm_logits = ops.reshape(y_pred["lm_logits"], (-1, length, ops.shape(y_pred["lm_logits"])[-1]))  # (B*S, T, V)
        token_ce = keras.losses.sparse_categorical_crossentropy(
            ids[:, 1:], lm_logits[:, :-1], from_logits=True
        )  # (B*S, T-1): predict u_i from u_<i
        weights = mask[:, 1:]
        lm = ops.sum(token_ce * weights) / ops.maximum(ops.sum(weights), 1.0)
        return task, lm

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        if sample_weight is not None:
            raise ValueError("GPTClassifier's loss is GPT-1's eq. (5); sample_weight is not supported.")
        task, lm = self.losses_of(x, y, y_pred)
        loss = task + self.lm_weight * lm  # L_3 = L_2 + lambda L_1
        if self.losses:
            loss = loss + ops.sum(self.losses)
        return loss

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        task, lm = self.losses_of(x, y, y_pred)
        self.task_loss_tracker.update_state(task)
        self.lm_loss_tracker.update_state(lm)
        self.accuracy_tracker.update_state(y, y_pred["logits"])
        return super().compute_metrics(x, y, y_pred, sample_weight)

    # --- compile with the paper's defaults ---------------------------------------------
    def paper_optimizer(self, total_steps=1000, learning_rate=6.25e-5):
        """GPT-1's fine-tuning optimizer (`fine_tuning_optimizer`) over `total_steps`."""
        return fine_tuning_optimizer(total_steps, learning_rate)
