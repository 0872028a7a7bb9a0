"""Span-level precision, recall and F1 of BIO / IOB tags, as the CoNLL `conlleval` script counts them.

BERT reports CoNLL-2003 NER as span F1 (Devlin et al. 2019, Sec. 5.3, Table 7). A
span (chunk) is a maximal run of tags of one type that `conlleval` opens and closes:
it accepts IOB1 (I-X opens a chunk after O or another type, B-X only separates two
adjacent chunks of one type), IOB2 / BIO (every chunk opens with B-X) and IOBES, and
repairs ill-formed sequences the way conlleval does (an I-X after O opens a chunk).
A predicted span is correct when its type, first and last word equal a gold span's.
Sentences are scored apart: a span never crosses a sentence boundary.

Example:

```python
gold = [["B-PER", "I-PER", "O", "B-LOC"]]
pred = [["B-PER", "I-PER", "O", "B-ORG"]]
span_f1(gold, pred)["f1"]   # 0.5: 1 of 2 predicted spans correct, 1 of 2 gold spans found
```
"""

PREFIXES = ("B", "I", "E", "S", "O")


def _split(tag):
    """'B-PER' -> ('B', 'PER'); 'O' -> ('O', '')."""
    if tag == "O":
        return "O", ""
    prefix, dash, kind = tag.partition("-")
    if not dash or prefix not in PREFIXES[:4] or not kind:
        raise ValueError(f"Tag {tag!r} is not a BIO / IOB / IOBES tag: it should be 'O' or "
                         "'B-TYPE', 'I-TYPE', 'E-TYPE', 'S-TYPE'.")
    return prefix, kind


def _end_of_chunk(prev_prefix, prefix, prev_kind, kind):
    """conlleval's endOfChunk: does the chunk holding the previous word end before this word?"""
    if prev_prefix in ("E", "S"):
        return True
    if prev_prefix in ("B", "I") and prefix in ("B", "S", "O"):
        return True
    return prev_prefix != "O" and prev_kind != kind


def _start_of_chunk(prev_prefix, prefix, prev_kind, kind):
    """conlleval's startOfChunk: does a chunk open at this word?"""
    if prefix in ("B", "S"):
        return True
    if prev_prefix in ("E", "S", "O") and prefix in ("E", "I"):
        return True
    return prefix != "O" and prev_kind != kind


def spans(tags):
    """The set of (type, first, last) spans (inclusive word indices) of one sentence's tags."""
    found, start = set(), None
    prev_prefix, prev_kind = "O", ""
    for i, tag in enumerate(list(tags) + ["O"]):  # a final O closes the last chunk
        prefix, kind = _split(tag)
        if start is not None and _end_of_chunk(prev_prefix, prefix, prev_kind, kind):
            found.add((prev_kind, start, i - 1))
            start = None
        if _start_of_chunk(prev_prefix, prefix, prev_kind, kind):
            start = i
        prev_prefix, prev_kind = prefix, kind
    return found


def _scores(correct, predicted, gold):
    precision = correct / predicted if predicted else 0.0
    recall = correct / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "correct": correct, "predicted": predicted,
            "gold": gold}


def span_f1(gold_tags, predicted_tags):
    """Span precision, recall and F1 (fractions in [0, 1]) over sentences of tags, overall and per type.

    Args:
        gold_tags, predicted_tags: lists of sentences, each a list of tag strings;
            the same number of sentences and of tags per sentence.

    Returns:
        dict: `precision`, `recall`, `f1`, the counts `correct`, `predicted`, `gold`,
        and `per_type`: type -> the same six entries. conlleval prints these x 100.
    """
    gold_tags, predicted_tags = list(gold_tags), list(predicted_tags)
    if len(gold_tags) != len(predicted_tags):
        raise ValueError(f"span_f1 needs one predicted sentence per gold sentence; got {len(gold_tags)} gold and "
                         f"{len(predicted_tags)} predicted sentences.")
    counts = {}  # type -> [correct, predicted, gold]
    for index, (gold, predicted) in enumerate(zip(gold_tags, predicted_tags)):
        if len(gold) != len(predicted):
            raise ValueError(f"span_f1 sentence {index} has {len(gold)} gold tags but {len(predicted)} predicted tags.")
        gold_spans, predicted_spans = spans(gold), spans(predicted)
        for span in gold_spans | predicted_spans:
            entry = counts.setdefault(span[0], [0, 0, 0])
            entry[0] += span in gold_spans and span in predicted_spans
            entry[1] += span in predicted_spans
            entry[2] += span in gold_spans
    total = [sum(entry[k] for entry in counts.values()) for k in range(3)]
    result = _scores(*total)
    result["per_type"] = {kind: _scores(*counts[kind]) for kind in sorted(counts)}
    return result
