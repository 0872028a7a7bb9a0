"""A byte-pair tokenizer trained here (GPT-2, Radford et al. 2019, Sec. 2.2), read by keras-hub.

GPT-2 Sec. 2.2: BPE over bytes, "a base vocabulary of size 256", with merges learned on
the corpus and "BPE [prevented] from merging across character categories" (the
pre-tokenization regex of GPT-2's `encoder.py`). GPT-1 Sec. 4.1 used "a bytepair
encoding (BPE) vocabulary with 40,000 merges" over characters.

`train_byte_pair_tokenizer` learns the merges with Hugging Face `tokenizers` (fast,
Rust), writes the two files that `keras_hub.tokenizers.BytePairTokenizer` reads
(`vocabulary.json`: token -> id; `merges.txt`: one merge "a b" a line, in the order
learned) and returns that keras-hub tokenizer.

Pre-tokenization: GPT-2's regex (`ByteLevel(use_regex=True)`), no prefix space.
keras-hub 0.32 splits eagerly with Llama 3's regex and inside `tf.data` with GPT-2's;
the two agree on prose, but Llama 3's cuts digit runs into groups of three, so on a
number longer than three digits that the merges joined, the eager keras-hub ids can
differ from `tokenizers`' (both decode to the same text: the round trip is exact).

Example:

```python
from keras_paperzoo.data.bpe import train_byte_pair_tokenizer
from keras_paperzoo.data.char_text import SAMPLE_TEXT

tokenizer = train_byte_pair_tokenizer([SAMPLE_TEXT], vocabulary_size=300, directory="bpe")
ids = tokenizer.tokenize("Shall I compare thee")  # ids < 300
tokenizer.detokenize(ids)                          # 'Shall I compare thee'
```
"""

import json
import os
import pathlib
import tempfile

import keras
import numpy as np

from keras_paperzoo.optional import require

VOCABULARY_FILE = "vocabulary.json"  # keras_hub.src.tokenizers.byte_pair_tokenizer.VOCAB_FILENAME
MERGES_FILE = "merges.txt"  # ... .MERGES_FILENAME
END_OF_TEXT = "<|endoftext|>"  # GPT-2's one special token
BYTES = 256  # GPT-2 Sec. 2.2: "a base vocabulary of size 256"


def _texts(texts_or_files):
    """Yield the texts: a `str` is a text, an `os.PathLike` (`pathlib.Path`) a UTF-8 file."""
    if isinstance(texts_or_files, (str, os.PathLike)):
        texts_or_files = [texts_or_files]
    for item in texts_or_files:
        if isinstance(item, os.PathLike):
            yield pathlib.Path(item).read_text(encoding="utf-8")
        elif isinstance(item, str):
            yield item
        else:
            raise ValueError(f"train_byte_pair_tokenizer takes texts (str) or files (pathlib.Path); got {item!r}.")


def _merge_lines(tokenizer):
    """The learned merges as "a b" lines, in rank order (`tokenizers` >= 0.20 stores pairs, older "a b")."""
    merges = json.loads(tokenizer.to_str())["model"]["merges"]
    return [m if isinstance(m, str) else " ".join(m) for m in merges]


