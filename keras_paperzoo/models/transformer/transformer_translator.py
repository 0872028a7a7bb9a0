"""The Transformer trained for translation: tied softmax projection, label-smoothed loss,
the paper's optimizer and schedule, greedy / beam-search decoding, `translate` on strings.
"""

import keras
from keras import ops

from keras_paperzoo.models.transformer.transformer_backbone import TransformerBackbone
from keras_paperzoo.models.transformer.transformer_decoding import beam_search, greedy_search
from keras_paperzoo.models.transformer.transformer_tokenizer import ids_to_texts, texts_to_ids
from keras_paperzoo.losses.label_smoothing import label_smoothed_cross_entropy
from keras_paperzoo.models.trainer import Trainer
from keras_paperzoo.training.schedules import NoamSchedule


def paper_optimizer(d_model, warmup_steps=4000, learning_rate_scale=1.0):
    """Adam(beta1 0.9, beta2 0.98, eps 1e-9) on the eq. (3) schedule (Sec. 5.3)."""
    schedule = NoamSchedule(int(d_model), warmup_steps=int(warmup_steps), scale=learning_rate_scale)
    return keras.optimizers.Adam(schedule, beta_1=0.9, beta_2=0.98, epsilon=1e-9)


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class TransformerTranslator(Trainer, keras.Model):
    """Sequence-to-sequence translation with the Transformer (Vaswani et al. 2017).

    `call({"encoder_token_ids", "decoder_token_ids"})` gives (B, T, V) logits: the
    backbone's decoder states times the transposed target embedding (the shared
    pre-softmax projection, Sec. 3.4). Training data are `(x, y)` with x those two
    inputs (the decoder input is the target shifted right, starting with the start
    token) and y the (B, T) target ids ending with the end token; padding (id 0) is
    masked in attention and in the loss.

    `compile()` with no arguments gives the paper's training setup: label-smoothed
    cross-entropy (eps_ls = 0.1, Sec. 5.4) and Adam(0.9, 0.98, 1e-9) on
    lrate = d_model^-0.5 min(step^-0.5, step warmup^-1.5) with warmup 4000 (Sec. 5.3);
    the loss is always that one (`compile(loss=...)` is refused). `from_preset(name,
    tokenizer=..., **overrides)` builds the `TransformerBackbone` preset `name`.

    `generate(ids)` decodes with cached keys and values, greedy (`beam_size=1`) or beam
    search (beam 4, length penalty 0.6, up to input length + 50 tokens, Sec. 6.1);
    `translate(sentences)` does the same on raw strings with the model's `tokenizer`.

    Args:
        backbone: a `TransformerBackbone`.
        tokenizer: None or a keras-hub tokenizer (see `transformer_tokenizer`) whose
            vocabulary is the backbone's; saved with the model.
        label_smoothing: float, eps_ls (0.1).
        start_token_id, end_token_id: ints, the decoder's start token and the end token.

    Example:

    ```python
    translator = TransformerTranslator(TransformerBackbone.from_preset("transformer_tiny",
                                       vocabulary_size=100))
    translator.compile()   # label smoothing 0.1, Adam(0.9, 0.98, 1e-9), Noam warmup 4000
    translator.fit({"encoder_token_ids": src, "decoder_token_ids": tgt_in}, tgt_out)
    translator.generate(src, beam_size=4)          # (B, L) token ids
    translator.translate(["Ein Hund läuft."])      # with a tokenizer attached
    ```
    """

    backbone_class = TransformerBackbone
    fixed_loss = True  # label-smoothed cross-entropy

    def __init__(self, backbone, tokenizer=None, label_smoothing=0.1, start_token_id=2, end_token_id=3, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(backbone, TransformerBackbone):
            raise ValueError(f"TransformerTranslator needs a TransformerBackbone; got {type(backbone).__name__}.")
        if not 0.0 <= label_smoothing < 1.0:
            raise ValueError(f"label_smoothing must be in [0, 1); got {label_smoothing!r}.")
        for name, value in (("start_token_id", start_token_id), ("end_token_id", end_token_id)):
            if not 0 <= value < backbone.vocabulary_size or value == backbone.padding_id:
                raise ValueError(
                    f"{name} must be a non-padding id below vocabulary_size {backbone.vocabulary_size}; got {value}."
                )
        self.backbone = backbone
        self.tokenizer = tokenizer
        self.label_smoothing = float(label_smoothing)
        self.start_token_id = int(start_token_id)
        self.end_token_id = int(end_token_id)
        self.built = True  # the functional backbone is built; the projection is its embedding

    def build(self, input_shape=None):
        self.built = True

    def call(self, inputs, training=None):
        states = self.backbone(inputs, training=training)["decoder_sequence_output"]  # (B, T, d)
        return self.backbone.logits(states)  # (B, T, V)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        if y_pred is None:
            y_pred = self(x, training=training)
        loss = label_smoothed_cross_entropy(y, y_pred, self.label_smoothing, self.backbone.padding_id)
        return loss + ops.cast(ops.sum(self.losses), "float32") if self.losses else loss

    # --- compile with the paper's defaults -----------------------------------------
    def paper_optimizer(self, warmup_steps=4000, learning_rate_scale=1.0):
        """Adam(0.9, 0.98, 1e-9) on eq. (3)'s schedule for the backbone's d_model (module `paper_optimizer`)."""
        return paper_optimizer(self.backbone.hidden_dim, warmup_steps, learning_rate_scale)

    # --- decoding ------------------------------------------------------------------
    def generate(self, encoder_token_ids, beam_size=4, length_penalty=0.6, max_length=None):
        """Translate token ids: (B, S) -> (B, L) int32 numpy ids, each ending with the end token
        (unless `max_length` cut it), then padding. `beam_size=1` is greedy decoding."""
        args = (self.backbone, encoder_token_ids, self.start_token_id, self.end_token_id)
        if beam_size == 1:
            return greedy_search(*args, max_length=max_length)
        return beam_search(*args, beam_size=beam_size, alpha=length_penalty, max_length=max_length)

    def translate(self, sentences, beam_size=4, length_penalty=0.6, batch_size=64, max_length=None, verbose=0):
        """Raw source strings -> translated strings, with the model's tokenizer (verbose=1: a progress bar)."""
        if self.tokenizer is None:
            raise ValueError("translate needs a tokenizer: build the translator with tokenizer=... "
                             "(transformer_tokenizer.make_tokenizer) or use generate() on token ids.")
        if isinstance(sentences, str):
            sentences = [sentences]
        results = []
        progress = keras.utils.Progbar(len(sentences), verbose=verbose, unit_name="sentence")
        for start in range(0, len(sentences), batch_size):
            chunk = list(sentences[start:start + batch_size])
            ids = texts_to_ids(self.tokenizer, chunk, end_token_id=self.end_token_id,
                               padding_id=self.backbone.padding_id)
            out = self.generate(ids, beam_size=beam_size, length_penalty=length_penalty, max_length=max_length)
            results.extend(ids_to_texts(self.tokenizer, out, self.end_token_id, self.backbone.padding_id))
            progress.add(len(chunk))
        return results
