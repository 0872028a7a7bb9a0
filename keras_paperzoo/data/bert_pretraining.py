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
4. `mask_tokens`: the masked LM choice, as the reference `create_masked_lm_predictions`:
   round(15 %) of the non-special tokens chosen (at least 1, at most `max_predictions`);
   of those 80 % replaced by [MASK], 10 % by a random token, 10 % left unchanged;
   `mask_ids` are the original tokens and `mask_weights` 1 for real predictions.
5. `bert_pretraining_dataset`: a `tf.data.Dataset` of (x, y) for `BertPretrainer`. Every
   epoch is masked and shuffled again (dynamic masking; the reference code fixes
   `dupe_factor` = 10 maskings in advance), in NumPy by a generator keyed on
   (seed, epoch) (`epoch_examples`): the same seed gives the same masks run after run,
   whatever tf.data's parallelism, and each example's masks depend only on (seed, epoch,
   its index). One vectorised draw per epoch, a fraction of a millisecond per batch.

Tokenisation runs as TensorFlow ops, masking in NumPy, on every Keras backend.

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
from keras_paperzoo.optional import require_tensorflow

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def train_wordpiece(documents, vocabulary_size=30000, lowercase=True):
    """A `keras_hub.models.BertTokenizer` over a WordPiece vocabulary learned from the documents' sentences."""
    import keras_hub

    tf = require_tensorflow("Training a WordPiece vocabulary")

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
    tf = require_tensorflow("BERT pre-training data")

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


def mask_tokens(token_ids, rng, vocabulary_size, mask_token_id, special_ids, max_predictions,
                mask_selection_rate=0.15, mask_token_rate=0.8, random_token_rate=0.1):
    """The masked LM choice for a batch of packed sequences, drawn from a NumPy generator (Sec. 3.1, App. A.1).

    As the reference `create_masked_lm_predictions`: per sequence, round(15 %) of the
    non-special tokens (at least 1, at most `max_predictions`) are chosen uniformly
    without replacement; each chosen token is replaced by [MASK] with probability 0.8,
    by a token drawn uniformly from the whole vocabulary with probability 0.1, and left
    unchanged otherwise. The reference counts 15 % of all tokens, [CLS] and [SEP]
    included; here of the selectable ones (as keras-hub's `MaskedLMMaskGenerator`).

    Args:
        token_ids: (N, T) int array of packed sequences ([CLS] A [SEP] B [SEP] + padding).
        rng: a `numpy.random.Generator`; the same generator state gives the same masks.
        special_ids: ids never chosen ([CLS], [SEP], [PAD]).
        max_predictions: M, the number of prediction slots per sequence.

    Returns:
        dict of `token_ids` (N, T) with the replacements, `mask_positions` (N, M) int32
        (ascending, padded with 0), `mask_ids` (N, M) int32 (the original tokens, 0 in
        padding slots) and `mask_weights` (N, M) float32 (1 for real predictions).
    """
    token_ids = np.asarray(token_ids)
    if token_ids.ndim != 2:
        raise ValueError(f"mask_tokens needs token_ids of shape (N, T); got shape {token_ids.shape}.")
    if not 1 <= max_predictions <= token_ids.shape[1]:
        raise ValueError(f"max_predictions must be in [1, T={token_ids.shape[1]}]; got {max_predictions}.")
    n, length = token_ids.shape
    selectable = ~np.isin(token_ids, np.asarray(special_ids))  # (N, T)
    counts = selectable.sum(1)  # (N,)
    num_predict = np.minimum(np.maximum(np.rint(counts * mask_selection_rate), 1), max_predictions)
    num_predict = np.minimum(num_predict, counts).astype("int64")  # (N,) a sequence of specials only: none
    scores = np.where(selectable, rng.random((n, length)), np.inf)  # (N, T) special positions sort last
    order = np.argsort(scores, axis=1, kind="stable")[:, :max_predictions]  # (N, M) a random order of candidates
    weights = np.arange(max_predictions)[None, :] < num_predict[:, None]  # (N, M)
    positions = np.sort(np.where(weights, order, length), axis=1)  # (N, M) chosen ascending, padding slots last
    weights = positions < length
    positions = np.where(weights, positions, 0).astype("int32")
    rows = np.arange(n)[:, None]
    original = token_ids[rows, positions]  # (N, M)
    draw = rng.random((n, max_predictions))  # 80 / 10 / 10
    random_tokens = rng.integers(0, vocabulary_size, size=(n, max_predictions))
    replacement = np.where(draw < mask_token_rate, mask_token_id,
                           np.where(draw < mask_token_rate + random_token_rate, random_tokens, original))
    masked = token_ids.copy()
    chosen_rows, chosen_slots = np.nonzero(weights)
    masked[chosen_rows, positions[chosen_rows, chosen_slots]] = replacement[chosen_rows, chosen_slots]
    return {
        "token_ids": masked.astype("int32"),
        "mask_positions": positions,
        "mask_ids": np.where(weights, original, 0).astype("int32"),
        "mask_weights": weights.astype("float32"),
    }


