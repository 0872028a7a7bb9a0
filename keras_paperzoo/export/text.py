"""Export a BERT classifier as a SavedModel that takes raw strings: WordPiece, packing and classifier in one graph.

The serving signature takes a batch of strings (`tf.string`, shape `[batch]`), named
`sentence`, or two, `sentence_a` and `sentence_b`, for a classifier fine-tuned on
sentence pairs, and returns `{"logits": (batch, num_classes)}`. Inside the graph: the
keras-hub WordPiece tokenizer (TF Text ops), packing as in fine-tuning,
[CLS] A [SEP] (B [SEP]) with segment ids 0 (1 for B) and the padding mask, truncated
round-robin and padded to `sequence_length` (`keras_paperzoo.data.bert_inputs.
BertPacker`, the same code `classification_dataset` runs), then the classifier
(Devlin et al. 2019, Sec. 3 and 4.1, Fig. 4a, b). A second signature, `tokenize`,
returns the packed `token_ids`, `segment_ids` and `padding_mask` for the same input.

The check: the sample strings are packed in this process by `BertPacker` inside a
`tf.function` (the TensorFlow path that `tf.data` runs in fine-tuning), the Keras
model is run on the ids, and the reloaded SavedModel (`tf.saved_model.load`) on the
strings. Its token ids must equal the packer's exactly and its logits be within
`tolerance` of Keras's, else `ExportMismatchError` is raised.

Backends: the export always runs on TensorFlow. On JAX and PyTorch the classifier is
saved to a temporary `.keras` file with the tokenizer's vocabulary and settings, and
`python -m keras_paperzoo.export ... --vocabulary` exports it in a child process with
`KERAS_BACKEND=tensorflow`; its outputs are compared here with the live model.

Serving: the graph holds TF Text ops (`RegexSplitWithOffsets`, `FastWordpiece...`), so
a Python consumer must `import tensorflow_text` before `tf.saved_model.load`. Without
`tensorflow-text` installed the tokenizer cannot be put in a graph; the export then
falls back to the token-id SavedModel of `export_model` and says why in the result
(`inputs` is the three token-id inputs, `note` the reason), or raises if
`allow_token_ids=False`.

Example:

```python
import keras_hub
from keras_paperzoo.export import export_text_classifier
from keras_paperzoo.models.bert import BertBackbone, BertClassifier

vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "good", "film", "."]
tokenizer = keras_hub.models.BertTokenizer(vocabulary=vocabulary, lowercase=True)
backbone = BertBackbone(vocabulary_size=len(vocabulary), num_layers=1, num_heads=2,
                        hidden_dim=16, intermediate_dim=32, max_sequence_length=16)
classifier = BertClassifier(backbone, num_classes=2)
result = export_text_classifier(classifier, tokenizer, "/tmp/bert_sm", overwrite=True)
print(result.inputs, result.max_abs_diff)   # ('sentence',) ~1e-7

import tensorflow as tf, tensorflow_text  # noqa: F401 (registers the TF Text ops)
serve = tf.saved_model.load("/tmp/bert_sm").signatures["serving_default"]
serve(sentence=tf.constant(["A good film."]))["logits"]     # (1, 2)
```
"""

import dataclasses
import importlib
import json
import os
import tempfile
import warnings

import numpy as np

from keras_paperzoo.export import child
from keras_paperzoo.export import exporters
from keras_paperzoo.export.child import DEFAULT_TOLERANCE
from keras_paperzoo.export.child import ExportMismatchError
from keras_paperzoo.export.child import ExportResult
from keras_paperzoo.optional import require, require_tensorflow

PACKED_INPUTS = ("token_ids", "segment_ids", "padding_mask")
SENTENCE_INPUTS = ("sentence",)
PAIR_INPUTS = ("sentence_a", "sentence_b")
TOKENIZE_SIGNATURE = "tokenize"

# Compared on by default: case, punctuation, accents, CJK, an empty string, words
# missing from any small vocabulary, and one text longer than 512 word pieces (so
# truncation is exercised at every sequence length BERT allows).
SAMPLE_SENTENCES = (
    "A gripping, funny film.",
    "the plot is NOT very good!",
    "",
    "Caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u2014 \u6771\u4eac 2019?",
    "unbelievable xyzzy qwertyuiopasdfgh",
    " ".join(["the quick brown fox jumps over the lazy dog ."] * 60),
)


