"""CoNLL reading, and words + tags -> WordPiece inputs with first-subword labels (BERT Sec. 5.3)."""

import numpy as np
import pytest

from keras_paperzoo.data.conll import IGNORE, align_words, read_conll, tag_names, word_tags

CONLL = """-DOCSTART- -X- -X- O

John NNP B-NP B-PER
lives VBZ B-VP O
in IN B-PP O
Johnville NNP B-NP B-LOC

-DOCSTART- -X- -X- O

New NNP B-NP B-LOC
York NNP I-NP I-LOC
"""

VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "john", "lives", "in", "new", "york", "##ville"]


@pytest.mark.backend_free("jax")
def test_read_conll(tmp_path):
    path = tmp_path / "eng.train"
    path.write_text(CONLL, encoding="utf-8")
    sentences = read_conll(path)
    assert sentences == [(["John", "lives", "in", "Johnville"], ["B-PER", "O", "O", "B-LOC"]),
                         (["New", "York"], ["B-LOC", "I-LOC"])]
    assert read_conll(path, tag_column=1)[1][1] == ["NNP", "NNP"]  # POS tags
    assert tag_names(sentences) == ["O", "B-LOC", "B-PER", "I-LOC"]
    path.write_text(CONLL.replace("in IN B-PP O", "in IN O"), encoding="utf-8")
    with pytest.raises(ValueError, match=r"eng.train line 5: 3 columns, but the file's lines have 4"):
        read_conll(path)
    with pytest.raises(ValueError, match="tag_column 0 is not a tag column"):
        read_conll(path, tag_column=0)


@pytest.mark.needs_tensorflow
def test_align_words_labels_first_subwords_only():
    keras_hub = pytest.importorskip("keras_hub")
    pytest.importorskip("tensorflow")
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=VOCABULARY, lowercase=True)
    sentences = [(["John", "lives", "in", "Johnville"], ["B-PER", "O", "O", "B-LOC"]), (["Paris"], ["B-LOC"])]
    tags = ["O", "B-LOC", "B-PER"]
    x, labels, word_index = align_words(sentences, tokenizer, tags, sequence_length=8)
    # [CLS] john lives in john ##ville [SEP] [PAD]; "Paris" is out of the vocabulary: [UNK].
    np.testing.assert_array_equal(x["token_ids"], [[2, 5, 6, 7, 5, 10, 3, 0], [2, 1, 3, 0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(labels[0], [IGNORE, 2, 0, 0, 1, IGNORE, IGNORE, IGNORE])  # ##ville: no label
    np.testing.assert_array_equal(labels[1], [IGNORE, 1] + [IGNORE] * 6)
    np.testing.assert_array_equal(word_index[0], [IGNORE, 0, 1, 2, 3, IGNORE, IGNORE, IGNORE])
    np.testing.assert_array_equal(x["padding_mask"].sum(1), [7, 3])
    assert not x["segment_ids"].any()
    # Words cut by the sequence length lose their labels; their predicted tag is "O".
    short, short_labels, short_index = align_words(sentences[:1], tokenizer, tags, sequence_length=5)
    np.testing.assert_array_equal(short["token_ids"], [[2, 5, 6, 7, 3]])
    np.testing.assert_array_equal(short_labels, [[IGNORE, 2, 0, 0, IGNORE]])
    one_hot = np.eye(3)[np.maximum(short_labels, 0)]  # (1, 5, 3) logits that predict the gold labels
    assert word_tags(one_hot, short_index, sentences[:1], tags) == [["B-PER", "O", "O", "O"]]
    logits = np.eye(3)[np.maximum(labels, 0)]
    assert word_tags(logits, word_index, sentences, tags) == [tags_ for _, tags_ in sentences]
    with pytest.raises(ValueError, match="tag 'B-PER' is not one of the tags"):
        align_words(sentences, tokenizer, ["O", "B-LOC"], sequence_length=8)
