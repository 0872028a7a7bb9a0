"""BERT pre-training data: WordPiece vocabulary, sentence pairs for NSP, [CLS]/[SEP] packing, MLM masking.

Devlin et al. 2019, Sec. 3.1 and App. A.1, following the reference `create_pretraining_data.py`:

1. `train_wordpiece`: a WordPiece vocabulary learned from the corpus (the paper uses a
   30,000-token vocabulary of its own corpus) with the special tokens [PAD], [UNK],
   [CLS], [SEP], [MASK]; a `keras_hub.models.BertTokenizer` over it.
2. `create_sentence_pairs`: for each document, chunks of consecutive sentences filling
   the sequence budget (with probability 0.1 a shorter random budget); a random split
   point gives segment A; 50 % of the time B is the actual continuation (IsNext,
   label 0), 50 % a span from a random other document (NotNext, label 1), the unused
   sentences going back to the document; the longer segment is truncated from a random
   end until [CLS] A [SEP] B [SEP] fits. Repeated `dupe_factor` times with other random
   choices.
3. `pack_pairs`: token ids [CLS] A [SEP] B [SEP] + padding, segment ids (0 for
   [CLS] A [SEP], 1 for B [SEP]), padding mask, NSP labels.
4. `bert_pretraining_dataset`: a `tf.data.Dataset` of (x, y) for `BertPretrainer`, with
   the masked LM choice made per batch by `keras_hub.layers.MaskedLMMaskGenerator`:
   15 % of the non-special tokens chosen (at most `max_predictions` per sequence);
   of those 80 % replaced by [MASK], 10 % by a random token, 10 % left unchanged;
   `mask_ids` are the original tokens and `mask_weights` 1 for real predictions. The
   choice is drawn again every epoch (dynamic masking); the reference code fixes
   `dupe_factor` = 10 maskings in advance.

Tokenisation and masking are TensorFlow ops run inside tf.data, on every Keras backend.

Example:

```python
documents = load_documents("sample")
tokenizer = train_wordpiece(documents, vocabulary_size=400)
ds = bert_pretraining_dataset(documents, tokenizer, sequence_length=64, batch_size=16, seed=0)
x, y = next(iter(ds))   # x: token_ids, segment_ids, padding_mask, mask_positions; y: mask_ids, ...
```
"""

import math

import numpy as np

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def train_wordpiece(documents, vocabulary_size=30000, lowercase=True):
    """A `keras_hub.models.BertTokenizer` over a WordPiece vocabulary learned from the documents' sentences."""
    import keras_hub
    import tensorflow as tf

    sentences = [sentence for document in documents for sentence in document]
    if not sentences:
        raise ValueError("train_wordpiece needs at least one sentence.")
    vocabulary = keras_hub.tokenizers.compute_word_piece_vocabulary(
        tf.data.Dataset.from_tensor_slices(sentences).batch(1024),
        vocabulary_size=vocabulary_size,
        lowercase=lowercase,
        reserved_tokens=list(SPECIAL_TOKENS),
    )
    return keras_hub.models.BertTokenizer(vocabulary=vocabulary, lowercase=lowercase)


def tokenize_documents(documents, tokenizer):
    """Each sentence as a list of token ids (empty sentences dropped), documents kept apart."""
    import tensorflow as tf

    sentences = [sentence for document in documents for sentence in document]
    ids = tokenizer(tf.constant(sentences))
    ids = ids.to_list() if hasattr(ids, "to_list") else [list(np.asarray(s)) for s in ids]  # ragged (TF) or lists
    out, start = [], 0
    for document in documents:
        out.append([s for s in ids[start:start + len(document)] if s])
        start += len(document)
    return [d for d in out if d]


def create_sentence_pairs(tokenized_documents, sequence_length, short_seq_prob=0.1, dupe_factor=1, seed=0):
    """(segment A ids, segment B ids, is_random_next) triples, the reference algorithm (see the module docstring)."""
    if sequence_length < 5:
        raise ValueError(f"sequence_length must be at least 5 ([CLS] A [SEP] B [SEP]); got {sequence_length}.")
    if len(tokenized_documents) < 2:
        raise ValueError(f"Next sentence prediction needs at least 2 documents; got {len(tokenized_documents)}.")
    rng = np.random.default_rng(seed)
    max_tokens = sequence_length - 3  # room for [CLS], [SEP], [SEP]
    pairs = []
    for _ in range(dupe_factor):
        for index, document in enumerate(tokenized_documents):
            pairs.extend(_document_pairs(tokenized_documents, index, max_tokens, short_seq_prob, rng))
    order = rng.permutation(len(pairs))
    return [pairs[i] for i in order]