@dataclasses.dataclass(frozen=True)
class TextExportResult(ExportResult):
    """What `export_text_classifier` wrote and how closely it reproduces the Keras model.

    Attributes (besides `ExportResult`'s `path`, `format`, `max_abs_diff`, `tolerance`):
        inputs: names of the serving inputs: `("sentence",)`, `("sentence_a",
            "sentence_b")`, or `PACKED_INPUTS` after a fall-back to token ids.
        sequence_length: the length texts are packed (truncated, padded) to.
        lowercase: whether the tokenizer lower-cases (None after a fall-back).
        note: why the export fell back to token ids; empty otherwise.
    """

    inputs: tuple = SENTENCE_INPUTS
    sequence_length: int = None
    lowercase: bool = None
    note: str = ""

    @property
    def raw_strings(self):
        """True when the SavedModel takes raw strings (tokeniser in the graph)."""
        return tuple(self.inputs) != PACKED_INPUTS

    def to_dict(self):
        return {
            **super().to_dict(),
            "inputs": list(self.inputs),
            "sequence_length": self.sequence_length,
            "lowercase": self.lowercase,
            "note": self.note,
        }


# ---------------------------------------------------------------------------
# Checks of the arguments (before any export work or child process)
# ---------------------------------------------------------------------------


def tf_text_available():
    """Whether `tensorflow_text` imports: it provides the tokenizer's graph ops."""
    try:
        importlib.import_module("tensorflow_text")
    except ImportError:
        return False
    return True


def infer_lowercase(vocabulary):
    """True for an uncased vocabulary: (almost) no token other than "[...]" specials has an upper-case letter.

    Up to one token in a thousand may (stray symbols in large uncased vocabularies);
    a cased vocabulary (bert-base-cased: many "The", "New", ...) has far more.
    """
    words = [t for t in vocabulary if not (t.startswith("[") and t.endswith("]"))]
    cased = sum(t != t.lower() for t in words)
    return cased <= len(words) // 1000


def load_tokenizer(vocabulary, lowercase=None):
    """A `keras_hub.models.BertTokenizer` over a vocabulary file (one token a line).

    Args:
        vocabulary: path of the vocabulary file (`vocabulary.txt` beside a model from
            `paperzoo train bert`, `vocab.txt` of a Hugging Face checkpoint).
        lowercase: lower-case the text first; None infers it from the vocabulary
            (`infer_lowercase`: uncased vocabularies have no upper-case tokens).

    Raises:
        ValueError: the file does not exist, is empty, or lacks a BERT special token.
    """
    import keras_hub

    if vocabulary is None:
        raise ValueError(
            "a vocabulary file is needed to put the tokenizer in the graph; pass the "
            "vocabulary.txt written beside the model (paperzoo train bert) or a "
            "checkpoint's vocab.txt"
        )
    path = os.fspath(vocabulary)
    if not os.path.isfile(path):
        raise ValueError(
            f"vocabulary file {path!r} does not exist; pass the vocabulary.txt written "
            "beside the model (paperzoo train bert) or a checkpoint's vocab.txt"
        )
    with open(path, encoding="utf-8") as f:
        tokens = [line.rstrip("\r\n") for line in f]
    while tokens and not tokens[-1]:
        tokens.pop()
    if not tokens:
        raise ValueError(f"vocabulary file {path!r} is empty; it should hold one token a line")
    missing = [t for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]") if t not in tokens]
    if missing:
        raise ValueError(
            f"vocabulary file {path!r} has no {', '.join(missing)}: a BERT vocabulary "
            "needs [PAD], [UNK], [CLS], [SEP] and [MASK]"
        )
    if lowercase is None:
        lowercase = infer_lowercase(tokens)
    return keras_hub.models.BertTokenizer(vocabulary=tokens, lowercase=bool(lowercase))


