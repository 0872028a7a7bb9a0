"""Export a `TransformerTranslator` for a translation service: a SavedModel that decodes.

A translator is not a one-call model (`export_model` needs fixed inputs -> outputs):
translating runs the decoder once per output token. The SavedModel written here has
two signatures:

- `serving_default`: `encoder_token_ids` (B, S) int32 -> `token_ids` (B, L) int32,
  greedy decoding (`TransformerTranslator.generate(beam_size=1)`) in a `tf.while_loop`:
  at most min(source length + 50, `max_length`) tokens (Sec. 6.1's limit), each row
  ending with the end token, then padding. Each step runs the decoder over the whole
  prefix (no key/value cache): simpler to serve, and for the short sentences of the
  recipes a few milliseconds.
- `logits`: `encoder_token_ids` (B, S), `decoder_token_ids` (B, T) -> `logits`
  (B, T, V), the teacher-forced forward pass, for a service that runs its own search
  (beam search, sampling) around it.

Tokenization stays outside the graph (the tokenizer is saved in `model.keras`; ids
in, ids out). Verified against the Keras model: the `logits` signature's largest
absolute difference on a seeded batch (`ExportResult.max_abs_diff`), and the decoded
ids, which must equal `generate(beam_size=1)`'s (otherwise `max_abs_diff` is inf).
LiteRT is not offered: the decoding loop's shapes change every step.
"""

import numpy as np
from keras_paperzoo.optional import require_tensorflow

DEFAULT_MAX_LENGTH = 64  # `encode_pairs`'s limit
EXTRA_LENGTH = 50  # Sec. 6.1: at most input length + 50 output tokens


def is_translator(model):
    return type(model).__name__ == "TransformerTranslator" and hasattr(model, "generate")


def sample_token_ids(translator, batch_size=4, length=12, seed=0):
    """(B, S) int32 source ids: random non-special tokens ending with the end token, then padding."""
    backbone = translator.backbone
    special = {backbone.padding_id, translator.start_token_id, translator.end_token_id}
    allowed = np.array([i for i in range(backbone.vocabulary_size) if i not in special])
    rng = np.random.default_rng(seed)
    ids = np.full((batch_size, length), backbone.padding_id, "int32")
    for row in range(batch_size):
        n = int(rng.integers(3, length))
        ids[row, :n - 1] = rng.choice(allowed, size=n - 1)
        ids[row, n - 1] = translator.end_token_id
    return ids


def _archive(translator, max_length):
    import keras

    tf = require_tensorflow("Exporting the translator")

    backbone = translator.backbone
    pad, start, end = backbone.padding_id, translator.start_token_id, translator.end_token_id
    banned = np.zeros(backbone.vocabulary_size, "float32")
    banned[[pad, start]] = -1e9  # never outputs (as `greedy_search`)
    banned = tf.constant(banned)

    def logits(encoder_token_ids, decoder_token_ids):
        inputs = {"encoder_token_ids": encoder_token_ids, "decoder_token_ids": decoder_token_ids}
        return {"logits": translator(inputs, training=False)}

    def translate(encoder_token_ids):
        ids = tf.cast(encoder_token_ids, "int32")  # (B, S)
        batch = tf.shape(ids)[0]
        source_length = tf.reduce_max(tf.reduce_sum(tf.cast(ids != pad, "int32"), axis=1))
        length = tf.minimum(source_length + EXTRA_LENGTH, max_length)
        positions = tf.range(max_length)[None, :]  # (1, L)
        decoder = tf.where(positions == 0, start, tf.fill([batch, max_length], pad))  # (B, L): start, then padding
        outputs = tf.fill([batch, max_length], pad)
        finished = tf.zeros([batch], "bool")

        def step(i, decoder, outputs, finished):
            scores = translator({"encoder_token_ids": ids, "decoder_token_ids": decoder}, training=False)  # (B, L, V)
            scores = tf.nn.log_softmax(tf.cast(tf.gather(scores, i, axis=1), "float32")) + banned  # (B, V)
            chosen = tf.where(finished, pad, tf.cast(tf.argmax(scores, axis=-1), "int32"))  # (B,)
            outputs = tf.where(positions == i, chosen[:, None], outputs)
            decoder = tf.where(positions == i + 1, chosen[:, None], decoder)
            return i + 1, decoder, outputs, finished | (chosen == end)

        def going(i, decoder, outputs, finished):
            return tf.logical_and(i < length, tf.logical_not(tf.reduce_all(finished)))

        _, _, outputs, _ = tf.while_loop(going, step, [tf.constant(0), decoder, outputs, finished])
        return {"token_ids": outputs}

    archive = keras.export.ExportArchive()
    archive.track(translator)
    archive.add_endpoint("serving_default", translate,
                         input_signature=[tf.TensorSpec((None, None), tf.int32, name="encoder_token_ids")])
    archive.add_endpoint("logits", logits, input_signature=[
        tf.TensorSpec((None, None), tf.int32, name="encoder_token_ids"),
        tf.TensorSpec((None, None), tf.int32, name="decoder_token_ids"),
    ])
    return archive


def export_translator(translator, path, format="saved_model", tolerance=1e-4, overwrite=False, max_length=None):
    """Write the SavedModel described in the module docstring and check it; returns an `ExportResult`.

    TensorFlow backend only (`export_model` runs it in a TensorFlow child process
    from the others). `max_length`: the longest output (default 64).
    """
    import keras

    tf = require_tensorflow("Exporting the translator")

    from keras_paperzoo.export import child

    if format != "saved_model":
        raise ValueError(
            f"A TransformerTranslator exports to format='saved_model' only (a decoding loop with shapes that change "
            f"every step, which LiteRT does not take); got format={format!r}."
        )
    if keras.backend.backend() != "tensorflow":
        raise ValueError("export_translator runs on the TensorFlow backend (export_model starts one for you).")
    max_length = int(max_length or DEFAULT_MAX_LENGTH)
    if max_length < 1:
        raise ValueError(f"max_length must be at least 1; got {max_length}.")
    path = child.prepare_path(path, format, overwrite)
    _archive(translator, max_length).write_out(path, verbose=False)

    served = tf.saved_model.load(path)
    ids = sample_token_ids(translator)
    expected = translator.generate(ids, beam_size=1, max_length=max_length)  # (B, L'), L' <= max_length
    decoded = served.signatures["serving_default"](encoder_token_ids=tf.constant(ids))["token_ids"].numpy()
    same_ids = (np.array_equal(decoded[:, :expected.shape[1]], expected)
                and np.all(decoded[:, expected.shape[1]:] == translator.backbone.padding_id))
    prefix = np.concatenate([np.full((len(ids), 1), translator.start_token_id, "int32"), expected[:, :-1]], axis=1)
    keras_logits = keras.ops.convert_to_numpy(
        translator({"encoder_token_ids": ids, "decoder_token_ids": prefix}, training=False))
    served_logits = served.signatures["logits"](encoder_token_ids=tf.constant(ids),
                                                decoder_token_ids=tf.constant(prefix))["logits"].numpy()
    diff = float(np.max(np.abs(keras_logits - served_logits))) if same_ids else float("inf")
    return child.ExportResult(path=path, format=format, max_abs_diff=diff,
                              tolerance=child.check_tolerance(tolerance))
