"""Raw-string BERT export: WordPiece tokenizer, packing and classifier in one SavedModel.

One export per backend goes through the real path (`test_raw_strings_match_keras_on_every_backend`;
on JAX and PyTorch it runs in a TensorFlow child process, ~10-20 s); the other exports
run on TensorFlow only, in-process. Argument checks run on every backend without
exporting anything.
"""

import importlib
import json
import warnings

import keras
import numpy as np
import pytest

from keras_paperzoo.export import text
from keras_paperzoo.export.text import PACKED_INPUTS
from keras_paperzoo.export.text import ExportMismatchError
from keras_paperzoo.export.text import export_text_classifier
from keras_paperzoo.export.text import export_text_classifier_file
from keras_paperzoo.export.text import load_tokenizer
from keras_paperzoo.models.bert import BertBackbone
from keras_paperzoo.models.bert import BertClassifier

BACKEND = keras.backend.backend()
tf_only = pytest.mark.skipif(BACKEND != "tensorflow", reason="in-process TensorFlow export; "
                             "the child-process route is covered by the every-backend test")

VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "the", "film", "plot", "is", "not",
              "very", "good", "funny", "grip", "##ping", "fox", ".", ",", "!", "?", "un", "##believ",
              "##able", "cafe", "quick", "brown", "dog", "lazy", "over", "jumps"]
ID = {token: i for i, token in enumerate(VOCABULARY)}
MAX_LENGTH = 16


def tiny_classifier(num_classes=3):
    keras.utils.set_random_seed(0)
    backbone = BertBackbone(vocabulary_size=len(VOCABULARY), num_layers=1, num_heads=2, hidden_dim=16,
                            intermediate_dim=32, max_sequence_length=MAX_LENGTH)
    return BertClassifier(backbone, num_classes=num_classes)


def tokenizer():
    import keras_hub

    return keras_hub.models.BertTokenizer(vocabulary=VOCABULARY, lowercase=True)


def write_vocabulary(folder):
    path = folder / "vocabulary.txt"
    path.write_text("\n".join(VOCABULARY) + "\n")
    return path


def fine_tuning_ids(sentences, sequence_length, pairs=False):
    """Ids the way fine-tuning saw them: `classification_dataset`'s tf.data pipeline."""
    from keras_paperzoo.data.bert_inputs import classification_dataset

    n = len(sentences[0]) if pairs else len(sentences)
    data = classification_dataset(tuple(sentences) if pairs else sentences, np.zeros(n), tokenizer(),
                                  sequence_length=sequence_length, batch_size=n)
    x, _ = next(iter(data))
    return {k: v.numpy() for k, v in x.items()}


def keras_logits(classifier, ids):
    return keras.ops.convert_to_numpy(classifier(ids, training=False))


def load_signatures(path):
    import tensorflow as tf

    importlib.import_module("tensorflow_text")  # the tokenizer's ops
    loaded = tf.saved_model.load(str(path))
    return loaded.signatures["serving_default"], loaded.signatures["tokenize"]


@pytest.mark.needs_tensorflow
def test_raw_strings_match_keras_on_every_backend(tmp_path):
    import tensorflow as tf

    classifier = tiny_classifier()
    result = export_text_classifier(classifier, tokenizer(), tmp_path / "sm", sequence_length=10)
    assert result.raw_strings and result.inputs == ("sentence",) and result.note == ""
    assert result.sequence_length == 10 and result.lowercase is True
    assert 0.0 <= result.max_abs_diff <= 1e-5 and result.ok

    # Served through TF on texts the export check did not see, batch 1 and 3.
    serve, tokenize = load_signatures(result.path)
    (spec,) = serve.structured_input_signature[1].values()
    assert list(serve.structured_input_signature[1]) == ["sentence"]
    assert spec.dtype == tf.string and spec.shape.as_list() == [None]
    for sentences in (["A GRIPPING film."], ["the fox is not funny !", "", "unbelievable " * 20]):
        logits = serve(sentence=tf.constant(sentences))["logits"].numpy()
        ids = fine_tuning_ids(sentences, 10)
        assert logits.shape == (len(sentences), 3)
        np.testing.assert_allclose(logits, keras_logits(classifier, ids), atol=1e-5)
    packed = tokenize(sentence=tf.constant(["A GRIPPING film."]))
    expected = [ID["[CLS]"], ID["a"], ID["grip"], ID["##ping"], ID["film"], ID["."], ID["[SEP]"], 0, 0, 0]
    assert packed["token_ids"].numpy().tolist() == [expected]
    assert packed["padding_mask"].numpy().tolist() == [[1] * 7 + [0] * 3]
    assert packed["segment_ids"].numpy().sum() == 0
    # A long text is truncated to the sequence length and still ends with [SEP].
    long_ids = tokenize(sentence=tf.constant(["unbelievable " * 20]))["token_ids"].numpy()[0]
    assert long_ids.shape == (10,) and long_ids[-1] == ID["[SEP]"] and long_ids[1:4].tolist() == [
        ID["un"], ID["##believ"], ID["##able"]]