def _check_tokenizer(tokenizer):
    missing = [a for a in ("cls_token_id", "sep_token_id", "pad_token_id", "get_vocabulary")
               if getattr(tokenizer, a, None) is None]
    if missing:
        raise ValueError(
            f"tokenizer must be a keras_hub BertTokenizer (WordPiece with [CLS], [SEP], "
            f"[PAD]) or a vocabulary file path; got a {type(tokenizer).__name__} without "
            f"{', '.join(missing)}"
        )
    if getattr(tokenizer, "sequence_length", None):
        raise ValueError(
            f"the tokenizer has sequence_length={tokenizer.sequence_length}: it must "
            "return ragged word pieces (sequence_length=None); the packer pads to the "
            "export's sequence_length"
        )


def _check_classifier(classifier):
    """Input layout of a model taking token_ids, segment_ids, padding_mask; its vocabulary and length limits."""
    from keras_paperzoo.export import verify

    layout = verify.input_layout(classifier)
    names = sorted(s.name for s in layout.slots)
    if names != sorted(PACKED_INPUTS) or not isinstance(layout.structure, dict):
        raise ValueError(
            "the model must take a dict of token_ids, segment_ids and padding_mask "
            f"(a BertClassifier); {classifier.name!r} takes {names}"
        )
    backbone = getattr(classifier, "backbone", None)
    return (getattr(backbone, "vocabulary_size", None),
            getattr(backbone, "max_sequence_length", None))


def _check_sequence_length(sequence_length, max_sequence_length, pairs):
    if sequence_length is None:
        if max_sequence_length is None:
            raise ValueError(
                "sequence_length is required: the model has no backbone."
                "max_sequence_length to default to"
            )
        sequence_length = max_sequence_length
    least = 4 if pairs else 3
    if isinstance(sequence_length, bool) or not isinstance(sequence_length, (int, np.integer)) \
            or sequence_length < least:
        what = "[CLS] A [SEP] B [SEP]" if pairs else "[CLS] A [SEP]"
        raise ValueError(f"sequence_length must be an int >= {least} ({what} with one token of text); "
                         f"got {sequence_length!r}")
    if max_sequence_length is not None and sequence_length > max_sequence_length:
        raise ValueError(
            f"sequence_length {sequence_length} is longer than the backbone's "
            f"max_sequence_length {max_sequence_length} (its position embeddings); "
            f"use at most {max_sequence_length}"
        )
    return int(sequence_length)


def _check_vocabulary_size(tokenizer, vocabulary_size):
    size = len(tokenizer.get_vocabulary())
    if vocabulary_size is not None and size > vocabulary_size:
        raise ValueError(
            f"the tokenizer's vocabulary has {size} tokens but the model's token "
            f"embedding has {vocabulary_size} rows: ids >= {vocabulary_size} would "
            "fall outside it; is this the vocabulary the model was trained with?"
        )


def normalize_sample_texts(sample_texts, pairs):
    """A list of strings (single sentences) or a pair of equal-length lists (sentence pairs)."""
    if sample_texts is None:
        texts = list(SAMPLE_SENTENCES)
        return (texts, texts[1:] + texts[:1]) if pairs else texts
    if pairs:
        ok = (isinstance(sample_texts, (tuple, list)) and len(sample_texts) == 2
              and all(isinstance(s, (tuple, list)) and s and all(isinstance(t, str) for t in s)
                      for s in sample_texts)
              and len(sample_texts[0]) == len(sample_texts[1]))
        if not ok:
            raise ValueError(
                "sample_texts for pairs=True must be two equal-length, non-empty lists of "
                "strings (sentences A, sentences B)"
            )
        return list(sample_texts[0]), list(sample_texts[1])
    if isinstance(sample_texts, str) or not isinstance(sample_texts, (tuple, list)) \
            or not sample_texts or not all(isinstance(t, str) for t in sample_texts):
        raise ValueError("sample_texts must be a non-empty list of strings (pairs=False)")
    return list(sample_texts)


def _input_names(pairs):
    return PAIR_INPUTS if pairs else SENTENCE_INPUTS


# ---------------------------------------------------------------------------
# The graph (TensorFlow backend)
# ---------------------------------------------------------------------------


