"""Zero-, one- and few-shot evaluation of a causal language model (GPT-3, Brown et al. 2020, Sec. 2 and 2.4).

GPT-3 Sec. 2.4: "For few-shot learning, we evaluate each example in the evaluation set
by randomly drawing K examples from that task's training set as conditioning,
delimited by 1 or 2 newlines depending on the task. ... For tasks that involve
choosing one correct completion from several options (multiple choice), we provide K
examples of context plus correct completion, followed by one example of context only,
and compare the LM likelihood of each completion. For most tasks we compare the
per-token likelihood (to normalize for length) ... On tasks with free-form completion,
we use beam search" (here: greedy decoding, see below). Zero-shot (K = 0) gives the
task description and the example only; one-shot one demonstration (Sec. 2, Fig. 2.1).

The prompt follows lm-evaluation-harness's layout:

    description + D + c_1 + T + a_1 + D + ... + c_K + T + a_K + D + c        (D: fewshot_delimiter,
    then each choice is scored as the continuation  T + choice                T: target_delimiter)

(without the description and its delimiter when there is none).

Scoring. Multiple choice: log P(T + choice | prompt), summed over the choice's tokens
and divided by their number (per-token); both accuracies are reported, as GPT-3 does.
With a model that has a key/value cache (`GPTCausalLM.call_with_cache`), the shared
prompt is run once into the cache and every choice's continuation is scored from that
cache (one compiled `predict_on_batch` per example: the prompt, then the C
continuations as a batch reading the prompt's keys and values); other causal LMs score
every (prompt + choice) row in one batched, compiled forward pass (rows right padded to
a power-of-two length). Both give the same log-likelihoods (tested). Free-form
answers: greedy decoding until a stop string (the fewshot delimiter and a newline by
default) or `max_new_tokens`, then exact match of the stripped strings.

Deviations from GPT-3: greedy decoding instead of beam search (width 4, length
penalty 0.6) for free-form tasks; no normalisation by the unconditional answer
probability (used by GPT-3 on ARC, OpenBookQA and RACE only); prompt and continuation
are tokenized separately (exact for character tokenizers; lm-evaluation-harness does
the same for the continuation); a prompt that does not fit in the context is an
error, not truncated.

Example:

```python
task = FewShotTask(train=[{"context": "2+2=", "target": "4"}, {"context": "1+2=", "target": "3"}],
                   evaluation=[{"context": "3+3=", "target": "6"}], target_delimiter="")
few_shot_evaluate(lm, tokenizer, task, shots=1, seed=0)   # {"accuracy": ..., "accuracy_stderr": ...}
```
"""

import json
import math
import pathlib

import numpy as np

import keras
from keras import ops


