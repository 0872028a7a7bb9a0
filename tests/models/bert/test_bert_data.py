"""BERT's data side: sentence pairs for NSP, packing, the 15 % / 80-10-10 masking, fine-tuning inputs, corpora."""

import numpy as np
import pytest

from keras_paperzoo.data.bert_inputs import BertPacker, classification_dataset, read_sst2
from keras_paperzoo.data.bert_pretraining import (
    bert_pretraining_dataset,
    create_sentence_pairs,
    epoch_examples,
    mask_tokens,
    pack_pairs,
    train_wordpiece,
)
from keras_paperzoo.data.text_corpus import load_documents, read_documents, sample_documents, sample_sentiment

tf = pytest.importorskip("tensorflow")

pytestmark = pytest.mark.needs_tensorflow  # the BERT input pipelines are tf.data
# NumPy, tf.data and keras-hub's WordPiece whatever the backend: the TensorFlow leg runs these (every other leg would
# compute the same); test_masked_lm_loss_only_on_chosen_positions, a Keras op, runs on every leg.
ONLY_ON_TENSORFLOW = pytest.mark.backend_free("tensorflow")


@pytest.fixture(scope="module")
def tokenizer():
    return train_wordpiece(sample_documents(), vocabulary_size=300)


@ONLY_ON_TENSORFLOW
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


@ONLY_ON_TENSORFLOW
def test_packing():
    inputs, labels = pack_pairs([([7, 8], [9], False), ([7], [8, 9, 10], True)], 9, cls_id=2, sep_id=3, pad_id=0)
    np.testing.assert_array_equal(inputs["token_ids"], [[2, 7, 8, 3, 9, 3, 0, 0, 0], [2, 7, 3, 8, 9, 10, 3, 0, 0]])
    np.testing.assert_array_equal(inputs["segment_ids"], [[0, 0, 0, 0, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1, 1, 0, 0]])
    np.testing.assert_array_equal(inputs["padding_mask"].sum(1), [6, 7])
    np.testing.assert_array_equal(labels, [0, 1])


SPECIAL = dict(cls=2, sep=3, pad=0, mask=4)