def pack_texts(tokenizer, sequence_length, texts, pairs):
    """Token ids, segment ids, padding mask {name: int32 (B, T)} of `texts`, packed by TF ops as in fine-tuning."""
    tf = require_tensorflow("Packing texts for the text SavedModel")

    from keras_paperzoo.data.bert_inputs import BertPacker

    packer = BertPacker(tokenizer, sequence_length)
    segments = tuple(tf.constant(s, tf.string) for s in texts) if pairs else tf.constant(texts, tf.string)
    # Inside a tf.function the keras-hub layers take their TensorFlow path, the one
    # tf.data ran in fine-tuning (eager calls would take the pure-Python path).
    packed = tf.function(packer)(segments)
    return {k: np.asarray(v.numpy()) for k, v in packed.items()}


def _write_archive(classifier, tokenizer, path, sequence_length, pairs):
    """Write the SavedModel: `serving_default` strings -> logits, `tokenize` strings -> packed ids."""
    import keras

    tf = require_tensorflow("Text SavedModel export")

    from keras_paperzoo.data.bert_inputs import BertPacker

    packer = BertPacker(tokenizer, sequence_length)
    names = _input_names(pairs)
    signature = [tf.TensorSpec([None], tf.string, name=n) for n in names]

    def segments(args):
        return tuple(args) if pairs else args[0]

    def serve(*args):
        return {"logits": classifier(packer(segments(args)), training=False)}  # (B, K)

    def tokenize(*args):
        return packer(segments(args))  # {name: (B, T) int32}

    archive = keras.export.ExportArchive()
    archive.track(classifier)  # the tokenizer holds no variables: its WordPiece model is a graph constant
    archive.add_endpoint("serve", serve, input_signature=signature)
    archive.add_endpoint(TOKENIZE_SIGNATURE, tokenize, input_signature=signature)
    archive.write_out(path, verbose=False)


def run_text_saved_model(path, texts, pairs):
    """Run a raw-string SavedModel on `texts`; {"logits", "token_ids", "segment_ids", "padding_mask": array}."""
    tf = require_tensorflow("Running a text SavedModel")
    require("tensorflow_text", "Running a text SavedModel")  # registers the tokenizer's ops before loading

    loaded = tf.saved_model.load(str(path))
    names = _input_names(pairs)
    for key in ("serving_default", TOKENIZE_SIGNATURE):
        if key not in loaded.signatures:
            raise ValueError(f"SavedModel {path} has no {key!r} signature (has {sorted(loaded.signatures)})")
    serve = loaded.signatures["serving_default"]
    if sorted(serve.structured_input_signature[1]) != sorted(names):
        raise ValueError(
            f"SavedModel {path} takes {sorted(serve.structured_input_signature[1])}; "
            f"expected {list(names)} (pairs={pairs})"
        )
    feed = {n: tf.constant(t, tf.string) for n, t in zip(names, texts if pairs else (texts,))}
    out = {k: np.asarray(v.numpy()) for k, v in serve(**feed).items()}
    out.update({k: np.asarray(v.numpy()) for k, v in loaded.signatures[TOKENIZE_SIGNATURE](**feed).items()})
    return out


def check_text_outputs(reference_ids, reference_logits, artifact, tolerance, path):
    """Largest |logits - Keras|; raises `ExportMismatchError` on differing token ids or logits over tolerance."""
    from keras_paperzoo.export import verify

    for name in PACKED_INPUTS:
        got = artifact.get(name)
        want = reference_ids[name]
        if got is None or got.shape != want.shape or np.any(got != want):
            where = "missing" if got is None else (
                f"shape {got.shape} vs {want.shape}" if got.shape != want.shape
                else f"{int(np.sum(got != want))} of {want.size} positions differ")
            raise ExportMismatchError(
                f"the SavedModel at {path} packs the sample texts differently from the "
                f"tokenizer used in fine-tuning: {name} {where}"
            )
    diff = verify.max_abs_diff(reference_logits, {"logits": artifact.get("logits")}) \
        if artifact.get("logits") is not None else float("inf")
    if not diff <= tolerance:
        raise ExportMismatchError(
            f"the SavedModel at {path} does not reproduce the Keras model: largest "
            f"|exported - keras| logit difference {diff:.3g} > tolerance {tolerance:g} "
            "on the sample texts"
        )
    return diff


