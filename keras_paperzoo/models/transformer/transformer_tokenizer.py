"""A shared subword vocabulary for source and target, and the string <-> id helpers `translate` uses.

The paper uses one byte-pair vocabulary of about 37,000 tokens shared by English and
German (Sec. 5.1), so that one embedding table serves both sides (Sec. 3.4). Here the
shared vocabulary is a WordPiece one learned on the training sentences of both
languages with keras-hub's `compute_word_piece_vocabulary` (tensorflow-text's learner):
like BPE it splits rare words into frequent pieces, and keras-hub ships its learner and
tokenizer for every backend, while its `BytePairTokenizer` has no trainer. Case and
accents are kept (the BLEU references are cased). Ids 0-3 are reserved:
[PAD] 0, [UNK] 1, [START] 2 (the decoder's first input), [END] 3.
"""

import re

import numpy as np
from keras_paperzoo.optional import require_tensorflow

RESERVED_TOKENS = ("[PAD]", "[UNK]", "[START]", "[END]")
PAD_ID, UNK_ID, START_ID, END_ID = 0, 1, 2, 3


def learn_vocabulary(texts, vocabulary_size):
    """A WordPiece vocabulary (list of tokens, reserved ones first) learned on `texts`.

    Example: `vocab = learn_vocabulary(german_lines + english_lines, 8000)`.
    """
    import keras_hub

    tf = require_tensorflow("Learning a WordPiece vocabulary")

    texts = list(texts)
    if not texts:
        raise ValueError("learn_vocabulary needs at least one sentence.")
    data = tf.data.Dataset.from_tensor_slices(texts).batch(1024)
    return keras_hub.tokenizers.compute_word_piece_vocabulary(
        data, int(vocabulary_size), reserved_tokens=list(RESERVED_TOKENS), lowercase=False, strip_accents=False
    )


def make_tokenizer(vocabulary):
    """The keras-hub `WordPieceTokenizer` for a vocabulary from `learn_vocabulary` (cased)."""
    import keras_hub

    vocabulary = list(vocabulary)
    if tuple(vocabulary[: len(RESERVED_TOKENS)]) != RESERVED_TOKENS:
        raise ValueError(
            f"The vocabulary must start with the reserved tokens {RESERVED_TOKENS}; got {vocabulary[:4]}."
        )
    return keras_hub.tokenizers.WordPieceTokenizer(
        vocabulary, lowercase=False, strip_accents=False, oov_token="[UNK]"
    )


def _to_lists(ids):
    if hasattr(ids, "to_list"):  # tf.RaggedTensor
        return ids.to_list()
    if hasattr(ids, "numpy"):
        ids = ids.numpy()
    return [list(map(int, row)) for row in ids]


def texts_to_ids(tokenizer, texts, end_token_id=END_ID, padding_id=PAD_ID, max_length=None):
    """Tokenize, append the end token (tensor2tensor's source format), pad: (B, S) int32 numpy."""
    rows = [list(row) for row in _to_lists(tokenizer.tokenize(list(texts)))]
    if max_length is not None:
        rows = [row[: max_length - 1] for row in rows]
    rows = [row + [end_token_id] for row in rows]
    out = np.full((len(rows), max(len(r) for r in rows)), padding_id, "int32")
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


_SPACE_BEFORE = re.compile(r" ([.,!?;:%)\]}])")
_SPACE_AFTER = re.compile(r"([(\[{$]) ")
_APOSTROPHE = re.compile(r" ' ")
_HYPHEN = re.compile(r"(?<=\w) - (?=\w)")  # "t - shirt" -> "t-shirt"; captions have no spaced dashes


def join_pieces(text):
    """Undo the tokenizer's spaces around punctuation: "a t - shirt , don ' t ." -> "a t-shirt, don't.".

    sacreBLEU's 13a tokenization keeps intra-word hyphens, so "t - shirt" would count as
    three tokens against the reference's one "t-shirt".
    """
    text = _APOSTROPHE.sub("'", text)
    text = _HYPHEN.sub("-", text)
    text = _SPACE_BEFORE.sub(r"\1", text)
    return _SPACE_AFTER.sub(r"\1", text).strip()


def ids_to_texts(tokenizer, ids, end_token_id=END_ID, padding_id=PAD_ID):
    """(B, L) generated ids -> strings: cut at the end token, drop padding and reserved ids, detokenize."""
    rows = []
    for row in np.asarray(ids):
        row = [int(t) for t in row]
        if end_token_id in row:
            row = row[: row.index(end_token_id)]
        rows.append([t for t in row if t >= len(RESERVED_TOKENS)])
    texts = []
    for row in rows:
        if not row:
            texts.append("")
            continue
        text = tokenizer.detokenize([row])
        text = text[0] if isinstance(text, (list, tuple)) else _to_lists_text(text)
        texts.append(join_pieces(text.decode("utf-8") if isinstance(text, bytes) else str(text)))
    return texts


def _to_lists_text(text):
    if hasattr(text, "numpy"):
        text = text.numpy()
    text = np.asarray(text).reshape(-1)[0]
    return text
