"""BERT fine-tuned for multiple choice, SWAG (Devlin et al. 2019, Sec. 4.4)."""


import keras

from keras_paperzoo.layers.sequence_folding import FoldSequences, UnfoldSequences
from keras_paperzoo.models.bert.bert_backbone import BertBackbone, bert_initializer, check_task, task_inputs
from keras_paperzoo.models.bert.bert_classifier import BertClassifier
from keras_paperzoo.models.trainer import Trainer


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class BertMultipleChoice(Trainer, keras.Model):
    """A `BertBackbone` scoring each (context, ending) pair by V . C, a softmax over the choices.

    "We construct four input sequences, each containing the concatenation of the given
    sentence (sentence A) and a possible continuation (sentence B). The only
    task-specific parameters introduced is a vector whose dot product with the [CLS]
    token representation C denotes a score for each choice which is normalized with a
    softmax layer" (Sec. 4.4). The vector is a Dense(1) (with a bias, which cancels in
    the softmax) after dropout 0.1 on C, as the reference code's classifiers.

    Inputs: a dict of (B, N, T) int tensors `token_ids`, `segment_ids`,
    `padding_mask`: row n packs [CLS] context [SEP] ending_n [SEP] (`BertPacker` on the
    pairs, stacked). Outputs: (B, N) choice logits; y: the right choice's index (B,).

    `compile()` with no arguments gives the SWAG setting: lr 2e-5 (batch 16, 3 epochs),
    Adam with decoupled weight decay 0.01, sparse categorical cross-entropy on the
    logits and accuracy; `total_steps` adds warmup (10 %) and linear decay.

    Args:
        backbone: a `BertBackbone`.
        num_choices: int >= 2, N (4 for SWAG).
        dropout: float, dropout on C (0.1).

    Example:

    ```python
    model = BertMultipleChoice(BertBackbone.from_preset("bert_base"), num_choices=4)
    model.compile(total_steps=3 * len(swag_batches))
    model.fit(swag_batches, epochs=3)   # x: (B, 4, T) token_ids, segment_ids, padding_mask; y: (B,)
    ```
    """

    backbone_class = BertBackbone

    def __init__(self, backbone, num_choices=4, dropout=0.1, **kwargs):
        check_task("BertMultipleChoice", backbone, dropout)
        if isinstance(num_choices, bool) or not isinstance(num_choices, int) or num_choices < 2:
            raise ValueError(f"BertMultipleChoice num_choices must be an int >= 2 (a softmax over one choice "
                             f"is always 1); got {num_choices!r}.")

        # === Layers ===
        fold = FoldSequences(name="fold_choices")
        output_dropout = keras.layers.Dropout(dropout, name="output_dropout")
        choice_dense = keras.layers.Dense(1, kernel_initializer=bert_initializer(), name="choice_score")
        unfold = UnfoldSequences(name="unfold_choices")
        choice_logits = keras.layers.Reshape((num_choices,), name="choice_logits")

        # === Functional Model ===
        inputs = task_inputs(backbone, (num_choices, None))  # (B, N, T) each
        flat = {name: fold(tensor) for name, tensor in inputs.items()}  # (B N, T) each
        pooled = backbone(flat)["pooled_output"]  # C, (B N, H)
        scores = choice_dense(output_dropout(pooled))  # V . C, (B N, 1)
        logits = choice_logits(unfold(scores, inputs["token_ids"]))  # (B, N, 1) -> (B, N)
        super().__init__(inputs=inputs, outputs=logits, **kwargs)

        # === Config ===
        self.backbone = backbone
        self.num_choices = num_choices
        self.dropout = dropout

    # --- compile with the paper's defaults: BertClassifier's, whose lr 2e-5 is SWAG's too --------
    paper_optimizer = BertClassifier.paper_optimizer
    paper_loss = BertClassifier.paper_loss
    paper_metrics = BertClassifier.paper_metrics