def _keras_logits(classifier, ids):
    import keras

    tensors = {k: keras.ops.convert_to_tensor(v) for k, v in ids.items()}
    return np.asarray(keras.ops.convert_to_numpy(classifier(tensors, training=False)))


def _export_here(classifier, tokenizer, path, sequence_length, pairs, texts, tolerance, overwrite):
    """TensorFlow backend: write, reload, compare; returns (diff, artifact outputs)."""
    path = child.prepare_path(path, "saved_model", overwrite)
    _write_archive(classifier, tokenizer, path, sequence_length, pairs)
    artifact = run_text_saved_model(path, texts, pairs)
    ids = pack_texts(tokenizer, sequence_length, texts, pairs)
    diff = check_text_outputs(ids, _keras_logits(classifier, ids), artifact, tolerance, path)
    return path, diff, artifact


# ---------------------------------------------------------------------------
# Child process (JAX / PyTorch backends): the tokenizer travels as vocabulary + settings
# ---------------------------------------------------------------------------

_TOKENIZER_SETTINGS = ("lowercase", "strip_accents", "split", "split_on_cjk", "suffix_indicator",
                       "oov_token", "special_tokens_in_strings")


def write_tokenizer(tokenizer, folder):
    """Save the tokenizer as `vocabulary.txt` and `tokenizer.json` (class and settings) in `folder`."""
    import keras

    vocabulary = os.path.join(folder, "vocabulary.txt")
    with open(vocabulary, "w", encoding="utf-8") as f:
        f.write("".join(f"{t}\n" for t in tokenizer.get_vocabulary()))
    settings = os.path.join(folder, "tokenizer.json")
    with open(settings, "w", encoding="utf-8") as f:
        json.dump(keras.saving.serialize_keras_object(tokenizer), f)
    return vocabulary, settings


def read_tokenizer(vocabulary, settings=None, lowercase=None):
    """Inverse of `write_tokenizer`; without `settings`, `load_tokenizer(vocabulary, lowercase)`."""
    if settings is None:
        return load_tokenizer(vocabulary, lowercase)
    import keras

    importlib.import_module("keras_hub")  # registers the tokenizer classes

    with open(settings, encoding="utf-8") as f:
        config = json.load(f)
    tokenizer = keras.saving.deserialize_keras_object(config)
    tokenizer.set_vocabulary(os.fspath(vocabulary))
    return tokenizer


def _child_args(vocabulary, settings, lowercase, sequence_length, pairs, texts_json):
    args = ["--vocabulary", vocabulary, "--sequence-length", str(sequence_length)]
    if settings:
        args += ["--tokenizer-config", settings]
    if lowercase is not None:
        args.append("--lowercase" if lowercase else "--no-lowercase")
    if pairs:
        args.append("--pairs")
    if texts_json:
        args += ["--sample-texts", texts_json]
    return args


def _export_via_child(classifier, tokenizer, path, sequence_length, pairs, texts, tolerance, overwrite):
    path = child.check_path_only(path, "saved_model", overwrite)
    with tempfile.TemporaryDirectory(prefix="paperzoo_text_export_") as tmp:
        model_file = child.save_for_child(classifier, tmp)
        vocabulary, settings = write_tokenizer(tokenizer, tmp)
        texts_json = os.path.join(tmp, "texts.json")
        with open(texts_json, "w", encoding="utf-8") as f:
            json.dump(texts, f)
        outputs_npz = os.path.join(tmp, "outputs.npz")
        extra = _child_args(vocabulary, settings, None, sequence_length, pairs, texts_json)
        payload = child.run_child(model_file, path, "saved_model", None, tolerance, overwrite,
                                  outputs_npz=outputs_npz, extra_args=extra)
        with np.load(outputs_npz) as data:
            artifact = {k: data[k] for k in data.files}
    # Compare with the live model on this backend, not only the reloaded TF copy.
    ids = pack_texts(tokenizer, sequence_length, texts, pairs)
    diff = check_text_outputs(ids, _keras_logits(classifier, ids), artifact, tolerance, payload["path"])
    return payload["path"], max(diff, float(payload["max_abs_diff"])), artifact


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