class FewShotTask:
    """A task in lm-evaluation-harness's style: examples as dicts, a training and an evaluation split.

    Each example has a context (`context_field`) and a target (`target_field`). With
    `choices` the task is multiple choice: the target is the index of the correct choice
    or the choice's text. Without, the target is the free-form answer string.

    Args:
        train: list of example dicts, the split the K demonstrations are drawn from.
        evaluation: list of example dicts to evaluate (None: `train`; an example is never
            among its own demonstrations).
        context_field: the key of the context text ("context").
        target_field: the key of the target ("target").
        choices: None (free-form answers), the key of each example's list of choices, or
            one list of choices shared by every example (["positive", "negative"]).
        target_delimiter: between a context and its answer (" ").
        fewshot_delimiter: between demonstrations, and before the evaluated context ("\\n\\n").
        description: optional natural-language task description put first (GPT-3 Fig. 2.1).
        name: optional name for reports.
    """

    def __init__(self, train, evaluation=None, context_field="context", target_field="target", choices=None,
                 target_delimiter=" ", fewshot_delimiter="\n\n", description=None, name=None):
        self.train = list(train)
        self.evaluation = self.train if evaluation is None else list(evaluation)
        if not self.evaluation:
            raise ValueError("FewShotTask needs at least one evaluation example; got an empty split.")
        self.context_field, self.target_field, self.choices = context_field, target_field, choices
        self.target_delimiter, self.fewshot_delimiter = str(target_delimiter), str(fewshot_delimiter)
        self.description, self.name = description, name
        for split, examples in (("train", self.train), ("evaluation", self.evaluation)):
            for index, example in enumerate(examples):
                self._check(example, f"{split}[{index}]")

    @classmethod
    def from_jsonl(cls, train_path, evaluation_path=None, **kwargs):
        """A task from JSON-lines files (one example object a line); `evaluation_path` None: the training file."""
        train = _read_jsonl(train_path)
        evaluation = None if evaluation_path is None else _read_jsonl(evaluation_path)
        return cls(train, evaluation, **kwargs)

    @property
    def is_multiple_choice(self):
        return self.choices is not None

    def choices_of(self, example):
        """The example's answer options (multiple choice only)."""
        return list(example[self.choices]) if isinstance(self.choices, str) else list(self.choices)

    def target_index(self, example):
        """The index of the correct choice (multiple choice only)."""
        target, options = example[self.target_field], self.choices_of(example)
        return int(target) if isinstance(target, (int, np.integer)) else options.index(target)

    def target_text(self, example):
        """The answer as text: the correct choice, or the free-form target."""
        if self.is_multiple_choice:
            return self.choices_of(example)[self.target_index(example)]
        return str(example[self.target_field])

    def demonstration(self, example):
        """One solved example: context + target_delimiter + answer."""
        return str(example[self.context_field]) + self.target_delimiter + self.target_text(example)

    def draw_shots(self, index, shots, seed):
        """Indices into `train` of the K demonstrations of evaluation example `index`, in prompt order.

        Drawn without replacement by `np.random.default_rng((seed, index))`, so an
        example's prompt does not depend on which others are evaluated; a training
        example equal to the evaluated one is never drawn.
        """
        example = self.evaluation[index]
        candidates = [j for j, other in enumerate(self.train) if other != example]
        if shots > len(candidates):
            raise ValueError(
                f"shots={shots} is more than the {len(candidates)} training examples available to evaluation "
                f"example {index} (training split of {len(self.train)}, the evaluated example excluded)."
            )
        picked = np.random.default_rng((seed, index)).choice(len(candidates), size=shots, replace=False)
        return [candidates[j] for j in picked]

    def prompt(self, index, shots, seed):
        """The conditioning text of evaluation example `index`: description, K demonstrations, its context."""
        parts = [] if self.description is None else [str(self.description)]
        parts += [self.demonstration(self.train[j]) for j in self.draw_shots(index, shots, seed)]
        parts.append(str(self.evaluation[index][self.context_field]))
        return self.fewshot_delimiter.join(parts)

    def _check(self, example, where):
        if not isinstance(example, dict) or self.context_field not in example or self.target_field not in example:
            raise ValueError(
                f"FewShotTask example {where} must be a dict with keys {self.context_field!r} and "
                f"{self.target_field!r}; got {example!r}."
            )
        if not self.is_multiple_choice:
            return
        if isinstance(self.choices, str) and self.choices not in example:
            raise ValueError(f"FewShotTask example {where} has no choices field {self.choices!r}; got {example!r}.")
        options = self.choices_of(example)
        if len(options) < 2 or not all(isinstance(o, str) and o for o in options):
            raise ValueError(
                f"FewShotTask example {where} needs at least 2 choices (non-empty strings) to choose from; "
                f"got {options!r}."
            )
        target = example[self.target_field]
        is_index = isinstance(target, (int, np.integer)) and not isinstance(target, bool)
        valid = (is_index and 0 <= target < len(options)) or (isinstance(target, str) and target in options)
        if not valid:
            raise ValueError(
                f"FewShotTask example {where} target {target!r} must be a choice's index in [0, {len(options)}) "
                f"or one of its choices {options!r}."
            )