@tf_only
def test_cli_module_exports_sentence_pairs_from_files(tmp_path, capsys):
    import tensorflow as tf

    from keras_paperzoo.export.__main__ import main

    classifier = tiny_classifier(num_classes=2)
    classifier.save(tmp_path / "model.keras")
    vocabulary = write_vocabulary(tmp_path)
    out = str(tmp_path / "pairs_sm")
    assert main([str(tmp_path / "model.keras"), out, "--format", "saved_model", "--vocabulary", str(vocabulary),
                 "--sequence-length", "12", "--pairs"]) == 0
    payload = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert payload["inputs"] == ["sentence_a", "sentence_b"] and payload["sequence_length"] == 12
    assert payload["lowercase"] is True  # inferred: the vocabulary has no upper-case token
    assert payload["ok"] is True and payload["max_abs_diff"] <= 1e-5

    serve, tokenize = load_signatures(out)
    assert sorted(serve.structured_input_signature[1]) == ["sentence_a", "sentence_b"]
    a, b = ["How funny is the film ?", "a lazy dog"], ["Not very.", "the quick brown fox jumps over the dog"]
    logits = serve(sentence_a=tf.constant(a), sentence_b=tf.constant(b))["logits"].numpy()
    ids = fine_tuning_ids((a, b), 12, pairs=True)
    np.testing.assert_allclose(logits, keras_logits(classifier, ids), atol=1e-5)
    packed = tokenize(sentence_a=tf.constant(a), sentence_b=tf.constant(b))
    assert packed["segment_ids"].numpy()[0].tolist() == [0] * 8 + [1] * 4  # [CLS] how funny is the film ? [SEP] | not very . [SEP]
    np.testing.assert_array_equal(packed["token_ids"].numpy(), ids["token_ids"])


@tf_only
def test_export_fails_loudly_when_the_graph_disagrees(tmp_path, monkeypatch):
    # The SavedModel is stood in for (writing one is tested above): its ids are the
    # tokenizer's, its logits 0.01 off Keras's, then one token id off.
    classifier, tok = tiny_classifier(), tokenizer()
    monkeypatch.setattr(text, "_write_archive", lambda *args: None)

    ids = text.pack_texts(tok, 8, list(text.SAMPLE_SENTENCES), False)
    logits = text._keras_logits(classifier, ids)

    def artifact(logit_shift, id_shift):
        def run(path, texts, pairs):
            assert texts == list(text.SAMPLE_SENTENCES) and not pairs
            token_ids = ids["token_ids"].copy()
            token_ids[0, 1] += id_shift
            return {**ids, "token_ids": token_ids, "logits": logits + logit_shift}
        return run

    monkeypatch.setattr(text, "run_text_saved_model", artifact(0.01, 0))
    with pytest.raises(ExportMismatchError, match=r"logit difference 0\.01 > tolerance 0\.0001"):
        export_text_classifier(classifier, tok, tmp_path / "sm", sequence_length=8)
    monkeypatch.setattr(text, "run_text_saved_model", artifact(0.0, 1))
    with pytest.raises(ExportMismatchError, match="packs the sample texts differently.*token_ids 1 of 48"):
        export_text_classifier(classifier, tok, tmp_path / "sm", sequence_length=8, overwrite=True)
    monkeypatch.setattr(text, "run_text_saved_model", artifact(0.0, 0))
    result = export_text_classifier(classifier, tok, tmp_path / "sm", sequence_length=8, overwrite=True)
    assert result.max_abs_diff == 0.0 and result.ok