def _fallback(classifier, path, tolerance, overwrite, sequence_length, why):
    note = (f"the SavedModel takes token ids, not raw strings: {why}. Tokenise with "
            "keras_paperzoo.data.bert_inputs.BertPacker (the same vocabulary and "
            f"sequence_length {sequence_length}) before calling it")
    warnings.warn(note, stacklevel=3)
    result = exporters.export_model(classifier, path, format="saved_model", tolerance=tolerance,
                                    overwrite=overwrite)
    if not result.ok:
        raise ExportMismatchError(
            f"the token-id SavedModel at {result.path} does not reproduce the Keras model: "
            f"largest |exported - keras| = {result.max_abs_diff:.3g} > tolerance {tolerance:g}"
        )
    return TextExportResult(path=result.path, format="saved_model", max_abs_diff=result.max_abs_diff,
                            tolerance=tolerance, inputs=PACKED_INPUTS, sequence_length=sequence_length,
                            lowercase=None, note=note)


def export_text_classifier(classifier, tokenizer, path, sequence_length=None, pairs=False, lowercase=None,
                           sample_texts=None, tolerance=DEFAULT_TOLERANCE, overwrite=False,
                           allow_token_ids=True):
    """Export a BERT classifier to a SavedModel taking raw strings, and check it against Keras.

    See the module docstring for the graph and the check. Works on every backend (the
    export itself runs on TensorFlow, in a child process on JAX and PyTorch).

    Args:
        classifier: a built `BertClassifier`, or any Keras model taking a dict of
            `token_ids`, `segment_ids`, `padding_mask` (B, T) and returning logits.
        tokenizer: the keras-hub `BertTokenizer` the classifier was fine-tuned with, or
            the path of its vocabulary file (see `load_tokenizer`).
        path: output SavedModel directory.
        sequence_length: length texts are packed to; default the backbone's
            `max_sequence_length` (what `paperzoo train bert` fine-tunes with). At most
            that, at least 3 (4 for pairs).
        pairs: True for a classifier fine-tuned on sentence pairs (MNLI, QQP, ...): two
            string inputs, `sentence_a` and `sentence_b`. The model cannot tell; say so.
        lowercase: only with a vocabulary path: lower-case the text; None infers it from
            the vocabulary.
        sample_texts: texts to check on: a list of strings, or for pairs two
            equal-length lists; default `SAMPLE_SENTENCES` (and them rotated by one for B).
        tolerance: largest |exported - keras| logit difference accepted.
        overwrite: replace `path` if it exists and is not empty.
        allow_token_ids: without `tensorflow-text` installed, export the token-id
            SavedModel instead (with a warning and `result.note`); False raises.

    Returns:
        `TextExportResult` (`path`, `max_abs_diff`, `inputs`, `sequence_length`,
        `lowercase`, `note`, `raw_strings`).

    Raises:
        ValueError: a missing or non-BERT vocabulary, a tokenizer that is not WordPiece
            BERT, a model without the three BERT inputs, a sequence length out of
            range, a vocabulary larger than the model's embedding, bad sample texts or
            output path.
        ExportMismatchError: the SavedModel's token ids differ from the tokenizer's,
            or its logits from Keras's by more than `tolerance`.
    """
    tolerance = child.check_tolerance(tolerance)
    if not isinstance(pairs, bool):
        raise ValueError(f"pairs must be True or False; got {pairs!r}")
    vocabulary_size, max_sequence_length = _check_classifier(classifier)
    sequence_length = _check_sequence_length(sequence_length, max_sequence_length, pairs)
    if isinstance(tokenizer, (str, os.PathLike)) or tokenizer is None:
        tokenizer = load_tokenizer(tokenizer, lowercase)
    elif lowercase is not None:
        raise ValueError("lowercase= is only for a vocabulary path; a tokenizer object keeps its own setting")
    _check_tokenizer(tokenizer)
    _check_vocabulary_size(tokenizer, vocabulary_size)
    texts = normalize_sample_texts(sample_texts, pairs)
    child.check_path_only(path, "saved_model", overwrite)
    if not tf_text_available():
        if not allow_token_ids:
            raise ValueError("the tokenizer needs tensorflow-text to run in a graph: pip install tensorflow-text")
        return _fallback(classifier, path, tolerance, overwrite, sequence_length,
                         "tensorflow-text is not installed, so the WordPiece tokenizer cannot run in a graph")
    if child.backend() == "tensorflow":
        path, diff, _ = _export_here(classifier, tokenizer, path, sequence_length, pairs, texts, tolerance,
                                     overwrite)
    else:
        path, diff, _ = _export_via_child(classifier, tokenizer, path, sequence_length, pairs, texts,
                                          tolerance, overwrite)
    return TextExportResult(path=path, format="saved_model", max_abs_diff=diff, tolerance=tolerance,
                            inputs=_input_names(pairs), sequence_length=sequence_length,
                            lowercase=bool(tokenizer.lowercase), note="")


