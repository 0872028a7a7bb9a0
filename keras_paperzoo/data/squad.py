"""SQuAD v1.1 / v2.0 files -> BERT span-extraction inputs, long contexts cut into overlapping windows.

BERT packs "the input question and passage as a single packed sequence, with the
question using the A embedding and the passage using the B embedding" (Devlin et al.
2019, Sec. 4.2): [CLS] question [SEP] passage [SEP]. As the reference `run_squad.py`,
questions are cut to `max_query_length` (64) pieces, and a passage longer than what is
left of `max_seq_length` (384) is cut into windows that start `doc_stride` (128) pieces
apart; a window that does not hold the whole answer, and every window of a v2.0
question without an answer, is labelled start = end = 0 ([CLS]: "no answer", Sec. 4.3).

One departure from `run_squad.py`, for the same answers: instead of its whitespace
words and `get_final_text` re-alignment, every WordPiece keeps the characters of the
context it came from (`token_spans`), so a predicted span maps straight back to the
original text, punctuation and case included.

Example:

```python
examples = read_squad("dev-v1.1.json")
x, y, info = squad_features(examples, tokenizer)          # info: example_index, token_spans, max_context
out = reader.predict(x)
predictions = decode_spans(examples, info, out["start_logits"], out["end_logits"])
squad_scores(examples, predictions)                       # {"exact_match": ..., "f1": ...}
```
"""

import json
import pathlib
import re

import numpy as np

# BERT's basic tokenizer splits on white space and around every punctuation character.
PRE_TOKEN = re.compile(r"[^\W_]+|\S", re.UNICODE)


def read_squad(path):
    """The questions of a SQuAD v1.1 / v2.0 JSON file, as dicts.

    Each: `id`, `question`, `context`, `answers` (a list of `{"text", "answer_start"}`;
    several on dev sets, empty for a v2.0 question without an answer) and
    `is_impossible`. An answer whose text is not at its `answer_start` in the context
    raises a ValueError naming the file and the question id.
    """
    path = pathlib.Path(path)
    expected = "a SQuAD v1.1 / v2.0 .json file (one JSON object with a 'data' list of articles) is expected"
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path} is not UTF-8 text (byte {error.start}); {expected}.") from None
    if not text.strip():
        raise ValueError(f"{path} is empty; {expected}.")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not JSON ({error.msg} at line {error.lineno}, column {error.colno}); "
                         f"{expected}.") from None
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise ValueError(f"{path} is not a SQuAD file: it should be a JSON object with a 'data' list.")
    examples = []
    try:
        for article in data["data"]:
            for paragraph in article["paragraphs"]:
                context = paragraph["context"]
                for qa in paragraph["qas"]:
                    examples.append(_question(path, context, qa))
    except (KeyError, TypeError, ValueError) as error:
        if isinstance(error, ValueError) and str(error).startswith(str(path)):
            raise
        what = f"no {error.args[0]!r} field" if isinstance(error, KeyError) else f"{type(error).__name__}: {error}"
        raise ValueError(f"{path} (question {len(examples) + 1}): {what}; each article needs 'paragraphs', each "
                         "paragraph 'context' and 'qas', each question 'id', 'question' and 'answers' "
                         "({'text', 'answer_start'}).") from None
    if not examples:
        raise ValueError(f"{path} holds no questions; {expected}.")
    return examples


def _question(path, context, qa):
    """One question of a SQuAD paragraph as a dict; its answers checked against the context."""
    answers = [{"text": a["text"], "answer_start": int(a["answer_start"])} for a in qa.get("answers", [])]
    for answer in answers:
        start, text = answer["answer_start"], answer["text"]
        found = context[start: start + len(text)]
        if found != text:
            raise ValueError(f"{path}: question {qa['id']}: answer {text!r} is not at its answer_start "
                             f"{start} in the context, which holds {found!r} there.")
    return {"id": qa["id"], "question": qa["question"], "context": context, "answers": answers,
            "is_impossible": bool(qa.get("is_impossible", not answers))}


def _pieces_with_spans(texts, tokenizer):
    """For each text: a list of (piece id, char start, char end), WordPiece over BERT's pre-tokens.

    A piece gets its own characters when the pieces of a word spell it (the usual case);
    otherwise ([UNK], accents stripped) every piece of the word gets the whole word.
    """
    words = [[(m.group(), m.start(), m.end()) for m in PRE_TOKEN.finditer(text)] for text in texts]
    flat = [w for text_words in words for w, _, _ in text_words]
    ids = tokenizer(flat) if flat else []
    ids = ids.to_list() if hasattr(ids, "to_list") else ids  # ragged (TF backend) or lists
    ids = iter(ids)
    out = []
    for text_words in words:
        pieces = []
        for word, start, end in text_words:
            word_ids = [int(i) for i in np.asarray(next(ids)).reshape(-1)]
            strings = [tokenizer.id_to_token(i) for i in word_ids]
            strings = [s.removeprefix("##") for s in strings]
            lengths = [len(s) for s in strings]
            if "".join(strings).lower() == word.lower():
                offsets = start + np.cumsum([0] + lengths)
                pieces.extend((i, int(offsets[k]), int(offsets[k + 1])) for k, i in enumerate(word_ids))
            else:
                pieces.extend((i, start, end) for i in word_ids)
        out.append(pieces)
    return out