def epoch_examples(inputs, labels, epoch, seed, mask_kwargs, shuffle=True):
    """One epoch's (x, y) arrays: examples permuted and masked by a generator keyed on (seed, epoch).

    The masks of example i (in corpus order) depend only on (seed, epoch, i) and the
    corpus, not on batching, threads or the backend: the same seed gives the same
    masks every run, another epoch gives new ones (dynamic masking).
    """
    rng = np.random.default_rng([seed, epoch])
    masked = mask_tokens(inputs["token_ids"], rng, **mask_kwargs)
    order = rng.permutation(len(labels)) if shuffle else np.arange(len(labels))
    x = {
        "token_ids": masked["token_ids"][order],
        "segment_ids": inputs["segment_ids"][order],
        "padding_mask": inputs["padding_mask"][order],
        "mask_positions": masked["mask_positions"][order],
    }
    y = {
        "mask_ids": masked["mask_ids"][order],
        "mask_weights": masked["mask_weights"][order],
        "next_sentence_labels": labels[order],
    }
    return x, y


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
        seed: the sentence pairs, the order and the masks of every epoch (`epoch_examples`).
        repeat: epochs without end (epoch e masked and ordered by (seed, e)).

    Returns:
        The dataset; its `num_pairs` attribute counts the sentence pairs of one pass.
    """
    tf = require_tensorflow("BERT pre-training data")

    if max_predictions is None:
        max_predictions = math.ceil(0.15 * sequence_length)
    tokenized = tokenize_documents(documents, tokenizer)
    pairs = create_sentence_pairs(tokenized, sequence_length, short_seq_prob, dupe_factor, seed)
    inputs, labels = pack_pairs(pairs, sequence_length, tokenizer.cls_token_id, tokenizer.sep_token_id,
                                tokenizer.pad_token_id)
    mask_kwargs = dict(
        vocabulary_size=tokenizer.vocabulary_size(), mask_token_id=tokenizer.mask_token_id,
        special_ids=[tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id],
        max_predictions=max_predictions,
    )
    x_names = ("token_ids", "segment_ids", "padding_mask", "mask_positions")
    y_names = ("mask_ids", "mask_weights", "next_sentence_labels")
    dtypes = [tf.int32] * 4 + [tf.int32, tf.float32, tf.int32]
    widths = [sequence_length] * 3 + [max_predictions] * 3 + [None]

    def one_epoch(epoch):  # NumPy, so the draws do not depend on tf.data's threads
        x, y = epoch_examples(inputs, labels, int(epoch), seed, mask_kwargs, shuffle)
        return [x[k] for k in x_names] + [y[k] for k in y_names]

    def to_tensors(epoch):
        arrays = tf.numpy_function(one_epoch, [epoch], dtypes, stateful=False)
        for array, width in zip(arrays, widths):
            array.set_shape((None,) if width is None else (None, width))
        return tf.data.Dataset.from_tensor_slices(
            (dict(zip(x_names, arrays[:4])), dict(zip(y_names, arrays[4:])))
        )

    epochs = tf.data.Dataset.range(2**62 if repeat else 1)
    ds = epochs.flat_map(to_tensors).batch(batch_size, drop_remainder=True).prefetch(tf.data.AUTOTUNE)
    ds.num_pairs = len(labels)
    return ds