def train_byte_pair_tokenizer(texts_or_files, vocabulary_size, byte_level=True, special_tokens=(END_OF_TEXT,),
                              directory=None, min_frequency=2):
    """Learn a BPE of `vocabulary_size` tokens on the texts; write and return keras-hub's tokenizer.

    Args:
        texts_or_files: a text (`str`), a file (`pathlib.Path`, read as UTF-8), or an
            iterable of either. A `str` is always a text, never a file name.
        vocabulary_size: int, the size of the vocabulary, special tokens included.
            With `byte_level=True` at least 256 + len(special_tokens) + 1 (one merge);
            the texts must offer enough merges to reach it (else ValueError with the
            size reached).
        byte_level: True: GPT-2's base vocabulary of all 256 bytes, so that any text
            round-trips exactly. False: only the bytes that occur in the texts (a
            smaller base, as GPT-1's BPE over the corpus's characters); there is no
            unknown token, so a byte that never occurred is dropped when encoding
            (keras-hub's eager path): such a text does not round-trip.
        special_tokens: tokens kept whole (never split, never merged), first ids in
            order; GPT-2's "<|endoftext|>" by default.
        directory: where `vocabulary.json` and `merges.txt` are written (created if
            needed); None: a new temporary directory.
        min_frequency: int, a pair is merged only if it occurs at least this often (2,
            the default of `tokenizers`' `ByteLevelBPETokenizer.train`).

    Returns a `keras_hub.tokenizers.BytePairTokenizer` read from the two files, with
    the special tokens as its `unsplittable_tokens`; `tokenizer.directory` is the folder.
    """
    if isinstance(vocabulary_size, bool) or not isinstance(vocabulary_size, int):
        raise ValueError(f"train_byte_pair_tokenizer vocabulary_size must be an int; got {vocabulary_size!r}.")
    special_tokens = list(special_tokens)
    smallest = (BYTES if byte_level else 1) + len(special_tokens) + 1
    if vocabulary_size < smallest:
        raise ValueError(
            f"train_byte_pair_tokenizer vocabulary_size={vocabulary_size} must be at least {smallest}: "
            f"{'the 256 bytes' if byte_level else 'one symbol'}, {len(special_tokens)} special token(s) and one merge."
        )
    tokenizers = require("tokenizers", "train_byte_pair_tokenizer")
    from tokenizers import decoders, models, pre_tokenizers, trainers

    bpe = tokenizers.Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)  # GPT-2's regex, bytes
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocabulary_size,
        min_frequency=min_frequency,
        special_tokens=special_tokens,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet() if byte_level else [],
        show_progress=False,
    )
    bpe.train_from_iterator(_texts(texts_or_files), trainer)
    merges = _merge_lines(bpe)
    if not merges:  # keras-hub cannot hold an empty merge list
        raise ValueError(
            f"train_byte_pair_tokenizer vocabulary_size={vocabulary_size} leaves no merge: the base symbols and "
            f"special tokens already make {bpe.get_vocab_size()} tokens; ask for more."
        )
    if bpe.get_vocab_size() != vocabulary_size:
        raise ValueError(
            f"train_byte_pair_tokenizer vocabulary_size={vocabulary_size} was not reached: the texts give "
            f"{bpe.get_vocab_size()} tokens (merges of pairs seen at least min_frequency={min_frequency} times); "
            "give more text or a smaller vocabulary_size."
        )

    directory = pathlib.Path(directory or tempfile.mkdtemp(prefix="bpe_"))
    directory.mkdir(parents=True, exist_ok=True)
    vocabulary = dict(sorted(bpe.get_vocab().items(), key=lambda item: item[1]))  # token -> id, by id
    (directory / VOCABULARY_FILE).write_text(json.dumps(vocabulary, ensure_ascii=False), encoding="utf-8")
    (directory / MERGES_FILE).write_text("".join(f"{m}\n" for m in merges), encoding="utf-8")

    keras_hub = require("keras_hub", "train_byte_pair_tokenizer", install="keras-hub")
    tokenizer = keras_hub.tokenizers.BytePairTokenizer(
        vocabulary=str(directory / VOCABULARY_FILE),
        merges=str(directory / MERGES_FILE),
        unsplittable_tokens=special_tokens or None,
    )
    tokenizer.directory = str(directory)
    return tokenizer