def few_shot_evaluate(model, tokenizer, task, shots=0, seed=1234, max_new_tokens=32, stop=None, limit=None,
                      context_length=None, use_cache=None):
    """Accuracy of `model` on `task` with K = `shots` demonstrations per example (GPT-3 Sec. 2.4).

    Args:
        model: a `GPTCausalLM`, or any Keras causal LM called as `model(token_ids (B, T))
            -> logits (B, T, V)`.
        tokenizer: `tokenize(str) -> ids` and `detokenize(ids) -> str` (`CharTokenizer`,
            a keras-hub tokenizer).
        task: a `FewShotTask`.
        shots: K, demonstrations per prompt (0: zero-shot).
        seed: the demonstrations' draw (see `FewShotTask.draw_shots`); 1234 as
            lm-evaluation-harness.
        max_new_tokens: free-form answers: the longest generation.
        stop: free-form answers: strings that end the answer (default: the task's
            fewshot delimiter and "\\n").
        limit: evaluate only the first `limit` evaluation examples.
        context_length: the model's context in tokens (default
            `model.backbone.max_sequence_length`).
        use_cache: multiple choice: score the prompt once into the key/value cache and
            the choices from it. None: when the model has one (`call_with_cache` and a
            causal backbone with `empty_cache`); False: the batched rows; True: required.

    Returns a dict: "accuracy" and "accuracy_stderr" (multiple choice: by the summed
    log-likelihood; free-form: exact match), "accuracy_per_token" and its
    "accuracy_per_token_stderr" (multiple choice), "num_examples", "shots", and
    "records" (per example: its prompt, demonstration indices, and the choices'
    log-likelihoods and token counts, or the generated answer). A standard error is
    the sample standard deviation over examples / sqrt(n) (lm-evaluation-harness's).
    """
    if isinstance(shots, bool) or not isinstance(shots, (int, np.integer)) or shots < 0:
        raise ValueError(f"shots must be a non-negative int (K demonstrations); got shots={shots!r}.")
    if shots > len(task.train):
        raise ValueError(f"shots={shots} is more than the task's {len(task.train)} training examples.")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 1):
        raise ValueError(f"limit must be a positive int (examples to evaluate) or None; got limit={limit!r}.")
    context = int(context_length or model.backbone.max_sequence_length)
    scorer = Scorer(model, context)
    choice_scorer = _choice_scorer(model, context, use_cache, scorer) if task.is_multiple_choice else None
    count = len(task.evaluation) if limit is None else min(int(limit), len(task.evaluation))  # limit >= 1
    stop = [task.fewshot_delimiter, "\n"] if stop is None else list(stop)
    records = []
    for index in range(count):
        prompt = task.prompt(index, shots, seed)
        prompt_ids = encode_text(tokenizer, prompt)
        if not prompt_ids:
            raise ValueError(f"Evaluation example {index}'s prompt is empty; give a description or a context.")
        record = {"index": index, "prompt": prompt, "shot_indices": task.draw_shots(index, shots, seed)}
        example = task.evaluation[index]
        if task.is_multiple_choice:
            continuations = [encode_text(tokenizer, task.target_delimiter + c) for c in task.choices_of(example)]
            _check_fits(index, len(prompt_ids), max(len(c) for c in continuations), context)
            record["log_likelihoods"] = choice_log_likelihoods(model, prompt_ids, continuations, choice_scorer)
            record["num_tokens"] = [len(c) for c in continuations]
            target = task.target_index(example)
            record["correct"] = int(np.argmax(record["log_likelihoods"])) == target
            per_token = np.asarray(record["log_likelihoods"]) / np.asarray(record["num_tokens"])
            record["correct_per_token"] = int(np.argmax(per_token)) == target
        else:
            _check_fits(index, len(prompt_ids), 1, context)
            steps = min(max_new_tokens, context - len(prompt_ids))
            answer = greedy_answer(model, tokenizer, prompt_ids, steps, stop, scorer)
            record["prediction"] = answer
            record["correct"] = answer.strip() == task.target_text(example).strip()
        records.append(record)
    result = {"num_examples": count, "shots": int(shots)}
    result["accuracy"], result["accuracy_stderr"] = mean_and_stderr([r["correct"] for r in records])
    if task.is_multiple_choice:
        result["accuracy_per_token"], result["accuracy_per_token_stderr"] = mean_and_stderr(
            [r["correct_per_token"] for r in records]
        )
    result["records"] = records
    return result


