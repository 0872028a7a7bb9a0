"""Hugging Face transformers training steps for BERT-base pre-training and GPT-2 small: the
reference for the `lm` family.

Both models are built from their configs with random weights (no download), fp32, in
training mode (every dropout on), with torch's AdamW; the step computes what
keras-paperzoo's `BertPretrainer` and `GPTCausalLM` compute in their `fit()` step:

- **BERT** (`transformers.BertForPreTraining(BertConfig())`: 12 x 768, 12 heads, 3072,
  exact GELU, dropout 0.1 on embeddings, attention probabilities and sub-layer outputs,
  LayerNorm eps 1e-12, MLM decoder tied to the token embedding). Inputs: token ids,
  segment ids, an all-ones attention mask and M chosen positions per sequence.
  `mlm="gathered"` (default): `model.bert(...)`, gather the M chosen positions, then
  `model.cls.predictions` (transform dense + GELU + LayerNorm + tied decoder + bias) on
  those B x M states only, `model.cls.seq_relationship` on the pooled output; loss =
  mean MLM cross-entropy over the chosen positions + mean NSP cross-entropy. That is
  the BERT reference code's `gather_indexes` and keras-paperzoo's `MaskedLMHead(...,
  mask_positions)`. `mlm="full"`: the stock `BertForPreTraining(..., labels,
  next_sentence_label)` forward, which runs the MLM head on all B x T positions and
  ignores the unchosen ones in the loss (-100): the same loss, 22 % more FLOPs at
  T = 128, M = 20 (the head's 2 (D^2 + V D) per position on 108 more positions per
  sequence).
  Optimizer: AdamW(lr 1e-4, betas (0.9, 0.999), eps 1e-6, weight decay 0.01 except
  biases and LayerNorm) after clipping the gradients to global norm 1.0, as
  `BertPretrainer.compile()`'s `SelectiveDecayAdamW(global_clipnorm=1.0)` (the BERT
  reference code's clipping).
- **GPT-2** (`transformers.GPT2LMHeadModel(GPT2Config())`: 12 x 768, 12 heads, 1024
  positions, gelu_new, dropout 0.1 in the same three places, tied LM head). Input
  x = ids[:, :-1] (B, T); logits = model(x).logits (B, T, V); loss = mean token
  cross-entropy against y = ids[:, 1:], as `GPTCausalLM`'s compiled loss (the stock
  `labels=` path would shift inside and score T - 1 positions). Optimizer:
  AdamW(lr 2.5e-4, betas (0.9, 0.999), eps 1e-8, weight decay 0.01 except biases and
  LayerNorm), as `GPTCausalLM.compile()`'s.

The learning rates stay constant here (the Keras side runs its warmup schedule; a
schedule costs nothing measurable). The attention implementation is transformers'
default for the installed version (recorded by `describe`).

Timed on its own: `python -m benchmarks lm --models gpt2_small --runs torch_reference`.
"""

import contextlib

import numpy as np
import torch
from torch.nn import functional as F

from .steps import count_params

BERT_MASKED_POSITIONS = 20  # max_predictions_per_seq of the BERT reference code at T = 128


def build(family, vocabulary_size=None, num_layers=12, hidden_dim=768, num_heads=12, intermediate_dim=3072,
          max_sequence_length=None, **_):
    """A fresh transformers model of `family` ("bert" or "gpt") in training mode, random weights.

    The defaults are `BertConfig()` / `GPT2Config()` (BERT-base, GPT-2 small); the
    arguments use `flops.LM_MODELS`'s names.
    """
    import transformers

    if family == "bert":
        config = transformers.BertConfig(
            vocab_size=vocabulary_size or 30522, hidden_size=hidden_dim, num_hidden_layers=num_layers,
            num_attention_heads=num_heads, intermediate_size=intermediate_dim,
            max_position_embeddings=max_sequence_length or 512)
        model = transformers.BertForPreTraining(config)
    elif family == "gpt":
        config = transformers.GPT2Config(
            vocab_size=vocabulary_size or 50257, n_positions=max_sequence_length or 1024, n_embd=hidden_dim,
            n_layer=num_layers, n_head=num_heads, n_inner=intermediate_dim)
        model = transformers.GPT2LMHeadModel(config)
    else:
        raise ValueError(f"family must be 'bert' or 'gpt'; got {family!r}.")
    return model.train()


def describe(model):
    import transformers

    config = model.config
    return (f"transformers {transformers.__version__} {type(model).__name__}({type(config).__name__}("
            f"hidden {config.hidden_size}, layers {config.num_hidden_layers}, vocab {config.vocab_size})), "
            f"attn_implementation={config._attn_implementation!r}")


def no_decay(name, param):
    """Biases and LayerNorm parameters get no weight decay (rank <= 1, as SelectiveDecayAdamW)."""
    return param.ndim <= 1


