"""BERT fine-tuning inputs: raw sentences (or pairs) -> token ids, segment ids and padding mask; SST-2.

Single sentences are packed [CLS] A [SEP], pairs [CLS] A [SEP] B [SEP] with B's segment
ids 1 (Devlin et al. 2019, Sec. 3, Fig. 4), truncated round-robin to the sequence
length (keras-hub's `MultiSegmentPacker`). Runs as TensorFlow ops inside tf.data on
every Keras backend.

Example:

```python
packer = BertPacker(tokenizer, sequence_length=64)
x = packer(tf.constant(["a gripping , funny film ."]))            # single sentences
x = packer((tf.constant(["how old ?"]), tf.constant(["he is ten ."])))  # pairs
ds = classification_dataset(sentences, labels, tokenizer, sequence_length=64, batch_size=32)
```
"""

import pathlib

import numpy as np
from keras_paperzoo.optional import require_tensorflow


class BertPacker:
    """Strings (B,) or a pair of string tensors -> {"token_ids", "segment_ids", "padding_mask"} (B, T) int32."""

    def __init__(self, tokenizer, sequence_length):
        import keras_hub

        if isinstance(sequence_length, bool) or not isinstance(sequence_length, int) or sequence_length < 3:
            raise ValueError(f"sequence_length must be an int >= 3 ([CLS] A [SEP]); got {sequence_length!r}.")
        self.tokenizer = tokenizer
        self.sequence_length = sequence_length
        self.packer = keras_hub.layers.MultiSegmentPacker(
            sequence_length=sequence_length,
            start_value=tokenizer.cls_token_id,
            end_value=tokenizer.sep_token_id,
            pad_value=tokenizer.pad_token_id,
        )

    def __call__(self, texts):
        tf = require_tensorflow("BERT input packing")

        segments = texts if isinstance(texts, (tuple, list)) else (texts,)
        token_ids, segment_ids = self.packer(tuple(self.tokenizer(s) for s in segments))
        padding_mask = tf.cast(tf.not_equal(token_ids, self.tokenizer.pad_token_id), "int32")
        return {
            "token_ids": tf.cast(token_ids, "int32"),
            "segment_ids": tf.cast(segment_ids, "int32"),
            "padding_mask": padding_mask,
        }


def classification_dataset(texts, labels, tokenizer, sequence_length=128, batch_size=32, shuffle=False, seed=0,
                           drop_remainder=False):
    """A tf.data.Dataset of (x, label) batches; `texts` a list of strings or a pair of lists (sentence pairs)."""
    tf = require_tensorflow("The BERT classification pipeline (tf.data)")

    packer = BertPacker(tokenizer, sequence_length)
    texts = tuple(texts) if isinstance(texts, tuple) else texts
    labels = np.asarray(labels, dtype="int32")
    ds = tf.data.Dataset.from_tensor_slices((texts, labels))
    if shuffle:
        ds = ds.shuffle(len(labels), seed=seed, reshuffle_each_iteration=True)
    ds = ds.batch(batch_size, drop_remainder=drop_remainder)
    return ds.map(lambda t, y: (packer(t), y), num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)


def read_sst2(path):
    """(sentences, labels) of a GLUE SST-2 `.tsv` file (header `sentence<TAB>label`)."""
    path = pathlib.Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].split("\t")[:2] != ["sentence", "label"]:
        raise ValueError(f"{path} is not an SST-2 file: the header should be 'sentence<TAB>label'.")
    sentences, labels = [], []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        sentence, _, label = line.rpartition("\t")
        if label not in ("0", "1"):
            raise ValueError(f"{path} line {number}: label {label!r} should be 0 or 1.")
        sentences.append(sentence.strip())
        labels.append(int(label))
    return sentences, np.asarray(labels, dtype="int32")
