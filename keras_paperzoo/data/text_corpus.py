"""Documents of sentences for BERT pre-training: a generated sample, a text file, or the offline English corpus.

BERT pre-trains on "a document-level corpus rather than a shuffled sentence-level
corpus" (Sec. 3.1, Pre-training data): next sentence prediction needs consecutive
sentences of one document. A corpus here is a list of documents, each a list of
sentences (strings).

- `sample_documents()`: about 10 KB of generated English, built in: each document
  follows one character through a few coherent sentences (who, where, what they do
  and feel), so that the next sentence of a document is predictable and a sentence
  of another document is not. For tests and runs without data.
- `read_documents(path)`: the reference `create_pretraining_data.py` input format, one
  sentence per line, documents separated by blank lines.
- `english_documents(shared_data_dir)`: the English text available offline (the
  reproduction's pre-training corpus): Tiny Shakespeare (documents of 40 consecutive
  lines, speaker names dropped), the English side of Multi30k train (documents of 10
  consecutive captions; captions of different images, so its NotNext pairs are barely
  harder than its IsNext pairs) and the SST-2 training sentences without labels
  (documents of 10 consecutive sentences).
- `load_documents(name_or_path)`: "sample", a text file, or a folder laid out like
  the data folder (tinyshakespeare.txt, multi30k/, sst2/: keras_paperzoo.data.sources).

Example:

```python
documents = load_documents("sample")
len(documents), documents[0][:2]   # (120, ['kate is a painter .', 'kate lives in an old house .'])
```
"""

import gzip
import pathlib

import numpy as np

_NAMES = ["tom", "anna", "maria", "john", "lucy", "peter", "sara", "david", "emma", "paul", "kate", "mark"]
_JOBS = {
    "farmer": ("a small village", "feeds the cows", "grows corn and beans", "the rain"),
    "baker": ("a busy town", "bakes fresh bread", "sells cakes at the market", "the warm oven"),
    "sailor": ("a port by the sea", "sails a small boat", "catches many fish", "the strong wind"),
    "teacher": ("a quiet city", "teaches young children", "reads books in class", "the school bell"),
    "doctor": ("a large city", "helps sick people", "works at the hospital", "the long nights"),
    "painter": ("an old house", "paints the hills", "mixes bright colours", "the morning light"),
    "singer": ("a noisy city", "sings at night", "plays the guitar", "the happy crowd"),
    "gardener": ("a green park", "plants red roses", "waters the trees", "the spring flowers"),
    "driver": ("a cold country", "drives a big truck", "carries heavy boxes", "the empty road"),
    "cook": ("a hotel kitchen", "cooks hot soup", "cuts onions and carrots", "the smell of spices"),
}
_FEELINGS = ("happy", "tired", "proud", "calm", "busy")
_PETS = ("a dog", "a cat", "a horse", "two birds", "a goat")


def sample_documents(num_documents=120, seed=0):
    """Generated documents (lower-case, tokenised like SST-2): one character per document, 5-8 coherent sentences."""
    rng = np.random.default_rng(seed)
    jobs = sorted(_JOBS)
    documents = []
    for _ in range(num_documents):
        name = _NAMES[rng.integers(len(_NAMES))]
        job = jobs[rng.integers(len(jobs))]
        place, action, work, likes = _JOBS[job]
        pet = _PETS[rng.integers(len(_PETS))]
        feeling = _FEELINGS[rng.integers(len(_FEELINGS))]
        sentences = [
            f"{name} is a {job} .",
            f"{name} lives in {place} .",
            f"every morning {name} {action} .",
            f"in the afternoon {name} {work} .",
            f"{name} likes {likes} .",
            f"{name} has {pet} at home .",
            f"at the end of the day {name} feels {feeling} .",
            f"tomorrow {name} will be a {job} again .",
        ]
        keep = int(rng.integers(5, len(sentences) + 1))
        documents.append(sentences[:keep])
    return documents


_POSITIVE, _NEGATIVE = ("happy", "proud", "calm"), ("tired", "busy")