def export_text_classifier_file(model_path, vocabulary, path, sequence_length=None, pairs=False, lowercase=None,
                                tolerance=DEFAULT_TOLERANCE, overwrite=False, allow_token_ids=True):
    """`export_text_classifier` of a `.keras` file and a vocabulary file (what `paperzoo export --vocabulary` runs).

    On TensorFlow it runs here; on JAX and PyTorch the whole job runs in a TensorFlow
    child process (the arguments are checked here first, so a wrong vocabulary or
    sequence length fails fast). Raises as `export_text_classifier`.

    Example:

    ```python
    from keras_paperzoo.export import export_text_classifier_file

    result = export_text_classifier_file("runs/bert/model.keras", "runs/bert/vocabulary.txt",
                                         "runs/bert/model_saved_model", overwrite=True)
    print(result.inputs, result.sequence_length, result.max_abs_diff)
    ```
    """
    tolerance = child.check_tolerance(tolerance)
    model_path = os.fspath(model_path)
    if not os.path.isfile(model_path):
        raise ValueError(f"model_path {model_path!r} is not a file (expected a .keras file)")
    tokenizer = load_tokenizer(vocabulary, lowercase)
    if child.backend() == "tensorflow":
        classifier = exporters.load_model_file(model_path)
        return export_text_classifier(classifier, tokenizer, path, sequence_length=sequence_length, pairs=pairs,
                                      tolerance=tolerance, overwrite=overwrite, allow_token_ids=allow_token_ids)
    classifier = exporters.load_model_file(model_path)  # fail fast on a wrong model or length
    vocabulary_size, max_sequence_length = _check_classifier(classifier)
    sequence_length = _check_sequence_length(sequence_length, max_sequence_length, pairs)
    _check_vocabulary_size(tokenizer, vocabulary_size)
    child.check_path_only(path, "saved_model", overwrite)
    extra = _child_args(os.path.abspath(os.fspath(vocabulary)), None, bool(tokenizer.lowercase),
                        sequence_length, pairs, None)
    if not allow_token_ids:
        extra.append("--strings-only")
    payload = child.run_child(model_path, os.path.abspath(os.fspath(path)), "saved_model", None, tolerance,
                              overwrite, extra_args=extra)
    return result_from_dict(payload)


def result_from_dict(payload):
    """`TextExportResult` from the JSON dict `python -m keras_paperzoo.export --vocabulary` prints."""
    return TextExportResult(
        path=payload["path"], format=payload["format"], max_abs_diff=float(payload["max_abs_diff"]),
        tolerance=float(payload["tolerance"]), inputs=tuple(payload["inputs"]),
        sequence_length=payload["sequence_length"], lowercase=payload["lowercase"], note=payload["note"],
    )


