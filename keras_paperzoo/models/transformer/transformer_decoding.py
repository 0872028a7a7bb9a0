"""Greedy and beam-search decoding for `TransformerBackbone`, with cached keys and values.

The encoder runs once. The decoder then runs one position per step: each decoder layer
keeps its self-attention keys/values in a (B, 2, max_length, h, d_k) cache written at
the step's index, and the encoder-decoder attention's keys/values of the encoder output
in a (B, 2, S, h, d_k) cache computed at the first step and reused after (keras-hub's
`TransformerDecoder` cache arguments). Steps run eagerly, in keras.ops, on every backend.

Beam search is Vaswani et al. 2017 Sec. 6.1: beam size 4, length penalty alpha = 0.6,
at most input length + 50 output tokens. The length penalty is GNMT's (Wu et al. 2016,
eq. 14), lp(Y) = ((5 + |Y|) / 6)^alpha; a finished hypothesis is ranked by
log P(Y) / lp(Y). The search keeps the K best unfinished hypotheses (by log P) and the
K best finished ones (by the normalised score), as tensor2tensor's `beam_search` does,
and stops when no unfinished hypothesis can beat the best finished one (log P only falls
and lp only grows, so alive log P / lp(max_length) bounds what it can still reach).
keras-hub's `BeamSampler` has no length penalty, so the search is written here.
"""

import numpy as np
from keras import ops

NEG = -1e9  # "minus infinity" that stays finite in float32 arithmetic


def length_penalty(length, alpha):
    """GNMT's lp(Y) = ((5 + |Y|) / 6)^alpha (Wu et al. 2016, eq. 14)."""
    return ((5.0 + length) / 6.0) ** alpha


def _empty_caches(backbone, batch, max_length, source_length):
    heads = backbone.num_heads
    head_dim = backbone.hidden_dim // heads
    dtype = backbone.compute_dtype
    self_caches = [ops.zeros((batch, 2, max_length, heads, head_dim), dtype) for _ in backbone.decoder_layers]
    cross_caches = [ops.zeros((batch, 2, source_length, heads, head_dim), dtype) for _ in backbone.decoder_layers]
    return self_caches, cross_caches


def decoder_step(backbone, tokens, index, encoder_output, encoder_mask, self_caches, cross_caches, banned_ids=()):
    """One cached decoder step: (B,) tokens at position `index` -> (B, V) log-probabilities, new caches.

    `banned_ids` (the padding and start tokens when decoding) get log-probability NEG:
    they are never outputs, though label smoothing gives them some probability.
    """
    x = backbone.embed(tokens[:, None], start_index=index, training=False)  # (B, 1, d)
    new_self, new_cross = [], []
    for layer, cache, cross in zip(backbone.decoder_layers, self_caches, cross_caches):
        x, cache, cross = layer(
            x,
            encoder_output,
            encoder_padding_mask=encoder_mask,
            self_attention_cache=cache,
            self_attention_cache_update_index=index,
            cross_attention_cache=cross,
            cross_attention_cache_update_index=0 if index == 0 else None,
            training=False,
        )
        new_self.append(cache)
        new_cross.append(cross)
    logits = backbone.logits(x)[:, 0, :]  # (B, V)
    log_probs = ops.log_softmax(ops.cast(logits, "float32"), axis=-1)
    if banned_ids:
        banned = np.zeros(backbone.vocabulary_size, "float32")
        banned[list(banned_ids)] = NEG
        log_probs = log_probs + ops.convert_to_tensor(banned)[None, :]
    return log_probs, new_self, new_cross


def _prepare(backbone, encoder_token_ids, max_length, extra_length):
    ids = np.asarray(ops.convert_to_numpy(encoder_token_ids)).astype("int32")
    if ids.ndim != 2:
        raise ValueError(f"encoder_token_ids must be (batch, length); got shape {ids.shape}.")
    source_lengths = (ids != backbone.padding_id).sum(axis=1)
    length = int(source_lengths.max()) + extra_length  # Sec. 6.1: input length + 50
    if max_length is not None:
        length = min(length, int(max_length))
    if length < 1:
        raise ValueError(f"max_length must be at least 1; got {max_length}.")
    encoder_output, encoder_mask = backbone.encode(ids)
    return ids, length, encoder_output, encoder_mask


def greedy_search(backbone, encoder_token_ids, start_token_id, end_token_id, max_length=None, extra_length=50):
    """Most probable token at each step; returns (B, L) int32 numpy ids (end token included, then padding)."""
    ids, length, encoder_output, encoder_mask = _prepare(backbone, encoder_token_ids, max_length, extra_length)
    batch = ids.shape[0]
    self_caches, cross_caches = _empty_caches(backbone, batch, length, ids.shape[1])
    tokens = ops.full((batch,), start_token_id, "int32")
    finished = np.zeros(batch, bool)
    outputs = np.full((batch, length), backbone.padding_id, "int32")
    for index in range(length):
        log_probs, self_caches, cross_caches = decoder_step(
            backbone, tokens, index, encoder_output, encoder_mask, self_caches, cross_caches,
            banned_ids=(backbone.padding_id, start_token_id),
        )
        chosen = np.asarray(ops.convert_to_numpy(ops.argmax(log_probs, axis=-1))).astype("int32")  # (B,)
        chosen = np.where(finished, backbone.padding_id, chosen)
        outputs[:, index] = chosen
        finished |= chosen == end_token_id
        if finished.all():
            break
        tokens = ops.convert_to_tensor(chosen, "int32")
    return outputs


