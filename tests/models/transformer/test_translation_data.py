"""Parallel text: the toy corpus, Multi30k files, encoded pairs, bucketed batches."""

import gzip

import numpy as np
import pytest

from keras_paperzoo.data.translation import encode_pairs, load_multi30k, read_lines, translation_batches
from keras_paperzoo.data.translation_toy import toy_translation_corpus
from keras_paperzoo.models.transformer.transformer_tokenizer import END_ID, START_ID, learn_vocabulary, make_tokenizer


def test_toy_corpus_is_seeded_and_agrees_in_number():
    de, en = toy_translation_corpus(300, seed=3)
    assert (de, en) == toy_translation_corpus(300, seed=3) and de != toy_translation_corpus(300, seed=4)[0]
    for g, e in zip(de, en):
        assert g.endswith(".") and e.endswith(".")
        if e.startswith(("Two", "Three")):
            assert g.split()[0] in ("Zwei", "Drei")
    assert "A old" not in " ".join(en) and "An old" in " ".join(en)


@pytest.fixture(scope="module")
def tokenizer():
    de, en = toy_translation_corpus(200, seed=0)
    return make_tokenizer(learn_vocabulary(de + en, 300))


@pytest.mark.needs_tensorflow
@pytest.mark.backend_free("tensorflow")  # tf.data and NumPy whatever the backend
def test_pairs_are_teacher_forced_and_batches_bucketed(tokenizer):
    de, en = toy_translation_corpus(70, seed=1)
    encoder, decoder, labels = encode_pairs(tokenizer, de, en, max_length=12)
    assert all(e[-1] == END_ID and len(e) <= 12 for e in encoder)
    assert all(d[0] == START_ID and d[1:] == l[:-1] and l[-1] == END_ID for d, l in zip(decoder, labels))
    dataset = translation_batches((encoder, decoder, labels), batch_size=8, buckets=(8, 16), seed=0)
    seen = 0
    for x, y in dataset:
        src, dec, y = (np.asarray(t) for t in (x["encoder_token_ids"], x["decoder_token_ids"], y))
        assert src.shape[0] == 8 and src.shape[1] in (8, 16) and dec.shape == y.shape == (8, src.shape[1])
        assert ((dec != 0) == (y != 0)).all()  # same lengths: [start] + ids vs ids + [end]
        real = dec[:, 1:] != 0
        assert (dec[:, 1:][real] == y[:, :-1][real]).all()  # labels are the inputs shifted left
        seen += 8
    assert 70 - 2 * 8 < seen <= 70  # partial batches of each bucket dropped
    with pytest.raises(ValueError, match="more than the largest bucket 8"):
        translation_batches((encoder, decoder, labels), batch_size=8, buckets=(8,))


def test_multi30k_files_are_read_in_line_order(tmp_path, shared_data):
    for lang, lines in (("de", ["Ein Hund.", "Zwei Katzen."]), ("en", ["A dog.", "Two cats."])):
        with gzip.open(tmp_path / f"val.{lang}.gz", "wt", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    assert load_multi30k(tmp_path, "val") == (["Ein Hund.", "Zwei Katzen."], ["A dog.", "Two cats."])
    with pytest.raises(ValueError, match="Unknown Multi30k split 'dev'"):
        load_multi30k(tmp_path, "dev")
    sizes = {split: len(load_multi30k(shared_data / "multi30k", split)[0]) for split in ("train", "val", "test_2016_flickr")}
    assert sizes == {"train": 29000, "val": 1014, "test_2016_flickr": 1000}
    assert read_lines(shared_data / "multi30k" / "test_2016_flickr.en.gz")[0].startswith("A man")
