"""CoNLL word-per-line files, and words + tags -> WordPiece inputs with first-subword labels.

BERT tags CoNLL-2003 NER without a CRF: each word is WordPiece-tokenized and "we use
the representation of the first sub-token as the input to the token-level classifier
over the NER label set" (Devlin et al. 2019, Sec. 5.3); the other sub-tokens, [CLS],
[SEP] and padding carry no label (`IGNORE`, -1), so the loss and the predictions see
one position per word.

CoNLL files hold one word per line, its columns separated by white space (CoNLL-2003:
word, POS, chunk, NER tag), a blank line between sentences and `-DOCSTART-` lines
between documents (skipped).

Example:

```python
sentences = read_conll("eng.train")                      # [(words, tags), ...], tags from the last column
tags = tag_names(sentences)                               # ["O", "B-LOC", ...]
x, labels, word_index = align_words(sentences, tokenizer, tags, sequence_length=128)
tagger.fit(x, labels)
predicted = word_tags(tagger.predict(x), word_index, sentences, tags)
```
"""

import pathlib

import numpy as np

IGNORE = -1  # the label of positions that are not the first sub-token of a word


def read_conll(path, tag_column=-1):
    """[(words, tags), ...]: one pair of lists per sentence of a CoNLL word-per-line file.

    Args:
        path: the file.
        tag_column: the column holding the tag (-1, the last: CoNLL-2003's NER tags;
            1 and 2 are its POS and chunk tags). The words are column 0.

    Every non-blank line must have as many columns as the file's first word line: one
    that does not raises a ValueError naming the file and the line number, as does a
    JSON (or JSON-lines) file and a file without a sentence.
    """
    path = pathlib.Path(path)
    sentences, words, tags, num_columns = [], [], [], None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        columns = line.split()
        if not columns or columns[0] == "-DOCSTART-":
            if words:
                sentences.append((words, tags))
            words, tags = [], []
            continue
        if num_columns is None:
            if columns[0][:1] in ("{", "[") or path.suffix in (".json", ".jsonl"):
                raise ValueError(f"{path} line {number} is JSON, not CoNLL: a CoNLL word-per-line file is expected "
                                 "(word ... tag on each line, a blank line between sentences).")
            num_columns = len(columns)
            if not -num_columns <= tag_column < num_columns or tag_column in (0, -num_columns):
                raise ValueError(f"{path} line {number}: tag_column {tag_column} is not a tag column of a line "
                                 f"with {num_columns} columns (column 0 holds the word).")
        if len(columns) != num_columns:
            raise ValueError(f"{path} line {number}: {len(columns)} columns, but the file's lines have "
                             f"{num_columns}: {line!r}.")
        words.append(columns[0])
        tags.append(columns[tag_column])
    if words:
        sentences.append((words, tags))
    if not sentences:
        raise ValueError(f"{path} holds no sentences: a CoNLL word-per-line file is expected (word ... tag on each "
                         "line, a blank line between sentences).")
    return sentences


def tag_names(sentences):
    """The sorted tag set of `[(words, tags), ...]`, "O" first: the classifier's label ids."""
    names = sorted({tag for _, tags in sentences for tag in tags} - {"O"})
    return ["O"] + names


def _word_pieces(words, tokenizer):
    """One list of WordPiece ids per word (all words of all sentences tokenized at once)."""
    if not words:
        return []
    ids = tokenizer(list(words))
    ids = ids.to_list() if hasattr(ids, "to_list") else ids  # ragged (TF backend) or lists
    unknown = tokenizer.token_to_id(getattr(tokenizer, "oov_token", "[UNK]"))
    return [[int(i) for i in np.asarray(pieces).reshape(-1)] or [unknown] for pieces in ids]


def align_words(sentences, tokenizer, tags, sequence_length=128):
    """Words + tags -> packed [CLS] pieces [SEP] inputs and first-subword labels (Sec. 5.3).

    Args:
        sentences: `[(words, word_tags), ...]` (`read_conll`'s output); word_tags may be
            None for unlabelled text.
        tokenizer: a keras-hub WordPiece tokenizer (`keras_hub.models.BertTokenizer`),
            as the rest of the BERT code uses.
        tags: the tag names; a tag's index is its label id.
        sequence_length: T; pieces past T - 2 are cut, and so are their words' labels.

    Returns:
        (x, labels, word_index): x a dict of (N, T) int32 arrays `token_ids`,
        `segment_ids` (0) and `padding_mask`; labels (N, T) int32, the word's tag id at
        its first sub-token and IGNORE everywhere else; word_index (N, T) int32, the
        word a first sub-token starts and IGNORE elsewhere (`word_tags` reads it).
    """
    if isinstance(sequence_length, bool) or not isinstance(sequence_length, int) or sequence_length < 3:
        raise ValueError(f"sequence_length must be an int >= 3 ([CLS] word [SEP]); got {sequence_length!r}.")
    tag_ids = {tag: i for i, tag in enumerate(tags)}
    pieces = iter(_word_pieces([w for words, _ in sentences for w in words], tokenizer))
    n = len(sentences)
    token_ids = np.full((n, sequence_length), tokenizer.pad_token_id, "int32")
    word_index = np.full((n, sequence_length), IGNORE, "int32")
    labels = np.full((n, sequence_length), IGNORE, "int32")
    for row, (words, word_tags) in enumerate(sentences):
        ids, starts = [tokenizer.cls_token_id], []
        for index in range(len(words)):
            starts.append(len(ids))
            ids.extend(next(pieces))
        ids = ids[: sequence_length - 1] + [tokenizer.sep_token_id]
        token_ids[row, : len(ids)] = ids
        for index, start in enumerate(starts):
            if start >= len(ids) - 1:  # cut by the sequence length
                break
            word_index[row, start] = index
            if word_tags is not None:
                if word_tags[index] not in tag_ids:
                    raise ValueError(f"Sentence {row}, word {index} ({words[index]!r}): tag {word_tags[index]!r} "
                                     f"is not one of the tags {list(tags)}.")
                labels[row, start] = tag_ids[word_tags[index]]
    x = {
        "token_ids": token_ids,
        "segment_ids": np.zeros_like(token_ids),
        "padding_mask": (token_ids != tokenizer.pad_token_id).astype("int32"),
    }
    return x, labels, word_index


def word_tags(logits, word_index, sentences, tags, fill="O"):
    """Per-token logits (N, T, K) -> one tag per word, read at each word's first sub-token.

    Words cut by the sequence length get `fill` ("O").
    """
    predicted = np.asarray(logits).argmax(-1)  # (N, T)
    word_index = np.asarray(word_index)
    out = []
    for row, (words, _) in enumerate(sentences):
        sentence = [fill] * len(words)
        for position in np.flatnonzero(word_index[row] >= 0):
            sentence[word_index[row, position]] = tags[predicted[row, position]]
        out.append(sentence)
    return out
