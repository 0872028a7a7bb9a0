"""Parallel text for translation: reading sentence pairs, and batches for a seq2seq model.

- `read_lines(path)`: one sentence per line, plain or gzip.
- `load_multi30k(folder, split)`: Multi30k task 1 (Elliott et al. 2016) German/English,
  `train`, `val` or `test_2016_flickr`, files `SPLIT.de(.gz)` / `SPLIT.en(.gz)`.
- `encode_pairs(tokenizer, sources, targets, ...)`: token ids of each pair: the source
  ending with the end token, the decoder input starting with the start token, the labels
  ending with the end token (teacher forcing).
- `translation_batches(...)`: a `tf.data.Dataset` of `({"encoder_token_ids",
  "decoder_token_ids"}, labels)` batches. Pairs are grouped by length into a few
  buckets and padded to the bucket's length, as the paper batches "by approximate
  sequence length" (Sec. 5.1); a few fixed shapes also keep JAX from recompiling.
"""

import gzip
import pathlib

import numpy as np
from keras_paperzoo.optional import require_tensorflow

MULTI30K_SPLITS = ("train", "val", "test_2016_flickr")
DEFAULT_BUCKETS = (16, 32, 64)


def read_lines(path):
    """Lines of a text file (gzip if it ends with .gz), without their newline."""
    path = pathlib.Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def _find(folder, stem):
    for name in (f"{stem}.gz", stem):
        if (folder / name).is_file():
            return folder / name
    raise FileNotFoundError(f"No {stem} or {stem}.gz in {folder}.")


def load_multi30k(folder, split="train", source="de", target="en"):
    """(source sentences, target sentences) of a Multi30k split from `folder`."""
    if split not in MULTI30K_SPLITS:
        raise ValueError(f"Unknown Multi30k split {split!r}; available: {', '.join(MULTI30K_SPLITS)}.")
    folder = pathlib.Path(folder)
    sources = read_lines(_find(folder, f"{split}.{source}"))
    targets = read_lines(_find(folder, f"{split}.{target}"))
    if len(sources) != len(targets):
        raise ValueError(f"Multi30k {split}: {len(sources)} {source} lines but {len(targets)} {target} lines.")
    return sources, targets


def _lists(ids):
    if hasattr(ids, "to_list"):
        return ids.to_list()
    return [list(row) for row in ids]


def encode_pairs(tokenizer, sources, targets, start_token_id=2, end_token_id=3, max_length=64):
    """Token ids of each pair, truncated so that every sequence has at most `max_length` ids.

    Returns three lists of int lists: sources (ids + [end]), decoder inputs ([start] + ids),
    labels (ids + [end]).
    """
    if len(sources) != len(targets):
        raise ValueError(f"encode_pairs needs aligned pairs; got {len(sources)} sources and {len(targets)} targets.")
    source_ids = _lists(tokenizer.tokenize(list(sources)))
    target_ids = _lists(tokenizer.tokenize(list(targets)))
    keep = max_length - 1
    encoder = [list(map(int, s[:keep])) + [end_token_id] for s in source_ids]
    decoder = [[start_token_id] + list(map(int, t[:keep])) for t in target_ids]
    labels = [list(map(int, t[:keep])) + [end_token_id] for t in target_ids]
    return encoder, decoder, labels


def _pad(rows, length, padding_id):
    out = np.full((len(rows), length), padding_id, "int32")
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


def translation_batches(encoded, batch_size, buckets=DEFAULT_BUCKETS, shuffle=True, seed=0,
                        drop_remainder=True, padding_id=0):
    """A `tf.data.Dataset` of padded batches from `encode_pairs` output, bucketed by length.

    Each pair goes to the first bucket that holds its longer side; the batches of all
    buckets are shuffled together (a new order each epoch when `shuffle`). Pairs longer
    than the largest bucket are an error (choose `max_length` in `encode_pairs`).

    Example:

    ```python
    encoded = encode_pairs(tokenizer, german, english, max_length=64)
    dataset = translation_batches(encoded, batch_size=64)
    translator.fit(dataset, epochs=10)
    ```
    """
    tf = require_tensorflow("The translation input pipeline (tf.data)")

    encoder, decoder, labels = encoded
    buckets = sorted(int(b) for b in buckets)
    lengths = np.array([max(len(e), len(d)) for e, d in zip(encoder, decoder)])
    if lengths.size == 0:
        raise ValueError("translation_batches needs at least one pair.")
    if lengths.max() > buckets[-1]:
        raise ValueError(
            f"A pair has {lengths.max()} tokens, more than the largest bucket {buckets[-1]}; "
            "encode with a smaller max_length or add a bucket."
        )
    rng = np.random.default_rng(seed)
    datasets, low = [], 0
    for bucket in buckets:
        index = np.flatnonzero((lengths > low) & (lengths <= bucket))
        low = bucket
        if shuffle:
            index = rng.permutation(index)
        if len(index) == 0 or (drop_remainder and len(index) < batch_size):
            continue
        x = {
            "encoder_token_ids": _pad([encoder[i] for i in index], bucket, padding_id),
            "decoder_token_ids": _pad([decoder[i] for i in index], bucket, padding_id),
        }
        y = _pad([labels[i] for i in index], bucket, padding_id)
        ds = tf.data.Dataset.from_tensor_slices((x, y))
        if shuffle:
            ds = ds.shuffle(len(index), seed=int(rng.integers(2**31)), reshuffle_each_iteration=True)
        datasets.append(ds.batch(batch_size, drop_remainder=drop_remainder))
    if not datasets:
        raise ValueError(f"No bucket has a full batch of {batch_size} pairs; use a smaller batch size.")
    dataset = datasets[0]
    for ds in datasets[1:]:
        dataset = dataset.concatenate(ds)
    if shuffle:
        num_batches = int(sum(int(d.cardinality()) for d in datasets))
        dataset = dataset.shuffle(num_batches, seed=int(rng.integers(2**31)), reshuffle_each_iteration=True)
    return dataset.prefetch(2)
