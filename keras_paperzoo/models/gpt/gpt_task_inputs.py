"""GPT-1's traversal-style task inputs (Radford et al. 2018, Sec. 3.3, Figure 1).

"We convert structured inputs into an ordered sequence that our pre-trained model can
process. ... All transformations include adding randomly initialized start and end
tokens (<s>, <e>)", and a delimiter token ($) between the parts:

- classification: [<s>; text; <e>]
- entailment: [<s>; premise; $; hypothesis; <e>]
- similarity: "no inherent ordering of the two sentences": both orderings,
  [<s>; A; $; B; <e>] and [<s>; B; $; A; <e>], each processed independently; the two
  final representations are added element-wise before the linear output layer;
- multiple choice (question answering, commonsense reasoning): for context z (document
  and question) and answers {a_k}, one sequence [<s>; z; $; a_k; <e>] per answer, each
  processed independently, normalised "via a softmax layer".

`add_task_tokens(backbone)` gives the backbone three new token embeddings (start,
delimiter, extract), drawn as the rest (N(0, 0.02^2)), at ids V, V+1, V+2;
`task_token_ids(backbone)` reads them back as the last three ids of a backbone that has
them. `pack_task_inputs` builds the `GPTClassifier` inputs from token-id lists.

Example:

```python
backbone = add_task_tokens(GPTBackbone.from_preset("gpt1"))     # 40,478 + 3 tokens
x = pack_task_inputs("entailment", [([5, 6, 7], [8, 9])], 16, task_token_ids(backbone))
x["token_ids"][0, :7]   # [40478, 5, 6, 7, 40479, 8, 9] then 40480 (extract), padding 0
```
"""

import numpy as np

import keras

TASKS = ("classification", "entailment", "similarity", "multiple_choice")
TASK_TOKENS = ("start", "delimiter", "extract")  # <s>, $, <e>


def add_task_tokens(backbone):
    """A copy of a `GPTBackbone` with three more tokens (start, delimiter, extract) at ids V, V+1, V+2.

    Every weight is copied; the new rows of the token embedding are the new model's own
    draws, N(0, 0.02^2) (Sec. 3.3: "randomly initialized start and end tokens").
    """
    config = backbone.get_config()
    config["vocabulary_size"] = backbone.vocabulary_size + len(TASK_TOKENS)
    extended = type(backbone).from_config(config)
    table = backbone.token_embedding.embeddings
    for old, new in zip(backbone.weights, extended.weights):  # the same architecture, the same order
        value = keras.ops.convert_to_numpy(old)
        if old is table:  # (V, D) -> (V + 3, D): the old rows, then the new draws
            value = np.concatenate([value, keras.ops.convert_to_numpy(new)[backbone.vocabulary_size:]], axis=0)
        new.assign(value)
    return extended


def task_token_ids(backbone_or_vocabulary_size):
    """{"start", "delimiter", "extract"} -> the last three ids of the vocabulary (`add_task_tokens`'s)."""
    size = getattr(backbone_or_vocabulary_size, "vocabulary_size", backbone_or_vocabulary_size)
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size <= len(TASK_TOKENS):
        raise ValueError(f"task_token_ids needs a vocabulary of more than 3 tokens; got {size!r}.")
    return {name: int(size) - len(TASK_TOKENS) + i for i, name in enumerate(TASK_TOKENS)}


def _sequences(task, example, ids):
    """The traversal sequences of one example (Figure 1), a list of id lists."""
    s, d, e = ids["start"], ids["delimiter"], ids["extract"]
    if task == "classification":
        return [[s, *example, e]]
    if task == "multiple_choice":
        context, answers = example
        answers = list(answers)
        if len(answers) < 2:
            raise ValueError(f"pack_task_inputs multiple_choice needs at least 2 answers a_k; got {len(answers)}.")
        return [[s, *context, d, *answer, e] for answer in answers]
    first, second = example
    if task == "entailment":
        return [[s, *first, d, *second, e]]
    return [[s, *first, d, *second, e], [s, *second, d, *first, e]]  # similarity: both orderings


def pack_task_inputs(task, examples, sequence_length, special_token_ids, padding_id=0):
    """Token-id lists -> `GPTClassifier` inputs, GPT-1's traversal sequences right-padded.

    Args:
        task: "classification" (each example a list of ids), "entailment" or
            "similarity" (each a pair (first, second) of id lists), "multiple_choice"
            (each a pair (context, answers), answers a list of at least two id lists;
            the same number for every example).
        examples: a list of examples.
        sequence_length: int, T; a longer sequence is refused (no silent truncation).
        special_token_ids: {"start", "delimiter", "extract"} -> id (`task_token_ids`).
        padding_id: int, the id after each sequence (masked out).

    Returns {"token_ids": int32, "padding_mask": bool} of shape (B, T) for classification
    and entailment, (B, 2, T) for similarity (both orderings), (B, N, T) for N choices.
    """
    if task not in TASKS:
        raise ValueError(f"pack_task_inputs task must be one of {TASKS}; got {task!r}.")
    missing = set(TASK_TOKENS) - set(special_token_ids)
    if missing:
        raise ValueError(f"pack_task_inputs special_token_ids lacks {sorted(missing)}; give {TASK_TOKENS}.")
    rows = [_sequences(task, example, special_token_ids) for example in examples]
    if not rows:
        raise ValueError("pack_task_inputs got no examples.")
    counts = {len(r) for r in rows}
    if len(counts) > 1:
        raise ValueError(f"pack_task_inputs {task}: every example needs the same number of choices; got {sorted(counts)}.")
    longest = max(len(seq) for r in rows for seq in r)
    if longest > sequence_length:
        raise ValueError(
            f"pack_task_inputs: a {task} sequence has {longest} tokens (special tokens included), more than "
            f"sequence_length={sequence_length}; shorten the texts or raise sequence_length."
        )
    token_ids = np.full((len(rows), counts.pop(), sequence_length), padding_id, "int32")  # (B, S, T)
    for b, row in enumerate(rows):
        for i, seq in enumerate(row):
            token_ids[b, i, : len(seq)] = seq
    lengths = np.array([[len(seq) for seq in r] for r in rows])  # (B, S)
    padding_mask = np.arange(sequence_length) < lengths[..., None]  # (B, S, T)
    if task in ("classification", "entailment"):
        token_ids, padding_mask = token_ids[:, 0], padding_mask[:, 0]  # one sequence: (B, T)
    return {"token_ids": token_ids, "padding_mask": padding_mask}