def load_hugging_face_tokenizer(directory, special_tokens=(END_OF_TEXT,)):
    """The `tokenizers.Tokenizer` of the files `train_byte_pair_tokenizer` wrote (GPT-2's byte-level BPE).

    The same ids as the trainer's tokenizer; for comparison with keras-hub and for fast
    batch encoding (`encode_batch`).
    """
    tokenizers = require("tokenizers", "load_hugging_face_tokenizer")
    from tokenizers import decoders, models, pre_tokenizers

    directory = pathlib.Path(directory)
    bpe = tokenizers.Tokenizer(models.BPE.from_file(str(directory / VOCABULARY_FILE), str(directory / MERGES_FILE)))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    bpe.decoder = decoders.ByteLevel()
    if special_tokens:
        bpe.add_special_tokens(list(special_tokens))
    return bpe


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class InlineBytePairTokenizer:
    """keras-hub's `BytePairTokenizer` with its vocabulary and merges in its config.

    keras-hub's tokenizer keeps them in asset files, which a model saves only for a
    tracked layer; `GPTCausalLM` holds its tokenizer untracked and saves it by config
    (`serializable_by_config`), as `CharTokenizer`. This one is saved whole in
    `model.keras` and loads in safe mode. `tokenize`, `detokenize` and
    `vocabulary_size` are the keras-hub tokenizer's (`self.tokenizer`). Importing
    `keras_paperzoo.models` registers it (and `CharTokenizer`) for `keras.saving.load_model`.

    Args:
        vocabulary: dict token -> id (the contents of `vocabulary.json`).
        merges: list of "a b" merge rules in rank order (the lines of `merges.txt`).
        unsplittable_tokens: special tokens never split (GPT-2's "<|endoftext|>").

    Example:

    ```python
    from keras_paperzoo.data.bpe import train_byte_pair_tokenizer
    from keras_paperzoo.data.char_text import SAMPLE_TEXT

    trained = train_byte_pair_tokenizer(SAMPLE_TEXT, vocabulary_size=300)
    tokenizer = InlineBytePairTokenizer.from_directory(trained.directory)
    tokenizer.detokenize(tokenizer.tokenize("Shall I"))   # 'Shall I'
    ```
    """

    serializable_by_config = True

    def __init__(self, vocabulary, merges, unsplittable_tokens=None):
        import keras_hub

        self.vocabulary = dict(vocabulary)
        self.merges = list(merges)
        self.unsplittable_tokens = [END_OF_TEXT] if unsplittable_tokens is None else list(unsplittable_tokens)
        self.tokenizer = keras_hub.tokenizers.BytePairTokenizer(
            vocabulary=self.vocabulary, merges=self.merges, unsplittable_tokens=self.unsplittable_tokens or None
        )

    @classmethod
    def from_directory(cls, directory, unsplittable_tokens=None):
        """The tokenizer of the `vocabulary.json` and `merges.txt` in `directory`."""
        directory = pathlib.Path(directory)
        vocabulary = json.loads((directory / VOCABULARY_FILE).read_text(encoding="utf-8"))
        merges = (directory / MERGES_FILE).read_text(encoding="utf-8").splitlines()
        return cls(vocabulary, merges, unsplittable_tokens)

    def files(self):
        """{file name: contents} of `vocabulary.json` and `merges.txt`, as `train_byte_pair_tokenizer` writes them."""
        return {VOCABULARY_FILE: json.dumps(self.vocabulary, ensure_ascii=False),
                MERGES_FILE: "".join(f"{merge}\n" for merge in self.merges)}

    def token_bytes(self):
        """int array (V,): the UTF-8 bytes each id stands for (byte-level: one symbol a byte)."""
        lengths = np.zeros(len(self.vocabulary), dtype="int64")
        for token, index in self.vocabulary.items():
            lengths[index] = len(token)  # a byte-level symbol is one byte; a special token is ASCII
        return lengths

    def vocabulary_size(self):
        return self.tokenizer.vocabulary_size()

    def tokenize(self, strings):
        return self.tokenizer.tokenize(strings)

    def detokenize(self, ids):
        return self.tokenizer.detokenize(ids)

    def get_config(self):
        return {"vocabulary": self.vocabulary, "merges": self.merges, "unsplittable_tokens": self.unsplittable_tokens}

    @classmethod
    def from_config(cls, config):
        return cls(**config)