def _packed(n=400, length=100, seed=0):
    # [CLS] tokens [SEP] tokens [SEP] + padding, row lengths varying
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, 300, size=(n, length)).astype("int32")
    ends = rng.integers(length // 2, length + 1, size=n)
    ids[np.arange(length)[None, :] >= ends[:, None]] = SPECIAL["pad"]
    ids[:, 0] = SPECIAL["cls"]
    ids[np.arange(n), ends - 1] = SPECIAL["sep"]
    ids[:, 20] = SPECIAL["sep"]
    return ids


def _mask(ids, seed, max_predictions=20):
    return mask_tokens(ids, np.random.default_rng(seed), vocabulary_size=300, mask_token_id=SPECIAL["mask"],
                       special_ids=[SPECIAL["cls"], SPECIAL["sep"], SPECIAL["pad"]], max_predictions=max_predictions)


@ONLY_ON_TENSORFLOW
def test_masking_rates_and_special_tokens():
    # round(15 %) of the non-special tokens chosen; of those 80 % [MASK], 10 % random, 10 % unchanged.
    ids = _packed()
    masked = _mask(ids, 0)
    weights = masked["mask_weights"].astype(bool)  # (N, M)
    positions = masked["mask_positions"]
    selectable = ~np.isin(ids, [0, 2, 3])
    np.testing.assert_array_equal(weights.sum(1), np.minimum(np.rint(0.15 * selectable.sum(1)), 20))
    assert 0.145 < weights.sum() / selectable.sum() < 0.155
    rows = np.nonzero(weights)[0]
    assert selectable[rows, positions[weights]].all()  # [CLS], [SEP] and padding are never chosen
    for row in range(len(ids)):  # distinct positions, ascending, padding slots (weight 0, position 0) at the end
        chosen = positions[row][weights[row]]
        assert np.all(np.diff(chosen) > 0) and not positions[row][~weights[row]].any()
    new = masked["token_ids"][rows, positions[weights]]
    old = masked["mask_ids"][weights]
    np.testing.assert_array_equal(old, ids[rows, positions[weights]])
    assert not masked["mask_ids"][~weights].any()
    to_mask, unchanged = np.mean(new == SPECIAL["mask"]), np.mean(new == old)
    assert 0.78 < to_mask < 0.82 and 0.08 < unchanged < 0.12 and 0.08 < 1 - to_mask - unchanged < 0.12
    untouched = np.ones_like(ids, bool)
    untouched[rows, positions[weights]] = False
    np.testing.assert_array_equal(masked["token_ids"][untouched], ids[untouched])  # only chosen tokens change


@ONLY_ON_TENSORFLOW
def test_masking_is_seeded():
    ids = _packed(50, 40)
    first, again, other = _mask(ids, 7), _mask(ids, 7), _mask(ids, 8)
    for name in first:
        np.testing.assert_array_equal(first[name], again[name])
    assert not np.array_equal(first["mask_positions"], other["mask_positions"])
    with pytest.raises(ValueError, match="max_predictions must be in"):
        _mask(ids, 0, max_predictions=0)


@ONLY_ON_TENSORFLOW
def test_epoch_masks_depend_on_seed_epoch_and_example_only():
    ids = _packed(64, 40)
    inputs = {"token_ids": ids, "segment_ids": np.zeros_like(ids), "padding_mask": (ids != 0).astype("int32")}
    labels = np.arange(64, dtype="int32")  # label = example index, to undo the shuffle
    kwargs = dict(vocabulary_size=300, mask_token_id=4, special_ids=[0, 2, 3], max_predictions=8)

    def by_example(epoch, seed):
        x, y = epoch_examples(inputs, labels, epoch, seed, kwargs)
        order = np.argsort(y["next_sentence_labels"])
        return x["mask_positions"][order], x["token_ids"][order], y["next_sentence_labels"]

    p0, t0, order0 = by_example(0, 0)
    p0_again, t0_again, order0_again = by_example(0, 0)
    np.testing.assert_array_equal(p0, p0_again)
    np.testing.assert_array_equal(t0, t0_again)
    np.testing.assert_array_equal(order0, order0_again)
    assert not np.array_equal(p0, by_example(1, 0)[0])  # dynamic masking: another epoch, other masks
    assert not np.array_equal(p0, by_example(0, 1)[0])  # another seed, other masks
    assert not np.array_equal(order0, np.arange(64))  # shuffled


def test_masked_lm_loss_only_on_chosen_positions():
    # The pre-training loss sees the chosen positions only: changing logits at padding slots changes nothing.
    from keras_paperzoo.models.bert.bert_pretrainer import masked_lm_loss

    rng = np.random.default_rng(0)
    logits = rng.normal(size=(2, 3, 7)).astype("float32")
    mask_ids = np.array([[1, 2, 0], [3, 0, 0]], "int32")
    weights = np.array([[1, 1, 0], [1, 0, 0]], "float32")
    other = logits.copy()
    other[0, 2], other[1, 1:] = 50.0, -50.0
    loss = float(np.asarray(masked_lm_loss(mask_ids, logits, weights)))
    assert abs(loss - float(np.asarray(masked_lm_loss(mask_ids, other, weights)))) < 1e-6
    log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected = -(log_p[0, 0, 1] + log_p[0, 1, 2] + log_p[1, 0, 3]) / 3
    assert abs(loss - expected) < 1e-5


@ONLY_ON_TENSORFLOW
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
    weights = np.asarray(y["mask_weights"]).astype(bool)
    specials = [tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id]
    assert not np.isin(np.asarray(y["mask_ids"])[weights], specials).any()  # [CLS], [SEP], padding never chosen
    # The same seed gives the same batches, masks included; another seed other masks.
    again = bert_pretraining_dataset(sample_documents(40), tokenizer, sequence_length=32, batch_size=8, seed=0,
                                     repeat=True)
    other = bert_pretraining_dataset(sample_documents(40), tokenizer, sequence_length=32, batch_size=8, seed=1,
                                     repeat=True)
    per_epoch = ds.num_pairs // 8
    batches = [b for b, _ in zip(again, range(2 * per_epoch + 1))]  # repeat=True runs past the first epoch
    for (first_x, first_y), (second_x, second_y) in zip(ds, batches):
        for name in first_x:
            np.testing.assert_array_equal(np.asarray(first_x[name]), np.asarray(second_x[name]))
        for name in first_y:
            np.testing.assert_array_equal(np.asarray(first_y[name]), np.asarray(second_y[name]))
    assert len(batches) == 2 * per_epoch + 1 and len(list(ds)) == per_epoch
    other_x = next(iter(other))[0]
    assert not np.array_equal(np.asarray(other_x["mask_positions"]), np.asarray(x["mask_positions"]))


@ONLY_ON_TENSORFLOW
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


@ONLY_ON_TENSORFLOW
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


@ONLY_ON_TENSORFLOW
def test_english_corpus(shared_data):
    documents = load_documents(str(shared_data))
    assert len(documents) > 5000 and all(len(d) >= 2 for d in documents)
    assert "Before we proceed any further, hear me speak." in documents[0]
    sentences, labels = read_sst2(shared_data / "sst2" / "dev.tsv")
    assert len(sentences) == 872 and set(labels.tolist()) == {0, 1}
