"""BERT's data side: sentence pairs for NSP, packing, the 15 % / 80-10-10 masking, fine-tuning inputs, corpora."""

import numpy as np
import pytest

from keras_paperzoo.data.bert_inputs import BertPacker, classification_dataset, read_sst2
from keras_paperzoo.data.bert_pretraining import (
    bert_pretraining_dataset,
    create_sentence_pairs,
    masked_lm_generator,
    pack_pairs,
    train_wordpiece,
)
from keras_paperzoo.data.text_corpus import load_documents, read_documents, sample_documents, sample_sentiment

tf = pytest.importorskip("tensorflow")


@pytest.fixture(scope="module")
def tokenizer():
    return train_wordpiece(sample_documents(), vocabulary_size=300)


def test_sentence_pairs_follow_the_reference_rules():
    # Documents of distinct "sentences" (lists of ids): document d, sentence s -> ids 1000 d + 10 s + k.
    documents = [[[1000 * d + 10 * s + k for k in range(3)] for s in range(6)] for d in range(30)]
    pairs = create_sentence_pairs(documents, sequence_length=16, short_seq_prob=0.0, dupe_factor=3, seed=0)
    random_next = np.array([r for _, _, r in pairs])
    assert 0.4 < random_next.mean() < 0.65  # 50 % NotNext (more when a chunk has one sentence)
    for a, b, is_random in pairs:
        assert len(a) + len(b) <= 16 - 3 and a and b
        same_document = a[0] // 1000 == b[0] // 1000
        assert same_document != is_random  # NotNext comes from another document
        if not is_random:
            assert b[0] > a[-1]  # IsNext: B continues A in order
    with pytest.raises(ValueError, match="at least 2 documents"):
        create_sentence_pairs(documents[:1], 16)


def test_packing():
    inputs, labels = pack_pairs([([7, 8], [9], False), ([7], [8, 9, 10], True)], 9, cls_id=2, sep_id=3, pad_id=0)
    np.testing.assert_array_equal(inputs["token_ids"], [[2, 7, 8, 3, 9, 3, 0, 0, 0], [2, 7, 3, 8, 9, 10, 3, 0, 0]])
    np.testing.assert_array_equal(inputs["segment_ids"], [[0, 0, 0, 0, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1, 1, 0, 0]])
    np.testing.assert_array_equal(inputs["padding_mask"].sum(1), [6, 7])
    np.testing.assert_array_equal(labels, [0, 1])


def test_masking_rates(tokenizer):
    # 15 % of the non-special tokens chosen; of those 80 % [MASK], 10 % random, 10 % unchanged.
    tf.random.set_seed(0)
    rng = np.random.default_rng(0)
    n, length = 400, 100
    ids = rng.integers(5, tokenizer.vocabulary_size(), size=(n, length)).astype("int32")
    ids[:, 0], ids[:, -1] = tokenizer.cls_token_id, tokenizer.sep_token_id
    masked = masked_lm_generator(tokenizer, max_predictions=30)(tf.constant(ids))
    weights = np.asarray(masked["mask_weights"]).astype(bool)
    positions = np.asarray(masked["mask_positions"])
    chosen = weights.sum() / (n * (length - 2))
    assert 0.13 < chosen < 0.17
    assert not np.isin(positions[weights], [0, length - 1]).any()  # [CLS] and [SEP] are never chosen
    new = np.take_along_axis(np.asarray(masked["token_ids"]), positions, 1)[weights]
    old = np.asarray(masked["mask_ids"])[weights]
    np.testing.assert_array_equal(old, np.take_along_axis(ids, positions, 1)[weights])
    to_mask = np.mean(new == tokenizer.mask_token_id)
    unchanged = np.mean(new == old)
    assert 0.77 < to_mask < 0.83 and 0.07 < unchanged < 0.13 and 0.07 < 1 - to_mask - unchanged < 0.13


def test_pretraining_dataset(tokenizer):
    ds = bert_pretraining_dataset(sample_documents(40), tokenizer, sequence_length=32, batch_size=8, seed=0)
    x, y = next(iter(ds))
    assert {k: tuple(v.shape) for k, v in x.items()} == {
        "token_ids": (8, 32), "segment_ids": (8, 32), "padding_mask": (8, 32), "mask_positions": (8, 5)
    }
    assert tuple(y["mask_ids"].shape) == (8, 5) and tuple(y["next_sentence_labels"].shape) == (8,)
    token_ids = np.asarray(x["token_ids"])
    assert np.all(token_ids[:, 0] == tokenizer.cls_token_id)
    assert np.all((token_ids == tokenizer.sep_token_id).sum(1) >= 1)
    assert ds.num_pairs > 40


def test_fine_tuning_inputs(tokenizer, tmp_path):
    packer = BertPacker(tokenizer, 12)
    single = packer(tf.constant(["tom is a farmer ."]))
    pair = packer((tf.constant(["tom is a farmer ."]), tf.constant(["anna feels calm ."])))
    ids = np.asarray(single["token_ids"])[0]
    assert ids[0] == tokenizer.cls_token_id and ids[6] == tokenizer.sep_token_id and ids[7] == tokenizer.pad_token_id
    np.testing.assert_array_equal(np.asarray(single["padding_mask"])[0], [1] * 7 + [0] * 5)
    np.testing.assert_array_equal(np.asarray(pair["segment_ids"])[0], [0] * 7 + [1] * 5)
    sentences, labels = sample_sentiment(50)
    ds = classification_dataset(sentences, labels, tokenizer, sequence_length=16, batch_size=16)
    x, y = next(iter(ds))
    assert tuple(x["token_ids"].shape) == (16, 16) and np.asarray(y).tolist() == labels[:16].tolist()
    assert set(labels.tolist()) == {0, 1}
    with pytest.raises(ValueError, match="sequence_length must be an int >= 3"):
        BertPacker(tokenizer, 2)

    tsv = tmp_path / "dev.tsv"
    tsv.write_text("sentence\tlabel\na fine film . \t1\ndull \t0\n")
    sentences, labels = read_sst2(tsv)
    assert sentences == ["a fine film .", "dull"] and labels.tolist() == [1, 0]
    tsv.write_text("text\tlabel\nx\t1\n")
    with pytest.raises(ValueError, match="not an SST-2 file"):
        read_sst2(tsv)


def test_corpora(tmp_path):
    documents = sample_documents(10)
    assert len(documents) == 10 and all(5 <= len(d) <= 8 for d in documents)
    assert documents == sample_documents(10)  # deterministic
    text = tmp_path / "corpus.txt"
    text.write_text("one .\ntwo .\n\nthree .\nfour .\nfive .\n")
    assert read_documents(text) == [["one .", "two ."], ["three .", "four .", "five ."]]
    assert load_documents(str(text)) == read_documents(text)
    with pytest.raises(ValueError, match="Unknown text corpus"):
        load_documents("missing.txt")


def test_english_corpus(shared_data):
    documents = load_documents(str(shared_data))
    assert len(documents) > 5000 and all(len(d) >= 2 for d in documents)
    assert "Before we proceed any further, hear me speak." in documents[0]
    sentences, labels = read_sst2(shared_data / "sst2" / "dev.tsv")
    assert len(sentences) == 872 and set(labels.tolist()) == {0, 1}