def choice_log_likelihoods(model, prompt_ids, continuations, scorer=None, use_cache=None):
    """log P(continuation | prompt) for each continuation (list of int lists), summed over its tokens.

    With the key/value cache (`use_cache`, see `few_shot_evaluate`): the prompt is run
    once, its keys and values copied to the C continuations, which are scored from them
    as one batch. Without: one batched forward pass over the rows prompt + continuation
    (C rows, right padded to a length bucket; causal attention keeps padding out of the
    real positions). Either way token c_j is scored by the logits at position P - 1 + j,
    inside one compiled `predict_on_batch` (eager `call_with_cache` calls took 15 s each
    for a 2-layer model on JAX, CPU; the compiled call milliseconds once its shapes are
    compiled).

    Args:
        scorer: a `Scorer` or `_CachedScorer` to reuse (None: one for `use_cache`).
    """
    scorer = scorer or _choice_scorer(model, None, use_cache)
    if isinstance(scorer, _CachedScorer):
        return scorer.log_likelihoods(prompt_ids, continuations)
    prompt_length = len(prompt_ids)
    rows = [list(prompt_ids) + list(ids) for ids in continuations]
    token_log_probs = scorer(rows)[0]  # (C, L): log P(row[i + 1] | row[: i + 1])
    totals = []
    for i, ids in enumerate(continuations):
        totals.append(float(token_log_probs[i, prompt_length - 1 : prompt_length - 1 + len(ids)].sum()))
    return totals


def _has_cache(model):
    """Whether `model` scores with a key/value cache: `call_with_cache` and a causal backbone with `empty_cache`."""
    backbone = getattr(model, "backbone", None)
    return (callable(getattr(model, "call_with_cache", None)) and callable(getattr(backbone, "empty_cache", None))
            and bool(getattr(backbone, "causal", True)))


def _choice_scorer(model, context, use_cache, scorer=None):
    """The scorer of choices: `_CachedScorer` when `use_cache` (None: when the model has a cache), else `Scorer`."""
    if use_cache not in (None, True, False):
        raise ValueError(f"use_cache must be None (when the model has a cache), True or False; got {use_cache!r}.")
    cached = _has_cache(model)
    if use_cache and not cached:
        raise ValueError(
            f"use_cache=True needs a causal LM with a key/value cache (`call_with_cache` and a causal backbone with "
            f"`empty_cache`, as GPTCausalLM); {type(model).__name__} has none."
        )
    if cached and use_cache is not False:
        return _CachedScorer(model, context)
    return scorer or Scorer(model, context)


def greedy_answer(model, tokenizer, prompt_ids, max_new_tokens, stop, scorer=None):
    """Greedy decoding: the text before the first stop string, at most `max_new_tokens` tokens.

    Each step is one compiled forward pass of prompt + answer so far (no cache; see
    `choice_log_likelihoods`).
    """
    scorer = scorer or Scorer(model)
    ids, generated, text = list(prompt_ids), [], ""
    for _ in range(max_new_tokens):
        greedy = scorer([ids])[1]  # (1, L): argmax_v P(v | row[: i + 1])
        token = int(greedy[0, len(ids) - 1])
        ids.append(token)
        generated.append(token)
        text = decode_ids(tokenizer, generated)
        if any(s and s in text for s in stop):
            break
    ends = [text.index(s) for s in stop if s and s in text]
    return text[: min(ends)] if ends else text


