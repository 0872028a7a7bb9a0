"""sacreBLEU corpus BLEU wrapper."""

import pytest

from keras_paperzoo.evaluation.bleu import corpus_bleu

# backend_free (tests/conftest.py): BLEU is pure Python: every leg would run the same code.
pytestmark = pytest.mark.backend_free("tensorflow")

pytest.importorskip("sacrebleu")


def test_identical_text_scores_100_and_a_known_case_matches_hand_counts():
    refs = ["A dog runs in the park.", "Two children play on the beach."]
    assert corpus_bleu(refs, refs)["bleu"] == pytest.approx(100.0)
    # "the cat sat on the mat" vs "the cat is on the mat": 13a tokens, 6 vs 6 words.
    # precisions 5/6, 3/5, 1/4, 0/3 -> BLEU 0 without smoothing of the 4-gram... sacreBLEU's
    # default 'exp' smoothing gives 4-gram precision 1/(2*3) after the first zero count.
    out = corpus_bleu(["the cat sat on the mat"], ["the cat is on the mat"])
    assert out["precisions"][:3] == pytest.approx([500 / 6, 60.0, 25.0])
    expected = 100 * (5 / 6 * 3 / 5 * 1 / 4 * 1 / 6) ** 0.25
    assert out["bleu"] == pytest.approx(expected, rel=1e-6)
    assert out["brevity_penalty"] == 1.0 and "tok:13a" in out["signature"]


def test_mismatched_lengths_are_an_error():
    with pytest.raises(ValueError, match="one reference per hypothesis; got 1 hypotheses and 2"):
        corpus_bleu(["a"], ["a", "b"])