def make_optimizer(model, lr, eps, weight_decay=0.01):
    decay = [p for n, p in model.named_parameters() if not no_decay(n, p)]
    other = [p for n, p in model.named_parameters() if no_decay(n, p)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": weight_decay},
                             {"params": other, "weight_decay": 0.0}], lr=lr, betas=(0.9, 0.999), eps=eps)
    return opt, (f"AdamW(lr={lr:g}, betas=(0.9, 0.999), eps={eps:g}, weight_decay={weight_decay:g} "
                 "except biases and LayerNorm)")


def bert_batches(n, seq_len, vocab, masked, seed=0):
    """Random pre-training inputs for n sequences, NumPy (the same arrays the Keras side gets).

    Returns (x, y): x = {token_ids, segment_ids, padding_mask, mask_positions}, y =
    {mask_ids, mask_weights, next_sentence_labels}; segment 0 for the first half, 1 after;
    `masked` distinct sorted positions in 1..T-1 per sequence.
    """
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(0, vocab, size=(n, seq_len)).astype("int32")  # (n, T)
    segment_ids = np.zeros((n, seq_len), "int32")
    segment_ids[:, seq_len // 2:] = 1
    positions = np.sort(np.stack([rng.choice(np.arange(1, seq_len), masked, replace=False)
                                  for _ in range(n)]), axis=1).astype("int32")  # (n, M)
    x = {"token_ids": token_ids, "segment_ids": segment_ids,
         "padding_mask": np.ones((n, seq_len), "int32"), "mask_positions": positions}
    y = {"mask_ids": rng.integers(0, vocab, size=(n, masked)).astype("int32"),
         "mask_weights": np.ones((n, masked), "float32"),
         "next_sentence_labels": rng.integers(0, 2, size=(n,)).astype("int32")}
    return x, y


def gpt_batches(n, seq_len, vocab, seed=0):
    """(x, y) = (ids[:, :-1], ids[:, 1:]) of n random sequences of seq_len + 1 tokens, NumPy int32."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, vocab, size=(n, seq_len + 1)).astype("int32")  # (n, T + 1)
    return ids[:, :-1], ids[:, 1:]


def make_bert_step(model, mlm="gathered", autocast=contextlib.nullcontext):
    """(step(batch) -> detached loss, optimizer description); batch = torch tensors of `bert_batches`.

    `autocast`: a context-manager factory around the forward pass and loss, e.g.
    `lambda: torch.autocast("cuda", torch.bfloat16)` for mixed precision (the `gpu` family).
    """
    if mlm not in ("gathered", "full"):
        raise ValueError(f"mlm must be 'gathered' or 'full'; got {mlm!r}.")
    opt, description = make_optimizer(model, 1e-4, 1e-6)
    vocab = model.config.vocab_size

    def loss_of(x, y):
        ids, seg, att, pos = (x["token_ids"], x["segment_ids"], x["padding_mask"], x["mask_positions"])
        weights = y["mask_weights"]
        if mlm == "gathered":
            seq, pooled = model.bert(input_ids=ids, attention_mask=att, token_type_ids=seg, return_dict=False)[:2]
            chosen = torch.gather(seq, 1, pos[:, :, None].expand(-1, -1, seq.shape[-1]))  # (B, M, H)
            mlm_logits = model.cls.predictions(chosen)  # (B, M, V)
            nsp_logits = model.cls.seq_relationship(pooled)  # (B, 2)
            per_token = F.cross_entropy(mlm_logits.reshape(-1, vocab), y["mask_ids"].reshape(-1),
                                        reduction="none")  # (B M,)
            mlm_loss = (per_token * weights.reshape(-1)).sum() / weights.sum().clamp(min=1.0)
            return mlm_loss + F.cross_entropy(nsp_logits, y["next_sentence_labels"])
        labels = torch.full_like(ids, -100)
        labels.scatter_(1, pos, y["mask_ids"])  # chosen positions keep their target
        return model(input_ids=ids, attention_mask=att, token_type_ids=seg, labels=labels,
                     next_sentence_label=y["next_sentence_labels"]).loss

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        with autocast():
            loss = loss_of(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.detach()

    return step, description


def make_gpt_step(model, autocast=contextlib.nullcontext):
    """(step(x, y) -> detached loss, optimizer description); `autocast` as `make_bert_step`'s."""
    opt, description = make_optimizer(model, 2.5e-4, 1e-8)
    vocab = model.config.vocab_size

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        with autocast():
            logits = model(input_ids=x).logits  # (B, T, V)
            loss = F.cross_entropy(logits.reshape(-1, vocab).float(), y.reshape(-1))
        loss.backward()
        opt.step()
        return loss.detach()

    return step, description


def to_torch(tree):
    """NumPy int32 arrays -> int64 torch tensors (index dtype), float arrays stay float32."""
    if isinstance(tree, dict):
        return {k: to_torch(v) for k, v in tree.items()}
    if isinstance(tree, tuple):
        return tuple(to_torch(v) for v in tree)
    t = torch.from_numpy(np.ascontiguousarray(tree))
    return t.long() if t.dtype == torch.int32 else t
