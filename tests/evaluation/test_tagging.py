"""Span precision / recall / F1 of BIO, IOB1 and IOBES tags (conlleval's counting), on hand-counted cases."""

import pytest

from keras_paperzoo.evaluation.tagging import span_f1, spans

pytestmark = pytest.mark.backend_free("jax")


def test_spans_follow_conlleval():
    assert spans(["B-PER", "I-PER", "O", "B-LOC"]) == {("PER", 0, 1), ("LOC", 3, 3)}
    # IOB1: I-X opens a chunk; B-X separates two adjacent chunks of one type.
    assert spans(["I-PER", "I-PER", "B-PER", "O", "I-LOC"]) == {("PER", 0, 1), ("PER", 2, 2), ("LOC", 4, 4)}
    # Ill-formed BIO, repaired as conlleval does: I after O opens, a type change closes and opens.
    assert spans(["O", "I-LOC", "I-LOC", "I-ORG"]) == {("LOC", 1, 2), ("ORG", 3, 3)}
    assert spans(["B-PER", "I-LOC"]) == {("PER", 0, 0), ("LOC", 1, 1)}
    # IOBES.
    assert spans(["S-PER", "B-LOC", "E-LOC", "S-LOC"]) == {("PER", 0, 0), ("LOC", 1, 2), ("LOC", 3, 3)}
    assert spans(["O", "O"]) == set() and spans([]) == set()


def test_span_f1_hand_counted():
    gold = [["B-PER", "I-PER", "O", "B-LOC", "O"], ["B-ORG", "I-ORG", "O", "B-MISC"]]
    pred = [["B-PER", "I-PER", "O", "B-LOC", "B-LOC"], ["B-ORG", "O", "O", "B-MISC"]]
    # Gold spans: PER(0-1), LOC(3), ORG(0-1), MISC(3) = 4. Predicted: PER(0-1), LOC(3), LOC(4),
    # ORG(0) (a boundary error: wrong), MISC(3) = 5. Correct: PER, LOC(3), MISC = 3.
    result = span_f1(gold, pred)
    assert (result["correct"], result["predicted"], result["gold"]) == (3, 5, 4)
    assert result["precision"] == pytest.approx(3 / 5) and result["recall"] == pytest.approx(3 / 4)
    assert result["f1"] == pytest.approx(2 * 0.6 * 0.75 / 1.35)
    assert result["per_type"]["LOC"]["precision"] == 0.5 and result["per_type"]["LOC"]["recall"] == 1.0
    assert result["per_type"]["ORG"]["f1"] == 0.0 and result["per_type"]["PER"]["f1"] == 1.0
    # A wrong type is a wrong span; a span never crosses sentences.
    assert span_f1([["B-PER", "O"]], [["B-ORG", "O"]])["f1"] == 0.0
    assert span_f1([["B-PER"], ["I-PER"]], [["B-PER"], ["I-PER"]])["gold"] == 2
    nothing = span_f1([["O"]], [["O"]])
    assert (nothing["precision"], nothing["recall"], nothing["f1"]) == (0.0, 0.0, 0.0)


def test_bad_tags_and_lengths():
    with pytest.raises(ValueError, match="Tag 'X-PER' is not a BIO"):
        spans(["X-PER"])
    with pytest.raises(ValueError, match="sentence 0 has 2 gold tags but 1 predicted"):
        span_f1([["O", "O"]], [["O"]])
    with pytest.raises(ValueError, match="one predicted sentence per gold sentence"):
        span_f1([["O"]], [])