def export_text_in_child(args):
    """The `--vocabulary` branch of `python -m keras_paperzoo.export` (TensorFlow backend)."""
    tokenizer = read_tokenizer(args.vocabulary, args.tokenizer_config, args.lowercase)
    classifier = exporters.load_model_file(args.model_path)
    texts = None
    if args.sample_texts:
        with open(args.sample_texts, encoding="utf-8") as f:
            texts = json.load(f)
    if args.save_outputs is None:
        return export_text_classifier(classifier, tokenizer, args.out_path, sequence_length=args.sequence_length,
                                      pairs=args.pairs, sample_texts=texts, tolerance=args.tolerance,
                                      overwrite=args.overwrite, allow_token_ids=not args.strings_only)
    # For a parent on JAX / PyTorch: also hand back the artifact's raw outputs.
    tolerance = child.check_tolerance(args.tolerance)
    vocabulary_size, max_sequence_length = _check_classifier(classifier)
    sequence_length = _check_sequence_length(args.sequence_length, max_sequence_length, args.pairs)
    _check_tokenizer(tokenizer)
    _check_vocabulary_size(tokenizer, vocabulary_size)
    texts = normalize_sample_texts(texts, args.pairs)
    path, diff, artifact = _export_here(classifier, tokenizer, args.out_path, sequence_length, args.pairs, texts,
                                        tolerance, args.overwrite)
    np.savez(args.save_outputs, **artifact)
    return TextExportResult(path=path, format="saved_model", max_abs_diff=diff, tolerance=tolerance,
                            inputs=_input_names(args.pairs), sequence_length=sequence_length,
                            lowercase=bool(tokenizer.lowercase), note="")


# ---------------------------------------------------------------------------
# A causal language model (GPTCausalLM) for a context length the user picks
# ---------------------------------------------------------------------------


def check_context_length(sequence_length, max_sequence_length):
    """`sequence_length` as an int in [1, max_sequence_length] (the rows of the position table), or ValueError."""
    if isinstance(sequence_length, bool) or not isinstance(sequence_length, (int, np.integer)) \
            or not 1 <= sequence_length <= max_sequence_length:
        raise ValueError(f"sequence_length must be an int from 1 to the model's max_sequence_length "
                         f"{max_sequence_length} (its position embeddings); got {sequence_length!r}")
    return int(sequence_length)


def export_causal_lm(model, path, sequence_length=None, format="litert", tolerance=DEFAULT_TOLERANCE,
                     overwrite=False):
    """Export a `GPTCausalLM` whose input is `sequence_length` token ids: token_ids (B, N) -> logits (B, N, V).

    GPT-1 eq. (2)'s P(u) = softmax(h_n W_e^T) at every position, as the Keras model computes it,
    for a fixed context of N tokens (LiteRT interpreters want static shapes; an on-device
    loop feeds the last N tokens). Checked against Keras on seeded ids of that length.

    Args:
        model: a built `GPTCausalLM`.
        path: a `.tflite` file (format "litert") or a SavedModel directory.
        sequence_length: N, from 1 to the backbone's `max_sequence_length`; None: a
            dynamic length, as `export_model` exports the model itself.
        format, tolerance, overwrite: as for `export_model`.

    Returns:
        `ExportResult`.

    Example:

    ```python
    result = export_causal_lm(keras.saving.load_model("runs/gpt/model.keras"), "/tmp/gpt.tflite", 64)
    ```
    """
    import keras

    if sequence_length is None:
        return exporters.export_model(model, path, format=format, tolerance=tolerance, overwrite=overwrite)
    backbone = model.backbone
    sequence_length = check_context_length(sequence_length, backbone.max_sequence_length)
    token_ids = keras.Input((sequence_length,), dtype="int32", name="token_ids")
    fixed = keras.Model(token_ids, model(token_ids), name=f"{model.name}_context_{sequence_length}")
    ids = np.random.default_rng(0).integers(0, backbone.vocabulary_size, (4, sequence_length)).astype("int32")
    return exporters.export_model(fixed, path, format=format, sample_inputs=ids, tolerance=tolerance,
                                  overwrite=overwrite)


def export_causal_lm_file(model_path, path, sequence_length=None, format="litert", tolerance=DEFAULT_TOLERANCE,
                          overwrite=False):
    """`export_causal_lm` of the `GPTCausalLM` saved in `model_path` (what `paperzoo train gpt` writes)."""
    model = exporters.load_model_file(model_path)
    if not hasattr(model, "backbone") or not hasattr(model.backbone, "max_sequence_length"):
        raise ValueError(f"{os.fspath(model_path)!r} holds a {type(model).__name__}, not a GPTCausalLM: "
                         "sequence_length applies to a causal language model")
    return export_causal_lm(model, path, sequence_length, format=format, tolerance=tolerance, overwrite=overwrite)