@tf_only
def test_falls_back_to_token_ids_without_tensorflow_text(tmp_path, monkeypatch):
    import tensorflow as tf

    monkeypatch.setattr(text, "tf_text_available", lambda: False)
    classifier = tiny_classifier()
    with pytest.raises(ValueError, match="pip install tensorflow-text"):
        export_text_classifier(classifier, tokenizer(), tmp_path / "strict", allow_token_ids=False)
    with pytest.warns(UserWarning, match="takes token ids, not raw strings: tensorflow-text is not installed"):
        result = export_text_classifier(classifier, tokenizer(), tmp_path / "ids")
    assert not result.raw_strings and result.inputs == PACKED_INPUTS and result.ok
    assert "BertPacker" in result.note and result.sequence_length == MAX_LENGTH
    serve = tf.saved_model.load(result.path).signatures["serving_default"]
    assert sorted(serve.structured_input_signature[1]) == sorted(PACKED_INPUTS)


def test_check_raises_on_differing_ids_or_logits():
    ids = {name: np.zeros((2, 4), "int32") for name in PACKED_INPUTS}
    logits = np.array([[0.5, -0.5], [1.0, 2.0]], "float32")
    good = {**ids, "logits": logits + 1e-6}
    assert text.check_text_outputs(ids, logits, good, 1e-4, "p") == pytest.approx(1e-6, abs=1e-7)
    wrong_ids = np.zeros((2, 4), "int32")
    wrong_ids[0, 3] = 7
    with pytest.raises(ExportMismatchError, match="token_ids 1 of 8 positions differ"):
        text.check_text_outputs(ids, logits, {**good, "token_ids": wrong_ids}, 1e-4, "p")
    with pytest.raises(ExportMismatchError, match=r"padding_mask shape \(2, 3\) vs \(2, 4\)"):
        text.check_text_outputs(ids, logits, {**good, "padding_mask": np.zeros((2, 3), "int32")}, 1e-4, "p")
    with pytest.raises(ExportMismatchError, match=r"logit difference 0\.25 > tolerance"):
        text.check_text_outputs(ids, logits, {**ids, "logits": logits + 0.25}, 1e-4, "p")


def test_bad_arguments_give_one_clear_error(tmp_path):
    import keras_hub

    classifier = tiny_classifier()
    tok = tokenizer()
    out = tmp_path / "sm"
    cases = [
        (dict(tokenizer=str(tmp_path / "missing.txt")), "vocabulary file '.*missing.txt' does not exist"),
        (dict(tokenizer=None), "a vocabulary file is needed"),
        (dict(sequence_length=MAX_LENGTH + 1), "sequence_length 17 is longer than the backbone's "
                                               "max_sequence_length 16"),
        (dict(sequence_length=2), r"sequence_length must be an int >= 3 \(\[CLS\] A \[SEP\]"),
        (dict(sequence_length=3, pairs=True), "sequence_length must be an int >= 4"),
        (dict(sequence_length="64"), "sequence_length must be an int"),
        (dict(pairs="yes"), "pairs must be True or False"),
        (dict(lowercase=False), "lowercase= is only for a vocabulary path"),
        (dict(sample_texts="one string"), "sample_texts must be a non-empty list of strings"),
        (dict(sample_texts=["a", "b"], pairs=True), "two equal-length, non-empty lists"),
        (dict(tokenizer=keras_hub.tokenizers.WordPieceTokenizer(vocabulary=VOCABULARY)),
         "must be a keras_hub BertTokenizer .* without cls_token_id"),
        (dict(tokenizer=keras_hub.models.BertTokenizer(vocabulary=VOCABULARY, sequence_length=8)),
         "the tokenizer has sequence_length=8"),
        (dict(tokenizer=keras_hub.models.BertTokenizer(vocabulary=VOCABULARY + ["extra"])),
         "vocabulary has 32 tokens but the model's token embedding has 31 rows"),
    ]
    for kwargs, message in cases:
        kwargs = {"tokenizer": tok, **kwargs}
        with pytest.raises(ValueError, match=message):
            export_text_classifier(classifier, kwargs.pop("tokenizer"), out, **kwargs)
    assert not out.exists()  # nothing written, no child process started

    no_cls = tmp_path / "no_cls.txt"
    no_cls.write_text("[PAD]\n[UNK]\n[SEP]\n[MASK]\na\n")
    with pytest.raises(ValueError, match=r"has no \[CLS\]: a BERT vocabulary needs"):
        load_tokenizer(no_cls)
    x = keras.Input((4,), name="features")
    with pytest.raises(ValueError, match=r"must take a dict of token_ids.*takes \['features'\]"):
        export_text_classifier(keras.Model(x, keras.layers.Dense(2)(x)), tok, out)
    classifier.save(tmp_path / "model.keras")
    with pytest.raises(ValueError, match="does not exist"):
        export_text_classifier_file(tmp_path / "model.keras", tmp_path / "vocab.txt", out)
    with pytest.raises(ValueError, match="longer than the backbone's max_sequence_length 16"):
        export_text_classifier_file(tmp_path / "model.keras", write_vocabulary(tmp_path), out, sequence_length=64)


