"""SQuAD files -> windows of WordPiece inputs with span targets, and n-best decoding back to context text."""

import json

import numpy as np
import pytest

from keras_paperzoo.data.squad import read_squad, squad_features
from keras_paperzoo.evaluation.squad import decode_spans, squad_scores

CONTEXT = "The Normans lived in Normandy in the 10th and 11th centuries."
VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "norman", "##s", "lived", "in", "##dy", "10",
              "##th", "and", "11", "centuries", ".", "where", "did", "live", "?", "when", "what", "is", "a", "cat"]


def _write(path, answer_start=21):
    qas = [
        {"id": "q1", "question": "Where did the Normans live?",
         "answers": [{"text": "Normandy", "answer_start": answer_start}]},
        {"id": "q2", "question": "When did the Normans live?",
         "answers": [{"text": "10th and 11th centuries", "answer_start": 37}]},
        {"id": "q3", "question": "What is a cat?", "answers": [], "is_impossible": True},
    ]
    path.write_text(json.dumps({"version": "v2.0", "data": [
        {"title": "Normans", "paragraphs": [{"context": CONTEXT, "qas": qas}]}]}), encoding="utf-8")
    return path


@pytest.mark.needs_tensorflow
@pytest.mark.backend_free("jax")
def test_read_squad(tmp_path):
    examples = read_squad(_write(tmp_path / "dev.json"))
    assert [e["id"] for e in examples] == ["q1", "q2", "q3"]
    assert [e["is_impossible"] for e in examples] == [False, False, True]
    assert examples[0]["answers"] == [{"text": "Normandy", "answer_start": 21}]
    with pytest.raises(ValueError, match=r"question q1: answer 'Normandy' is not at its answer_start 20 in the "
                                         r"context, which holds ' Normand' there"):
        read_squad(_write(tmp_path / "bad.json", answer_start=20))


@pytest.fixture(scope="module")
def tokenizer():
    keras_hub = pytest.importorskip("keras_hub")
    pytest.importorskip("tensorflow")
    return keras_hub.models.BertTokenizer(vocabulary=VOCABULARY, lowercase=True)


def test_windows_targets_and_decoding(tmp_path, tokenizer):
    examples = read_squad(_write(tmp_path / "dev.json"))
    x, y, info = squad_features(examples, tokenizer, max_seq_length=16, doc_stride=3, max_query_length=8)
    # 16 passage pieces; q1's [CLS] + 7 pieces + [SEP] leave 16 - 9 - 1 = 6 per window, 3 apart:
    # windows start at 0, 3, 6, 9, 12. q3's [CLS] what is a cat ? [SEP] leaves 8: starts 0, 3, 6, 9.
    np.testing.assert_array_equal(info["example_index"], [0] * 5 + [1] * 5 + [2] * 4)
    assert x["token_ids"].shape == (14, 16) and np.all(x["token_ids"][:, 0] == tokenizer.cls_token_id)
    # q1: "Normandy" = norman ##dy, passage pieces 5-6, only whole in the window starting at 3.
    np.testing.assert_array_equal(y["start_positions"][:5], [0, 9 + 5 - 3, 0, 0, 0])
    np.testing.assert_array_equal(y["end_positions"][:5], [0, 9 + 6 - 3, 0, 0, 0])
    assert not y["start_positions"][10:].any() and not y["end_positions"][10:].any()  # q3: no answer, [CLS]
    for row in np.flatnonzero(y["start_positions"]):  # every target maps back to its answer's text
        a = info["token_spans"][row, y["start_positions"][row], 0]
        b = info["token_spans"][row, y["end_positions"][row], 1]
        assert CONTEXT[a:b] == examples[info["example_index"][row]]["answers"][0]["text"]
    assert info["max_context"][:5].sum() == 16  # each passage piece has one best window
    np.testing.assert_array_equal(x["segment_ids"][1], [0] * 9 + [1] * 7)
    np.testing.assert_array_equal(x["padding_mask"][4], [1] * 14 + [0] * 2)  # the last window: 4 pieces

    # Logits that point at each target give the gold answers; [CLS] for q3.
    start, end = np.zeros((14, 16)), np.zeros((14, 16))
    start[np.arange(14), y["start_positions"]] = 5.0
    end[np.arange(14), y["end_positions"]] = 4.0
    predictions = decode_spans(examples, info, start, end, version_2=True)
    # q2's answer (pieces 9-14) is whole only in the window at 9, but its first piece has more
    # context in the window at 6 (min(3, 2) against min(0, 5)): as run_squad.py, a start is only
    # read where it has the most context, so the best start left is piece 11, "and".
    assert predictions == {"q1": "Normandy", "q2": "and 11th centuries", "q3": ""}
    scores = squad_scores(examples, predictions)
    assert scores["exact_match"] == pytest.approx(200 / 3)
    assert scores["f1"] == pytest.approx(100 * (2 + 6 / 7) / 3)  # q2: precision 3/3, recall 3/4
    wide, wide_y, wide_info = squad_features(examples, tokenizer, max_seq_length=32, max_query_length=8)  # one window
    start, end = np.zeros((3, 32)), np.zeros((3, 32))
    start[np.arange(3), wide_y["start_positions"]] = 5.0
    end[np.arange(3), wide_y["end_positions"]] = 4.0
    predictions = decode_spans(examples, wide_info, start, end, version_2=True)
    assert predictions == {"q1": "Normandy", "q2": "10th and 11th centuries", "q3": ""}
    start, end = np.zeros((14, 16)), np.zeros((14, 16))
    start[np.arange(14), y["start_positions"]] = 5.0
    end[np.arange(14), y["end_positions"]] = 4.0
    # At most one piece: "norman" (5 + 0) beats "##dy" (0 + 4); the text is the piece's own characters.
    assert decode_spans(examples, info, start, end, max_answer_length=1)["q1"] == "Norman"
    # v2.0: q3's s_null = 5 + 4 against its best span's 0 + 0; "" unless tau >= 9.
    predictions, n_best, differences = decode_spans(examples, info, start, end, version_2=True, return_n_best=True)
    assert differences["q3"] == pytest.approx(9.0) and n_best["q3"][0] == ("", 9.0)
    assert decode_spans(examples, info, start, end, version_2=True, null_score_diff_threshold=9.5)["q3"] != ""
    assert len(n_best["q1"]) <= 20
    with pytest.raises(ValueError, match="max_seq_length 16 should exceed max_query_length 64"):
        squad_features(examples, tokenizer, max_seq_length=16)