def sample_sentiment(num_sentences=400, seed=1):
    """A small sentence-classification task in the sample's words: (sentences, labels), 1 = a positive feeling.

    "at the end of the day tom feels proud ." is 1, "... feels tired ." is 0, with the
    character, their job and place varying. For the recipe's fine-tuning step when no
    SST-2 is given.
    """
    rng = np.random.default_rng(seed)
    jobs = sorted(_JOBS)
    sentences, labels = [], []
    for _ in range(num_sentences):
        label = int(rng.integers(2))
        feelings = _POSITIVE if label else _NEGATIVE
        name, job = _NAMES[rng.integers(len(_NAMES))], jobs[rng.integers(len(jobs))]
        feeling = feelings[rng.integers(len(feelings))]
        template = rng.integers(3)
        if template == 0:
            sentences.append(f"at the end of the day {name} feels {feeling} .")
        elif template == 1:
            sentences.append(f"{name} is a {job} and feels {feeling} .")
        else:
            sentences.append(f"in {_JOBS[job][0]} {name} feels {feeling} every morning .")
        labels.append(label)
    return sentences, np.asarray(labels, dtype="int32")


def read_documents(path):
    """One sentence per line, documents separated by blank lines (`create_pretraining_data.py`'s format)."""
    documents, current = [], []
    with _open_text(path) as f:
        for line in f:
            line = line.strip()
            if line:
                current.append(line)
            elif current:
                documents.append(current)
                current = []
    if current:
        documents.append(current)
    if not documents:
        raise ValueError(f"{path} holds no sentences (one sentence per line, blank lines between documents).")
    return documents


def _chunks(sentences, size):
    return [sentences[i:i + size] for i in range(0, len(sentences), size) if len(sentences[i:i + size]) >= 2]


def _open_text(path):
    path = str(path)
    return gzip.open(path, "rt", encoding="utf-8") if path.endswith(".gz") else open(path, encoding="utf-8")


def shakespeare_documents(path, lines_per_document=40):
    """Tiny Shakespeare as documents of consecutive spoken lines (speaker-name lines such as "All:" dropped)."""
    with _open_text(path) as f:
        lines = [line.strip() for line in f]
    spoken = [line for line in lines if line and not line.endswith(":")]
    return _chunks(spoken, lines_per_document)


def sentence_documents(path, sentences_per_document=10, skip_header=False, column=None):
    """Consecutive lines of a sentence file (or one tab-separated column) grouped into documents."""
    with _open_text(path) as f:
        lines = f.read().splitlines()
    if skip_header:
        lines = lines[1:]
    if column is not None:
        lines = [line.split("\t")[column] for line in lines]
    return _chunks([line.strip() for line in lines if line.strip()], sentences_per_document)


def english_documents(shared_data_dir):
    """The offline English pre-training corpus: Tiny Shakespeare + Multi30k English train + SST-2 train sentences."""
    root = pathlib.Path(shared_data_dir)
    parts = {
        "shakespeare": root / "tinyshakespeare.txt",
        "multi30k": root / "multi30k" / "train.en.gz",
        "sst2": root / "sst2" / "train.tsv",
    }
    missing = [str(p) for p in parts.values() if not p.is_file()]
    if missing:
        raise ValueError(f"english_documents: {root} lacks {', '.join(missing)}.")
    return (
        shakespeare_documents(parts["shakespeare"])
        + sentence_documents(parts["multi30k"])
        + sentence_documents(parts["sst2"], skip_header=True, column=0)
    )


def load_documents(name_or_path):
    """"sample" (built in), a text file in the one-sentence-per-line format, or a folder like the data folder (tinyshakespeare.txt, multi30k/, sst2/)."""
    if name_or_path in (None, "sample"):
        return sample_documents()
    path = pathlib.Path(name_or_path)
    if path.is_dir():
        return english_documents(path)
    if path.is_file():
        return read_documents(path)
    raise ValueError(
        f"Unknown text corpus {name_or_path!r}: expected 'sample', a text file (one sentence per line, "
        "blank lines between documents) or a folder with tinyshakespeare.txt, multi30k/ and sst2/."
    )