class _NextTokenScores(keras.layers.Layer):
    """(logits (B, L, V), next tokens (B, L)) -> (log P(next token) (B, L), argmax token (B, L)[, top-k (B, L, k)])."""

    def __init__(self, top_k=0, **kwargs):
        super().__init__(**kwargs)
        self.top_k = int(top_k)

    def call(self, logits, next_tokens):
        log_probs = ops.log_softmax(ops.cast(logits, "float32"), axis=-1)  # (B, L, V)
        chosen = ops.take_along_axis(log_probs, ops.expand_dims(next_tokens, -1), axis=-1)  # (B, L, 1)
        if not self.top_k:
            return ops.squeeze(chosen, -1), ops.argmax(logits, axis=-1)
        _, top = ops.top_k(ops.cast(logits, "float32"), self.top_k)  # (B, L, k), most likely first
        return ops.squeeze(chosen, -1), ops.argmax(logits, axis=-1), top


class Scorer:
    """`model`'s next-token log-probabilities and greedy tokens for int rows, compiled per length bucket.

    Rows are right padded to a power of two (at least 16, at most the context) so
    that a run compiles a few shapes; only (B, L) values leave the device, not the
    (B, L, V) logits. With `top_k` > 0 a call also returns the k most likely tokens
    at each position, (B, L, k).
    """

    def __init__(self, model, context=None, top_k=0):
        token_ids = keras.Input((None,), dtype="int32", name="token_ids")
        next_tokens = keras.Input((None,), dtype="int32", name="next_tokens")
        outputs = _NextTokenScores(top_k)(model(token_ids), next_tokens)
        self.model = keras.Model([token_ids, next_tokens], outputs)
        self.context = int(context or model.backbone.max_sequence_length)
        self.top_k = int(top_k)

    def __call__(self, rows):
        longest = max(len(r) for r in rows)
        length = min(self.context, max(16, 1 << (longest - 1).bit_length()))  # the bucket
        token_ids = np.zeros((len(rows), length), "int32")  # (B, L), right padded
        for i, row in enumerate(rows):
            token_ids[i, : len(row)] = row
        next_tokens = np.concatenate([token_ids[:, 1:], np.zeros((len(rows), 1), "int32")], axis=1)  # (B, L)
        outputs = self.model.predict_on_batch([token_ids, next_tokens])
        chosen, greedy = np.asarray(outputs[0], "float64"), np.asarray(outputs[1])
        return (chosen, greedy, np.asarray(outputs[2])) if self.top_k else (chosen, greedy)


class _CachedChoices(keras.Model):
    """Continuation log-probabilities from the prompt's key/value cache, compiled as one `predict_on_batch`.

    Inputs: "prompt" (1, P_b) right padded, "prompt_length" (1,) the true P,
    "continuations" (C, L_b) right padded, "cache_positions" (1, S) whose length is
    the cache's. Output: (C, L_b), log P(c_j | prompt, c_<j) at each j.
    """

    def __init__(self, lm, **kwargs):
        super().__init__(**kwargs)
        self.lm = lm
        self.built = True  # the LM's weights exist: no eager build call (slow on JAX), `predict_on_batch` traces

    def call(self, inputs):
        prompt, continuations = inputs["prompt"], inputs["continuations"]
        length = inputs["prompt_length"][0]  # P, the first continuation position
        cache = self.lm.backbone.empty_cache(1, ops.shape(inputs["cache_positions"])[1])  # (1, layers, 2, S, H, d)
        prompt_logits, _, cache = self.lm.call_with_cache(prompt, cache, 0)  # the prompt once: (1, P_b, V)
        count = ops.shape(continuations)[0]
        cache = ops.repeat(cache, count, axis=0)  # (C, layers, 2, S, H, d), the prompt's keys and values per choice
        logits, _, _ = self.lm.call_with_cache(continuations, cache, length)  # (C, L_b, V), positions P..P+L_b-1
        last = ops.take(prompt_logits, length - 1, axis=1)  # (1, V), predicts c_0
        last = ops.repeat(ops.expand_dims(last, 1), count, axis=0)  # (C, 1, V)
        predicting = ops.concatenate([last, logits[:, :-1]], axis=1)  # (C, L_b, V): position j predicts c_j
        log_probs = ops.log_softmax(ops.cast(predicting, "float32"), axis=-1)
        chosen = ops.take_along_axis(log_probs, ops.expand_dims(continuations, -1), axis=-1)  # (C, L_b, 1)
        return ops.squeeze(chosen, -1)