def _document_pairs(documents, index, max_tokens, short_seq_prob, rng):
    document = documents[index]
    target = max_tokens if rng.random() >= short_seq_prob else int(rng.integers(2, max_tokens + 1))
    pairs, chunk, length, i = [], [], 0, 0
    while i < len(document):
        chunk.append(document[i])
        length += len(document[i])
        if i == len(document) - 1 or length >= target:
            a_end = 1 if len(chunk) < 2 else int(rng.integers(1, len(chunk)))
            tokens_a = [t for s in chunk[:a_end] for t in s]
            if len(chunk) == 1 or rng.random() < 0.5:
                is_random_next = True
                other = index
                for _ in range(10):
                    other = int(rng.integers(len(documents)))
                    if other != index:
                        break
                random_document = documents[other]
                tokens_b = []
                for sentence in random_document[int(rng.integers(len(random_document))):]:
                    tokens_b.extend(sentence)
                    if len(tokens_b) >= max(target - len(tokens_a), 1):
                        break
                i -= len(chunk) - a_end  # the unused sentences go back to the document
            else:
                is_random_next = False
                tokens_b = [t for s in chunk[a_end:] for t in s]
            _truncate_pair(tokens_a, tokens_b, max_tokens, rng)
            if tokens_a and tokens_b:
                pairs.append((tokens_a, tokens_b, is_random_next))
            chunk, length = [], 0
        i += 1
    return pairs


def _truncate_pair(tokens_a, tokens_b, max_tokens, rng):
    """Remove tokens from the longer segment, at a random end, until both fit (in place)."""
    while len(tokens_a) + len(tokens_b) > max_tokens:
        longer = tokens_a if len(tokens_a) > len(tokens_b) else tokens_b
        if rng.random() < 0.5:
            del longer[0]
        else:
            longer.pop()


def pack_pairs(pairs, sequence_length, cls_id, sep_id, pad_id):
    """NumPy arrays: token_ids, segment_ids, padding_mask (N, T) and next_sentence_labels (N,), 1 = NotNext."""
    n = len(pairs)
    token_ids = np.full((n, sequence_length), pad_id, "int32")
    segment_ids = np.zeros((n, sequence_length), "int32")
    labels = np.zeros((n,), "int32")
    for row, (a, b, is_random_next) in enumerate(pairs):
        ids = [cls_id, *a, sep_id, *b, sep_id]
        if len(ids) > sequence_length:
            raise ValueError(f"A pair of {len(ids)} tokens does not fit sequence_length {sequence_length}.")
        token_ids[row, : len(ids)] = ids
        segment_ids[row, len(a) + 2 : len(ids)] = 1  # B [SEP]
        labels[row] = int(is_random_next)
    padding_mask = (token_ids != pad_id).astype("int32")
    return {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}, labels


def masked_lm_generator(tokenizer, max_predictions, mask_selection_rate=0.15):
    """`MaskedLMMaskGenerator` with the paper's 15 % / 80-10-10 rule; special tokens are never chosen."""
    import keras_hub

    return keras_hub.layers.MaskedLMMaskGenerator(
        vocabulary_size=tokenizer.vocabulary_size(),
        mask_selection_rate=mask_selection_rate,
        mask_token_id=tokenizer.mask_token_id,
        mask_selection_length=max_predictions,
        unselectable_token_ids=[tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id],
        mask_token_rate=0.8,
        random_token_rate=0.1,
    )


def bert_pretraining_dataset(documents, tokenizer, sequence_length=128, batch_size=32, max_predictions=None,
                             dupe_factor=1, short_seq_prob=0.1, shuffle=True, seed=0, repeat=False):
    """A `tf.data.Dataset` of (x, y) batches for `BertPretrainer` (see the module docstring).

    Args:
        documents: list of documents, each a list of sentence strings.
        tokenizer: a `keras_hub.models.BertTokenizer` (e.g. from `train_wordpiece`).
        sequence_length: T (128 for 90 % of the paper's steps, 512 for the rest).
        max_predictions: masked positions per sequence, M; default ceil(0.15 T) (the
            reference uses 20 for T = 128).
        dupe_factor: passes over the corpus with different pair choices.

    Returns:
        The dataset; its `num_pairs` attribute counts the sentence pairs of one pass.
    """
    import tensorflow as tf

    if max_predictions is None:
        max_predictions = math.ceil(0.15 * sequence_length)
    tokenized = tokenize_documents(documents, tokenizer)
    pairs = create_sentence_pairs(tokenized, sequence_length, short_seq_prob, dupe_factor, seed)
    inputs, labels = pack_pairs(pairs, sequence_length, tokenizer.cls_token_id, tokenizer.sep_token_id,
                                tokenizer.pad_token_id)
    masker = masked_lm_generator(tokenizer, max_predictions)

    def mask(batch, next_sentence_labels):
        masked = masker(batch["token_ids"])  # token_ids, mask_positions, mask_ids, mask_weights
        x = {
            "token_ids": masked["token_ids"],
            "segment_ids": batch["segment_ids"],
            "padding_mask": batch["padding_mask"],
            "mask_positions": tf.cast(masked["mask_positions"], "int32"),
        }
        y = {
            "mask_ids": tf.cast(masked["mask_ids"], "int32"),
            "mask_weights": tf.cast(masked["mask_weights"], "float32"),
            "next_sentence_labels": next_sentence_labels,
        }
        return x, y

    ds = tf.data.Dataset.from_tensor_slices((inputs, labels))
    if shuffle:
        ds = ds.shuffle(len(labels), seed=seed, reshuffle_each_iteration=True)
    if repeat:
        ds = ds.repeat()
    ds = ds.batch(batch_size, drop_remainder=True).map(mask, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.prefetch(tf.data.AUTOTUNE)
    ds.num_pairs = len(labels)
    return ds
