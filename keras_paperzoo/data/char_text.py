"""Character-level text for causal language models (the nanoGPT Tiny Shakespeare setting).

- `CharTokenizer`: one token per distinct character of a text, sorted (nanoGPT's
  `shakespeare_char` vocabulary: Tiny Shakespeare has 65).
- `load_text`: a text file's contents, or the small built-in sample (`SAMPLE_TEXT`,
  public-domain Shakespeare sonnets, about 3 KB) for runs without data.
- `split_ids`: the first 90 % for training, the last 10 % for validation (nanoGPT's split).
- `RandomWindows`: batches of (x, y) = (ids[o:o+T], ids[o+1:o+T+1]) at random offsets,
  a fresh reproducible order every epoch (`EpochShuffledBatches` over the offsets).
- `validation_windows`: every non-overlapping window of the validation ids, for a
  deterministic validation loss.

Example:

```python
text = load_text(None)                      # the built-in sample
tokenizer = CharTokenizer.from_text(text)
train, valid = split_ids(tokenizer.encode(text))
batches = RandomWindows(train, sequence_length=64, batch_size=32, seed=0)
x, y = batches[0]                           # (32, 64) int32 each, y shifted by one
```
"""

import pathlib

import numpy as np

import keras

from keras_paperzoo.data.epoch_batches import EpochShuffledBatches

SAMPLE_TEXT = """\
SONNET XVIII
Shall I compare thee to a summer's day?
Thou art more lovely and more temperate:
Rough winds do shake the darling buds of May,
And summer's lease hath all too short a date:
Sometime too hot the eye of heaven shines,
And often is his gold complexion dimm'd;
And every fair from fair sometime declines,
By chance, or nature's changing course, untrimm'd;
But thy eternal summer shall not fade,
Nor lose possession of that fair thou owest;
Nor shall Death brag thou wander'st in his shade,
When in eternal lines to time thou growest:
So long as men can breathe or eyes can see,
So long lives this, and this gives life to thee.

SONNET XXIX
When, in disgrace with fortune and men's eyes,
I all alone beweep my outcast state,
And trouble deaf heaven with my bootless cries,
And look upon myself, and curse my fate,
Wishing me like to one more rich in hope,
Featured like him, like him with friends possess'd,
Desiring this man's art and that man's scope,
With what I most enjoy contented least;
Yet in these thoughts myself almost despising,
Haply I think on thee, and then my state,
Like to the lark at break of day arising
From sullen earth, sings hymns at heaven's gate;
For thy sweet love remember'd such wealth brings
That then I scorn to change my state with kings.

SONNET LXXIII
That time of year thou mayst in me behold
When yellow leaves, or none, or few, do hang
Upon those boughs which shake against the cold,
Bare ruin'd choirs, where late the sweet birds sang.
In me thou see'st the twilight of such day
As after sunset fadeth in the west,
Which by and by black night doth take away,
Death's second self, that seals up all in rest.
In me thou see'st the glowing of such fire
That on the ashes of his youth doth lie,
As the death-bed whereon it must expire,
Consumed with that which it was nourish'd by.
This thou perceivest, which makes thy love more strong,
To love that well which thou must leave ere long.

SONNET CXVI
Let me not to the marriage of true minds
Admit impediments. Love is not love
Which alters when it alteration finds,
Or bends with the remover to remove:
O no! it is an ever-fixed mark
That looks on tempests and is never shaken;
It is the star to every wandering bark,
Whose worth's unknown, although his height be taken.
Love's not Time's fool, though rosy lips and cheeks
Within his bending sickle's compass come:
Love alters not with his brief hours and weeks,
But bears it out even to the edge of doom.
If this be error and upon me proved,
I never writ, nor no man ever loved.

SONNET CXXX
My mistress' eyes are nothing like the sun;
Coral is far more red than her lips' red;
If snow be white, why then her breasts are dun;
If hairs be wires, black wires grow on her head.
I have seen roses damask'd, red and white,
But no such roses see I in her cheeks;
And in some perfumes is there more delight
Than in the breath that from my mistress reeks.
I love to hear her speak, yet well I know
That music hath a far more pleasing sound;
I grant I never saw a goddess go;
My mistress, when she walks, treads on the ground:
And yet, by heaven, I think my love as rare
As any she belied with false compare.
"""