class _CachedScorer:
    """Choices' log-likelihoods with the prompt scored once into the key/value cache (`_CachedChoices`).

    The prompt is padded to a power-of-two bucket P_b (at least 16), the continuations
    to L_b (at least 4, at most context - P so that their positions exist), the cache to
    S = bucket(P + L_b) (at most the context): the prompt's padding is overwritten by the
    continuations or lies after them, where the causal mask hides it.
    """

    def __init__(self, model, context=None):
        self.model = _CachedChoices(model, name="cached_choices")  # compiled per shape, on first use
        self.context = int(context or model.backbone.max_sequence_length)

    def log_likelihoods(self, prompt_ids, continuations):
        bucket = lambda n, low: min(self.context, max(low, 1 << (n - 1).bit_length()))  # noqa: E731
        length, longest = len(prompt_ids), max(len(c) for c in continuations)
        width = min(bucket(longest, 4), self.context - length)  # L_b
        prompt = np.zeros((1, bucket(length, 16)), "int32")
        prompt[0, :length] = prompt_ids
        rows = np.zeros((len(continuations), width), "int32")  # (C, L_b), right padded
        for i, ids in enumerate(continuations):
            rows[i, : len(ids)] = ids
        inputs = {"prompt": prompt, "prompt_length": np.array([length], "int32"), "continuations": rows,
                  "cache_positions": np.zeros((1, bucket(length + width, 16)), "int32")}
        chosen = np.asarray(self.model.predict_on_batch(inputs), "float64")  # (C, L_b)
        return [float(chosen[i, : len(ids)].sum()) for i, ids in enumerate(continuations)]


def _check_fits(index, prompt_length, continuation_length, context):
    if prompt_length + continuation_length > context:
        raise ValueError(
            f"Evaluation example {index}: its prompt of {prompt_length} tokens and an answer of "
            f"{continuation_length} need {prompt_length + continuation_length} positions, more than the model's "
            f"context of {context}; use fewer shots or a model with a longer context."
        )


def encode_text(tokenizer, text):
    """Token ids of one string as a list of ints (from a list, an array, a tensor or a tf.RaggedTensor)."""
    ids = tokenizer.tokenize(text)
    ids = ids.to_list() if hasattr(ids, "to_list") else ids if isinstance(ids, list) else ops.convert_to_numpy(ids)
    return [int(t) for t in np.asarray(ids).reshape(-1)]


def decode_ids(tokenizer, ids):
    """The text of token ids, as a Python str."""
    text = tokenizer.detokenize(ids)
    return text.numpy().decode("utf-8") if hasattr(text, "numpy") else str(text)


def mean_and_stderr(values):
    """(mean, sample std / sqrt(n)); the standard error is NaN for a single example."""
    x = np.asarray(values, dtype="float64")
    stderr = float(np.std(x, ddof=1) / math.sqrt(len(x))) if len(x) > 1 else float("nan")
    return float(x.mean()), stderr


def _read_jsonl(path):
    path = pathlib.Path(path)
    if not path.is_file():
        raise ValueError(f"JSON-lines file {str(path)!r} does not exist.")
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [json.loads(line) for line in lines]