def beam_search(backbone, encoder_token_ids, start_token_id, end_token_id, beam_size=4, alpha=0.6,
                max_length=None, extra_length=50):
    """Beam search with GNMT's length penalty; returns the best hypothesis per input, (B, L) int32 numpy."""
    if not isinstance(beam_size, int) or beam_size < 1:
        raise ValueError(f"beam_size must be a positive int; got {beam_size!r}.")
    if alpha < 0:
        raise ValueError(f"length penalty alpha must be >= 0; got {alpha}.")
    ids, length, encoder_output, encoder_mask = _prepare(backbone, encoder_token_ids, max_length, extra_length)
    batch, k = ids.shape[0], beam_size
    vocab = backbone.vocabulary_size
    encoder_output = ops.repeat(encoder_output, k, axis=0)  # (B*K, S, d), beams of one input adjacent
    encoder_mask = ops.repeat(encoder_mask, k, axis=0)  # (B*K, S)
    self_caches, cross_caches = _empty_caches(backbone, batch * k, length, ids.shape[1])
    pad = backbone.padding_id
    positions = ops.arange(length)[None, None, :]  # (1, 1, L)

    alive_seqs = ops.full((batch, k, length), pad, "int32")
    # Only beam 0 is live at the start, so the first step picks K distinct tokens.
    alive_scores = ops.convert_to_tensor(np.tile([0.0] + [NEG] * (k - 1), (batch, 1)).astype("float32"))  # (B, K)
    finished_seqs = ops.full((batch, k, length), pad, "int32")
    finished_scores = ops.full((batch, k), NEG, "float32")  # normalised by lp
    tokens = ops.full((batch * k,), start_token_id, "int32")
    batch_offsets = ops.arange(batch)[:, None] * k  # (B, 1)

    def gather(x, index):  # x (B, N, ...) picked along axis 1 by index (B, M)
        index = ops.reshape(index, tuple(ops.shape(index)) + (1,) * (len(x.shape) - 2))
        return ops.take_along_axis(x, ops.broadcast_to(index, tuple(ops.shape(index)[:2]) + tuple(x.shape[2:])), axis=1)

    for index in range(length):
        log_probs, self_caches, cross_caches = decoder_step(
            backbone, tokens, index, encoder_output, encoder_mask, self_caches, cross_caches,
            banned_ids=(backbone.padding_id, start_token_id),
        )
        candidates = alive_scores[:, :, None] + ops.reshape(log_probs, (batch, k, vocab))  # (B, K, V)
        top_scores, top_index = ops.top_k(ops.reshape(candidates, (batch, k * vocab)), 2 * k)  # (B, 2K)
        parents = top_index // vocab  # (B, 2K) beam each candidate extends
        new_tokens = ops.cast(top_index % vocab, "int32")  # (B, 2K)
        candidate_seqs = gather(alive_seqs, parents)  # (B, 2K, L)
        candidate_seqs = ops.where(positions == index, new_tokens[:, :, None], candidate_seqs)
        ended = ops.equal(new_tokens, end_token_id)  # at most K of the 2K end here

        # The K best that did not end stay alive (ranked by log P).
        alive_scores, keep = ops.top_k(ops.where(ended, NEG, top_scores), k)  # (B, K)
        alive_seqs = gather(candidate_seqs, keep)
        tokens = ops.reshape(gather(new_tokens, keep), (batch * k,))
        reorder = ops.reshape(batch_offsets + gather(parents, keep), (batch * k,))
        self_caches = [ops.take(cache, reorder, axis=0) for cache in self_caches]

        # Those that ended join the finished pool, ranked by log P / lp.
        normalised = ops.where(ended, top_scores / length_penalty(index + 1, alpha), NEG)
        pool_scores = ops.concatenate([finished_scores, normalised], axis=1)  # (B, 3K)
        pool_seqs = ops.concatenate([finished_seqs, candidate_seqs], axis=1)
        finished_scores, best = ops.top_k(pool_scores, k)
        finished_seqs = gather(pool_seqs, best)

        # No alive hypothesis can reach the best finished one: stop.
        bound = ops.convert_to_numpy(alive_scores[:, 0]) / length_penalty(length, alpha)
        if np.all(ops.convert_to_numpy(finished_scores[:, 0]) >= bound):
            break

    has_finished = ops.convert_to_numpy(finished_scores[:, 0]) > NEG / 2
    finished_best = np.asarray(ops.convert_to_numpy(finished_seqs[:, 0]))
    alive_best = np.asarray(ops.convert_to_numpy(alive_seqs[:, 0]))
    return np.where(has_finished[:, None], finished_best, alive_best).astype("int32")