def _windows(num_pieces, window, stride):
    """(start, length) of the passage windows: `run_squad.py`'s doc spans."""
    spans, start = [], 0
    while True:
        length = min(num_pieces - start, window)
        spans.append((start, length))
        if start + length >= num_pieces:
            return spans
        start += min(length, stride)


def _max_context(spans, position):
    """The window where `position` has the most context: max min(left, right) + 0.01 length (`run_squad.py`)."""
    scores = [min(position - s, s + n - 1 - position) + 0.01 * n if s <= position < s + n else -1 for s, n in spans]
    return int(np.argmax(scores))


def squad_features(examples, tokenizer, max_seq_length=384, doc_stride=128, max_query_length=64):
    """Questions -> packed windows (F >= N rows): model inputs, span targets and what decoding needs.

    Args:
        examples: `read_squad`'s output.
        tokenizer: a keras-hub WordPiece tokenizer (`keras_hub.models.BertTokenizer`).
        max_seq_length, doc_stride, max_query_length: as `run_squad.py` (384, 128, 64).

    Returns:
        (x, y, info): x a dict of (F, T) int32 `token_ids`, `segment_ids`,
        `padding_mask`; y a dict of (F,) int32 `start_positions`, `end_positions` (the
        first answer's pieces, 0 when the window lacks it); info a dict of
        `example_index` (F,), `token_spans` (F, T, 2) the context characters of each
        passage piece (-1 elsewhere) and `max_context` (F, T) bool, whether this window
        gives the piece its most context.
    """
    if max_query_length < 1 or max_seq_length < max_query_length + 4:
        raise ValueError(f"max_seq_length {max_seq_length} should exceed max_query_length {max_query_length} + 3 "
                         "([CLS] question [SEP] passage [SEP]).")
    if doc_stride < 1:
        raise ValueError(f"doc_stride must be a positive int; got {doc_stride!r}.")
    questions = _pieces_with_spans([e["question"] for e in examples], tokenizer)
    passages = _pieces_with_spans([e["context"] for e in examples], tokenizer)
    rows = {name: [] for name in ("token_ids", "segment_ids", "length", "start_positions", "end_positions",
                                  "example_index", "token_spans", "max_context")}
    for index, (example, question, passage) in enumerate(zip(examples, questions, passages)):
        query = [tokenizer.cls_token_id] + [p[0] for p in question[:max_query_length]] + [tokenizer.sep_token_id]
        answer = None
        if example["answers"] and not example["is_impossible"]:
            first = example["answers"][0]
            begin, finish = first["answer_start"], first["answer_start"] + len(first["text"])
            inside = [k for k, (_, a, b) in enumerate(passage) if a < finish and b > begin]
            answer = (inside[0], inside[-1]) if inside else None
        spans = _windows(len(passage), max_seq_length - len(query) - 1, doc_stride)
        for number, (start, length) in enumerate(spans):
            window = passage[start: start + length]
            ids = query + [p[0] for p in window] + [tokenizer.sep_token_id]
            token_spans = np.full((max_seq_length, 2), -1, "int32")
            token_spans[len(query): len(query) + length] = [(a, b) for _, a, b in window]
            max_context = np.zeros(max_seq_length, bool)
            max_context[len(query): len(query) + length] = [
                _max_context(spans, start + k) == number for k in range(length)]
            if answer is not None and start <= answer[0] and answer[1] < start + length:
                target = (answer[0] - start + len(query), answer[1] - start + len(query))
            else:
                target = (0, 0)  # [CLS]: the answer is not in this window
            rows["token_ids"].append(ids + [tokenizer.pad_token_id] * (max_seq_length - len(ids)))
            rows["segment_ids"].append([0] * len(query) + [1] * (len(ids) - len(query))
                                       + [0] * (max_seq_length - len(ids)))
            rows["length"].append(len(ids))
            rows["start_positions"].append(target[0])
            rows["end_positions"].append(target[1])
            rows["example_index"].append(index)
            rows["token_spans"].append(token_spans)
            rows["max_context"].append(max_context)
    token_ids = np.asarray(rows["token_ids"], "int32").reshape(-1, max_seq_length)
    x = {
        "token_ids": token_ids,
        "segment_ids": np.asarray(rows["segment_ids"], "int32").reshape(-1, max_seq_length),
        "padding_mask": (np.arange(max_seq_length)[None, :] < np.asarray(rows["length"])[:, None]).astype("int32"),
    }
    y = {name: np.asarray(rows[name], "int32") for name in ("start_positions", "end_positions")}
    info = {
        "example_index": np.asarray(rows["example_index"], "int32"),
        "token_spans": np.asarray(rows["token_spans"], "int32").reshape(-1, max_seq_length, 2),
        "max_context": np.asarray(rows["max_context"], bool).reshape(-1, max_seq_length),
    }
    return x, y, info