def load_text(path=None):
    """The contents of the UTF-8 text file `path`, or `SAMPLE_TEXT` when `path` is None."""
    if path is None:
        return SAMPLE_TEXT
    path = pathlib.Path(path)
    if not path.is_file():
        raise ValueError(f"Text file {str(path)!r} does not exist; pass a path to a UTF-8 text file.")
    text = path.read_text(encoding="utf-8")
    if len(text) < 2:
        raise ValueError(f"Text file {str(path)!r} has {len(text)} characters; a language model needs at least 2.")
    return text


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class CharTokenizer:
    """Characters <-> ids over a fixed vocabulary (sorted distinct characters, nanoGPT's).

    The `keras_hub` tokenizer interface that `GPTCausalLM.generate` uses:
    `tokenize(strings)` -> id lists, `detokenize(ids)` -> string, `vocabulary_size()`.
    Serialized by its config (the vocabulary string), so it is saved with the model.

    Args:
        vocabulary: str, the characters in id order (no repeats).
    """

    serializable_by_config = True

    def __init__(self, vocabulary):
        vocabulary = str(vocabulary)
        if not vocabulary or len(set(vocabulary)) != len(vocabulary):
            raise ValueError("CharTokenizer vocabulary must be a non-empty string of distinct characters.")
        self.vocabulary = vocabulary
        self._index = {c: i for i, c in enumerate(vocabulary)}

    @classmethod
    def from_text(cls, text):
        return cls("".join(sorted(set(text))))

    def vocabulary_size(self):
        return len(self.vocabulary)

    def encode(self, text):
        """str -> int32 array of ids; an unknown character is an error naming it."""
        try:
            return np.fromiter((self._index[c] for c in text), dtype="int32", count=len(text))
        except KeyError as error:
            raise ValueError(f"Character {error.args[0]!r} is not in the tokenizer's vocabulary.") from None

    def tokenize(self, strings):
        """A string -> list of ids; a list of strings -> list of id lists."""
        if isinstance(strings, str):
            return self.encode(strings).tolist()
        return [self.encode(s).tolist() for s in strings]

    def detokenize(self, ids):
        """A list of ids -> string; a list of id lists -> list of strings."""
        ids = np.asarray(ids).tolist() if not isinstance(ids, list) else ids
        if ids and isinstance(ids[0], list):
            return [self.detokenize(row) for row in ids]
        return "".join(self.vocabulary[int(i)] for i in ids)

    def get_config(self):
        return {"vocabulary": self.vocabulary}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def split_ids(ids, train_fraction=0.9):
    """(train, valid): the first `train_fraction` of the ids and the rest (nanoGPT: 90/10)."""
    ids = np.asarray(ids, dtype="int32")
    if not 0.0 < train_fraction < 1.0:
        raise ValueError(f"train_fraction must be in (0, 1); got {train_fraction!r}.")
    n = int(len(ids) * train_fraction)
    return ids[:n], ids[n:]


class RandomWindows(EpochShuffledBatches):
    """Batches of `batch_size` windows (x, y) = (ids[o:o+T], ids[o+1:o+T+1]), offsets o shuffled per epoch.

    Every offset 0..len(ids)-T-1 is one example; each epoch visits them in a new
    order drawn from (seed, epoch) (nanoGPT draws offsets with replacement; here an
    epoch is a pass without replacement, and `steps_per_epoch` cuts it short).
    Pass `callbacks=[batches.epoch_callback()]` to `fit`.
    """

    def __init__(self, ids, sequence_length, batch_size=64, seed=0, steps_per_epoch=None, **kwargs):
        ids = np.asarray(ids, dtype="int32")
        if not isinstance(sequence_length, int) or sequence_length < 1:
            raise ValueError(f"sequence_length must be a positive int; got {sequence_length!r}.")
        offsets = len(ids) - sequence_length
        if offsets < 1:
            raise ValueError(
                f"The text has {len(ids)} tokens; windows of sequence_length {sequence_length} need at least "
                f"{sequence_length + 1}."
            )
        super().__init__(np.arange(offsets), batch_size=min(batch_size, offsets), seed=seed,
                         steps_per_epoch=steps_per_epoch, **kwargs)
        self.ids = ids
        self.sequence_length = sequence_length
        self._window = np.arange(sequence_length + 1)

    def __getitem__(self, index):
        offsets = super().__getitem__(index)  # (B,)
        windows = self.ids[offsets[:, None] + self._window[None, :]]  # (B, T + 1)
        return windows[:, :-1], windows[:, 1:]


def validation_windows(ids, sequence_length):
    """(x, y): every non-overlapping window of `ids`, shape (N, T) each, y shifted by one."""
    ids = np.asarray(ids, dtype="int32")
    n = (len(ids) - 1) // sequence_length
    if n < 1:
        raise ValueError(f"{len(ids)} validation tokens are too few for one window of {sequence_length} + 1.")
    x = ids[: n * sequence_length].reshape(n, sequence_length)
    y = ids[1 : n * sequence_length + 1].reshape(n, sequence_length)
    return x, y
