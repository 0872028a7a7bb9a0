"""The byte-pair tokenizer trained with `tokenizers` and read by keras-hub: exact round trip, size, agreement."""

import json
import pathlib

import numpy as np
import pytest

from keras_paperzoo.data.bpe import END_OF_TEXT, load_hugging_face_tokenizer, train_byte_pair_tokenizer
from keras_paperzoo.data.char_text import SAMPLE_TEXT

# Tokenization is pure Python (`tokenizers`, keras-hub's eager path): the same on every leg.
pytestmark = pytest.mark.backend_free("jax")

VOCABULARY_SIZE = 300
UNICODE = "naïve café, 日本語 and 🙂 emoji;\n\ttabs,   three spaces, trailing space \r\nend\n\n"


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    directory = tmp_path_factory.mktemp("bpe")
    return train_byte_pair_tokenizer([SAMPLE_TEXT], VOCABULARY_SIZE, directory=directory), directory


def _ids(tokens):
    return [int(i) for i in np.asarray(tokens).reshape(-1)]


def test_files_hold_the_asked_vocabulary_and_its_merges(trained):
    tokenizer, directory = trained
    vocabulary = json.loads((directory / "vocabulary.json").read_text(encoding="utf-8"))
    merges = (directory / "merges.txt").read_text(encoding="utf-8").splitlines()
    assert tokenizer.vocabulary_size() == len(vocabulary) == VOCABULARY_SIZE
    assert sorted(vocabulary.values()) == list(range(VOCABULARY_SIZE))
    assert vocabulary[END_OF_TEXT] == 0
    # 256 bytes + 1 special token + one new token per merge (GPT-2 Sec. 2.2's base of 256)
    assert len(merges) == VOCABULARY_SIZE - 256 - 1
    for merge in merges:
        a, b = merge.split(" ")
        assert a + b in vocabulary


@pytest.mark.parametrize("text", [SAMPLE_TEXT[:400], UNICODE, " leading space", "", "<|endoftext|>x"])
def test_round_trip_is_exact_at_the_byte_level(trained, text):
    tokenizer, _ = trained
    ids = _ids(tokenizer.tokenize(text))
    assert all(0 <= i < VOCABULARY_SIZE for i in ids)
    assert tokenizer.detokenize(ids) == text


def test_merges_shorten_the_sequence_below_one_token_per_byte(trained):
    tokenizer, _ = trained
    text = SAMPLE_TEXT[:400]
    assert len(_ids(tokenizer.tokenize(text))) < 0.7 * len(text.encode("utf-8"))
    assert len(_ids(tokenizer.tokenize("日本"))) == len("日本".encode("utf-8"))  # unseen: one token per byte


def test_tokenizers_and_keras_hub_give_the_same_ids(trained):
    tokenizer, directory = trained
    hugging_face = load_hugging_face_tokenizer(directory)
    for text in [SAMPLE_TEXT, UNICODE, f"one{END_OF_TEXT}two", "it's 12 o'clock, isn't it?"]:
        assert hugging_face.encode(text).ids == _ids(tokenizer.tokenize(text)), text
    assert _ids(tokenizer.tokenize(END_OF_TEXT)) == [0]  # unsplittable


def test_paths_are_files_and_strings_are_texts(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(SAMPLE_TEXT, encoding="utf-8")
    from_file = train_byte_pair_tokenizer(corpus, VOCABULARY_SIZE, directory=tmp_path / "a")
    from_text = train_byte_pair_tokenizer(SAMPLE_TEXT, VOCABULARY_SIZE, directory=tmp_path / "b")
    assert from_file.get_vocabulary() == from_text.get_vocabulary()
    assert pathlib.Path(from_file.directory) == tmp_path / "a"


def test_corpus_alphabet_is_smaller_without_byte_level(tmp_path):
    tokenizer = train_byte_pair_tokenizer("abab abba baab", 10, byte_level=False, special_tokens=(), min_frequency=1,
                                          directory=tmp_path)
    assert tokenizer.vocabulary_size() == 10
    with pytest.raises(ValueError, match="leaves no merge"):  # "a", "b" and " " fill a vocabulary of 3
        train_byte_pair_tokenizer("abab abba baab", 3, byte_level=False, special_tokens=(), directory=tmp_path)
    assert tokenizer.detokenize(_ids(tokenizer.tokenize("abba ab"))) == "abba ab"
    assert tokenizer.detokenize(_ids(tokenizer.tokenize("abc"))) == "ab"  # no unknown token: "c" is dropped


@pytest.mark.parametrize(
    "size, message",
    [(257, "at least 258"), (257.0, "must be an int"), (True, "must be an int"), (100_000, "was not reached")],
)
def test_bad_vocabulary_size(tmp_path, size, message):
    with pytest.raises(ValueError, match=message):
        train_byte_pair_tokenizer([SAMPLE_TEXT], size, directory=tmp_path)
