"""The GPT causal language model: pre-training objective (GPT-1 eq. 1) and generation."""

import numpy as np

import keras
from keras import ops

import keras_hub

from keras_paperzoo.data.checks import check_sequence_length, check_token_ids
from keras_paperzoo.models.gpt.gpt_backbone import GPTBackbone
from keras_paperzoo.models.trainer import Trainer
from keras_paperzoo.training.schedules import LinearRamp, WarmupCosineDecay
from keras_paperzoo.training.selective_decay import SelectiveDecayAdamW


def paper_optimizer(total_steps=None, warmup_steps=2000, peak_learning_rate=2.5e-4, weight_decay=0.01):
    """GPT-1 pre-training's optimizer (Radford et al. 2018, Sec. 4.1 "Model specifications").

    "Adam ... with a max learning rate of 2.5e-4. The learning rate was increased
    linearly from zero over the first 2000 updates and annealed to 0 using a cosine
    schedule", with "a modified version of L2 regularization ... w = 0.01 on all non
    bias or gain weights" (decoupled weight decay, AdamW, Loshchilov & Hutter):
    `SelectiveDecayAdamW` without decay on biases and LayerNorm gains.

    Args:
        total_steps: the run length in updates, where the cosine reaches 0. None: warmup
            then constant (the paper's 100 epochs of BooksCorpus set no number we can
            reuse; give your run's length).
        warmup_steps: 2000 in the paper; capped at a tenth of `total_steps` for short runs.

    The GPT-2 paper names no optimizer beyond "the learning rate of each model was
    manually tuned"; GPT-1's recipe is the default for both.
    """
    if total_steps is None:
        schedule = LinearRamp(0.0, peak_learning_rate, max(1, int(warmup_steps)))
    else:
        total_steps = int(total_steps)
        if total_steps < 1:
            raise ValueError(f"total_steps must be a positive number of updates; got {total_steps}.")
        warmup = min(int(warmup_steps), total_steps // 10)
        schedule = WarmupCosineDecay(peak_learning_rate, warmup_steps=warmup, total_steps=total_steps)
    return SelectiveDecayAdamW(schedule, weight_decay=weight_decay)


def _to_list(ids):
    """Token ids from a tokenizer (list, array, tf.RaggedTensor, tensor) -> list of Python int lists."""
    if hasattr(ids, "to_list"):
        return ids.to_list()
    if isinstance(ids, (list, tuple)) and (not ids or isinstance(ids[0], (list, tuple, np.ndarray))):
        return [list(np.asarray(row).tolist()) for row in ids]
    return np.asarray(ops.convert_to_numpy(ids)).tolist()


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class GPTCausalLM(Trainer, keras.Model):
    """Next-token prediction with a `GPTBackbone`: token ids (B, T) -> logits (B, T, V).

    Pre-training objective, GPT-1 eq. (1): L_1(U) = sum_i log P(u_i | u_{i-k}, ..., u_{i-1});
    the logits are h_n W_e^T with the tied token embedding (eq. 2). Train on
    `(x, y) = (ids[:, :-1], ids[:, 1:])` (see `keras_paperzoo.data.char_text`): the
    compiled loss is the mean token cross-entropy (nats), `weighted_metrics` the
    next-token accuracy. `compile()` with no arguments gives GPT-1's optimizer
    (`paper_optimizer`); pass `total_steps` to anneal over your run.

    Generation (`generate`) uses `keras_hub.samplers` ("greedy", "top_k", "top_p",
    "beam", "random", or a sampler object) and a key/value cache: the prompt is run
    once to fill the cache, then one position per step (`GPTBackbone.call_with_cache`).
    The step loop is compiled by keras-hub's `CausalLM.make_generate_function`
    (XLA on JAX and TensorFlow, `no_grad` on PyTorch), borrowed as a method: the
    model itself is a plain functional `keras.Model` (keras-hub's `Task` base would
    route `fit` through its tf.data preprocessing pipeline, which mishandles a
    `PyDataset`).

    Args:
        backbone: a `GPTBackbone`.
        tokenizer: optional, anything with `tokenize(strings)` and
            `detokenize(ids)` (`keras_paperzoo.data.char_text.CharTokenizer`, a
            `keras_hub.tokenizers.BytePairTokenizer`); then `generate` takes and returns
            strings. Saved with the model when it is serializable by its config
            (`CharTokenizer`); a byte-pair tokenizer (vocabulary files) must be attached
            again after loading.

    Example:

    ```python
    lm = GPTCausalLM(GPTBackbone.from_preset("gpt_char_tiny"))
    lm.compile(total_steps=1000)
    lm.fit(x=ids[:, :-1], y=ids[:, 1:], batch_size=64)
    lm.generate([[1, 2, 3]], max_length=20, sampler="top_k")   # token ids in and out
    ```
    """

    backbone_class = GPTBackbone
    make_generate_function = keras_hub.models.CausalLM.make_generate_function

    def __init__(self, backbone, tokenizer=None, **kwargs):
        if not isinstance(backbone, GPTBackbone):
            raise ValueError(f"GPTCausalLM needs a GPTBackbone; got {type(backbone).__name__}.")
        # === Functional Model ===
        token_ids = keras.Input((None,), dtype="int32", name="token_ids")
        hidden = backbone(token_ids)  # h_n, (B, T, D)
        logits = backbone.token_embedding(hidden, reverse=True)  # h_n W_e^T, (B, T, V)
        super().__init__(inputs=token_ids, outputs=logits, **kwargs)
        # === Layers and config ===
        self.backbone = backbone
        object.__setattr__(self, "tokenizer", tokenizer)  # not a tracked layer: no weights
        self.sampler = keras_hub.samplers.get("top_k")
        self.generate_function = None

    # --- compile with the paper's defaults ---------------------------------------------
    def paper_optimizer(self, total_steps=None, warmup_steps=2000, peak_learning_rate=2.5e-4, weight_decay=0.01):
        """GPT-1's optimizer (module `paper_optimizer`); pass `total_steps` to anneal over your run."""
        return paper_optimizer(total_steps, warmup_steps, peak_learning_rate, weight_decay)

    def paper_loss(self):
        return keras.losses.SparseCategoricalCrossentropy(from_logits=True)  # token cross-entropy, nats

    def compile(self, optimizer=None, loss=None, weighted_metrics="auto", sampler="top_k", **kwargs):
        """`Trainer.compile` (GPT-1's optimizer and token cross-entropy when omitted), plus:

        Args:
            weighted_metrics: "auto" (default): next-token accuracy, weighted by the
                `fit` sample weights (padding masks).
            sampler: the `keras_hub.samplers` name or object `generate` uses by default.
            optimizer, loss: "auto" is accepted for None (the paper's).
        """
        optimizer = None if isinstance(optimizer, str) and optimizer == "auto" else optimizer
        loss = None if isinstance(loss, str) and loss == "auto" else loss
        if isinstance(weighted_metrics, str) and weighted_metrics == "auto":
            weighted_metrics = [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]
        super().compile(optimizer=optimizer, loss=loss, weighted_metrics=weighted_metrics, **kwargs)
        self.sampler = keras_hub.samplers.get(sampler) if isinstance(sampler, (str, dict)) else sampler
        self.generate_function = None

    def check_inputs(self, x, y, batch_size=None, examples=None, drop_remainder=False):
        """Token ids of x and y in [0, vocabulary_size), sequences at most max_sequence_length (`Trainer.fit`).

        On JAX an id out of range is clamped by the embedding and a target equal to the
        vocabulary size gives loss 0; -1 reads the last row everywhere.
        """
        for name, ids in (("x", x), ("y", y)):
            if isinstance(ids, np.ndarray):
                check_token_ids(ids, self.backbone.vocabulary_size, name)
                check_sequence_length(ids, self.backbone.max_sequence_length, name, "the GPT backbone's")

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The compiled loss; token cross-entropy is taken on (B T, V) logits, the same mean.

        Keras's torch backend computes sparse cross-entropy of (B, T, V) logits with the
        class axis moved to position 1, a strided log-softmax: 2.3x the time of the
        contiguous (B T, V) one at GPT-2's vocabulary (`benchmarks/FINDINGS.md`).
        """
        if isinstance(self.loss, keras.losses.SparseCategoricalCrossentropy) and y is not None \
                and y_pred is not None and len(y_pred.shape) == 3:
            y_pred = ops.reshape(y_pred, (-1, ops.shape(y_pred)[-1]))  # (B T, V)
            y = ops.reshape(y, (-1,))
            sample_weight = None if sample_weight is None else ops.reshape(sample_weight, (-1,))
        return super().compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=training)

    def get_config(self):
        """`Trainer.get_config`, with the tokenizer only when it is serializable by its config
        (`CharTokenizer`); a byte-pair tokenizer's vocabulary files are not in the config."""
        config = super().get_config()
        if not getattr(self.tokenizer, "serializable_by_config", False):
            config["tokenizer"] = None
        return config

    # --- generation with a key/value cache ------------------------------------------
    def call_with_cache(self, token_ids, cache, cache_update_index):
        """(logits (B, t, V), hidden (B, t, D), cache) for `token_ids` at `cache_update_index`."""
        hidden, cache = self.backbone.call_with_cache(token_ids, cache, cache_update_index)
        return self.backbone.token_embedding(hidden, reverse=True), hidden, cache

    def generate_step(self, inputs, stop_token_ids=None):
        """One compiled batch: {"token_ids", "padding_mask"} (B, L), prompts right-padded -> the same, completed."""
        token_ids, padding_mask = inputs["token_ids"], inputs["padding_mask"]
        batch_size, max_length = ops.shape(token_ids)[0], ops.shape(token_ids)[1]
        cache = self.backbone.empty_cache(batch_size, max_length)
        _, hidden, cache = self.call_with_cache(token_ids, cache, 0)  # prompts into the cache
        index = ops.min(ops.sum(ops.cast(padding_mask, "int32"), axis=-1))  # first position to generate

        def next(prompt, cache, index):
            step = ops.slice(prompt, [0, index - 1], [ops.shape(prompt)[0], 1])  # (B, 1), the last known token
            logits, hidden, cache = self.call_with_cache(step, cache, index - 1)
            return ops.squeeze(logits, axis=1), ops.squeeze(hidden, axis=1), cache

        token_ids = self.sampler(
            next=next, prompt=token_ids, cache=cache, index=index, mask=padding_mask,
            stop_token_ids=stop_token_ids, hidden_states=hidden, model=self,
        )
        if stop_token_ids is None:
            return {"token_ids": token_ids, "padding_mask": ops.ones_like(token_ids, dtype="bool")}
        generated = ops.logical_not(ops.cast(padding_mask, "bool"))
        is_stop = ops.zeros_like(generated)
        for stop in stop_token_ids:
            is_stop = ops.logical_or(is_stop, ops.equal(token_ids, stop))
        ends = ops.cast(ops.logical_and(is_stop, generated), "int32")  # (B, L)
        after_end = ops.cumsum(ends, axis=-1) - ends  # > 0 strictly after the first stop token
        return {"token_ids": token_ids, "padding_mask": ops.equal(after_end, 0)}

    def generate(self, prompts, max_length=None, sampler=None, stop_token_ids=None, strip_prompt=False):
        """Continue `prompts` to `max_length` tokens in total (prompt included).

        Args:
            prompts: a string or list of strings (needs `tokenizer`), or token ids: a
                list of int lists (lengths may differ) or a (B, T) array.
            max_length: total length, at most the backbone's `max_sequence_length`
                (its default).
            sampler: a `keras_hub.samplers` name or object ("greedy", "top_k", "top_p",
                "beam", ...); default the one given to `compile` ("top_k").
            stop_token_ids: token ids that end a sequence (None: always `max_length`).
            strip_prompt: return only the continuation.

        Returns strings (string input) or a list of int lists (one per prompt).
        """
        max_length = max_length or self.backbone.max_sequence_length
        if not 1 < max_length <= self.backbone.max_sequence_length:
            raise ValueError(
                f"max_length {max_length} must be in (1, {self.backbone.max_sequence_length}], the backbone's context."
            )
        single = isinstance(prompts, str)
        strings = single or (isinstance(prompts, (list, tuple)) and prompts and isinstance(prompts[0], str))
        if strings:
            if self.tokenizer is None:
                raise ValueError("GPTCausalLM.generate got strings but has no tokenizer; pass token ids or attach one.")
            rows = _to_list(self.tokenizer.tokenize([prompts] if single else list(prompts)))
        else:
            rows = _to_list(prompts)
        lengths = [len(r) for r in rows]
        if not rows or min(lengths) < 1 or max(lengths) >= max_length:
            raise ValueError(f"Every prompt needs 1 to {max_length - 1} tokens (max_length {max_length}); "
                             f"got lengths {lengths}.")
        for i, row in enumerate(rows):
            check_token_ids(np.asarray(row), self.backbone.vocabulary_size, f"prompt {i}")
        token_ids = np.zeros((len(rows), max_length), dtype="int32")
        mask = np.zeros((len(rows), max_length), dtype=bool)
        for i, row in enumerate(rows):
            token_ids[i, : len(row)], mask[i, : len(row)] = row, True
        if sampler is not None:
            self.sampler = keras_hub.samplers.get(sampler) if isinstance(sampler, (str, dict)) else sampler
            self.generate_function = None
        stop = None if stop_token_ids is None else tuple(int(t) for t in stop_token_ids)
        out = self.make_generate_function()({"token_ids": token_ids, "padding_mask": mask}, stop_token_ids=stop)
        ids = np.asarray(ops.convert_to_numpy(out["token_ids"]))
        keep = np.asarray(ops.convert_to_numpy(out["padding_mask"]), dtype=bool)
        results = [ids[i][keep[i]][(lengths[i] if strip_prompt else 0):].tolist() for i in range(len(rows))]
        if not strings:
            return results
        texts = [self.tokenizer.detokenize(r) for r in results]
        texts = [t.numpy().decode("utf-8") if hasattr(t, "numpy") else str(t) for t in texts]
        return texts[0] if single else texts