def test_module_cli_rejects_litert_with_a_vocabulary(tmp_path, capsys):
    from keras_paperzoo.export.__main__ import main

    assert main([str(tmp_path / "m.keras"), str(tmp_path / "m.tflite"), "--format", "litert",
                 "--vocabulary", "v.txt"]) == 2
    payload = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert payload["error_type"] == "ValueError" and "use --format saved_model" in payload["error"]
    assert main([str(tmp_path / "m.keras"), str(tmp_path / "sm"), "--format", "saved_model", "--pairs"]) == 2
    assert "need --vocabulary" in json.loads(capsys.readouterr().out.strip().splitlines()[-1])["error"]


def test_lowercase_is_inferred_from_the_vocabulary(tmp_path):
    assert text.infer_lowercase(VOCABULARY)
    assert not text.infer_lowercase(VOCABULARY + ["The", "New"])
    uncased = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(2000)] + ["\u2160"]
    assert text.infer_lowercase(uncased)  # one stray upper-case symbol in 2000 tokens
    cased = tmp_path / "cased.txt"
    cased.write_text("\n".join(VOCABULARY + ["Film"]) + "\n")
    assert load_tokenizer(cased).lowercase is False
    assert load_tokenizer(cased, lowercase=True).lowercase is True
    assert text._child_args("v.txt", None, False, 12, True, None) == [
        "--vocabulary", "v.txt", "--sequence-length", "12", "--no-lowercase", "--pairs"]


@tf_only
def test_backbone_to_litert_at_two_sequence_lengths(tmp_path):
    from keras_paperzoo.export import export_model
    from keras_paperzoo.export import verify_export

    backbone = tiny_classifier().backbone
    result = export_model(backbone, tmp_path / "backbone.tflite", format="litert")
    assert result.ok and result.max_abs_diff <= 1e-5
    rng = np.random.default_rng(0)
    for length in (5, MAX_LENGTH):
        mask = np.ones((3, length), "int32")
        mask[1, length // 2:] = 0
        sample = {"token_ids": rng.integers(0, len(VOCABULARY), (3, length)).astype("int32") * mask,
                  "segment_ids": (np.arange(length) >= length // 2).astype("int32")[None].repeat(3, 0) * mask,
                  "padding_mask": mask}
        assert verify_export(backbone, result.path, sample_inputs=sample) <= 1e-5
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from keras_paperzoo.export.verify import input_layout, normalize_sample_inputs, run_litert

            layout = input_layout(backbone)
            outputs = run_litert(result.path, layout, normalize_sample_inputs(layout, sample))
        assert sorted((o.shape for o in outputs.values()), key=len) == [(3, 16), (3, length, 16)]
