"""Synthetic in-context learning tasks for few-shot evaluation (GPT-3 Sec. 3.9.2 style, without data).

GPT-3 Sec. 3.9.2 ("Word Scrambling and Manipulation Tasks") tests whether a model
infers a novel symbol manipulation from its prompt. These generators make tiny tasks
of the same kind, as JSON-compatible dicts for `FewShotTask` (and its `from_jsonl`):

- "copy": {"context": "bca =", "target": "bca"}: repeat the string.
- "reverse": {"context": "bca =", "target": "acb"}: the string backwards.
- "letter_mapping": a fresh random letter substitution per prompt, shown in the
  prompt itself: {"context": "ab = fd\\nca = ef\\nbc =", "target": "de"}; its
  demonstrations are part of the context (evaluate with `shots=0`), and they show
  every letter of the query, so the answer is determined by the prompt.

With `num_choices`, each example also gets "choices" (the answer and distinct random
strings of the same length, in random order) and the target becomes the answer's index:
a multiple-choice task (`FewShotTask(..., choices="choices")`).

Example:

```python
train = icl_task_examples("reverse", 32, seed=0)
test = icl_task_examples("reverse", 16, seed=1)
task = FewShotTask(train, test, target_delimiter=" ")
few_shot_evaluate(lm, tokenizer, task, shots=4)
```
"""

import string

import numpy as np

ICL_TASK_KINDS = ("copy", "reverse", "letter_mapping")


def icl_task_examples(kind, num_examples, seed=0, length=3, alphabet="abcdef", num_pairs=4, num_choices=None):
    """`num_examples` example dicts of task `kind` ("copy", "reverse" or "letter_mapping").

    Args:
        kind: one of `ICL_TASK_KINDS`.
        num_examples: int >= 1.
        seed: the draw (NumPy `default_rng(seed)`); the same arguments give the same examples.
        length: letters per string.
        alphabet: the letters strings are drawn from (distinct lowercase letters, at least 2).
        num_pairs: "letter_mapping" only: in-prompt demonstrations per example, plus
            one when they do not show every letter of the query.
        num_choices: None (free-form target) or the number of choices, at least 2.
    """
    if kind not in ICL_TASK_KINDS:
        raise ValueError(f"kind {kind!r} is not an in-context task; choose one of {ICL_TASK_KINDS}.")
    for name, value, low in (("num_examples", num_examples, 1), ("length", length, 1), ("num_pairs", num_pairs, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an int >= {low}; got {name}={value!r}.")
    if len(set(alphabet)) != len(alphabet) or len(alphabet) < 2 or not set(alphabet) <= set(string.ascii_lowercase):
        raise ValueError(f"alphabet must be at least 2 distinct lowercase letters; got {alphabet!r}.")
    if num_choices is not None and (isinstance(num_choices, bool) or not isinstance(num_choices, int)
                                    or not 2 <= num_choices <= len(alphabet) ** length):
        raise ValueError(
            f"num_choices must be None or an int in [2, {len(alphabet) ** length}] (distinct strings of {length} "
            f"letters over {alphabet!r}); got num_choices={num_choices!r}."
        )
    rng = np.random.default_rng(seed)
    letters = np.asarray(list(alphabet))

    def word():
        return "".join(rng.choice(letters, size=length))

    examples = []
    for _ in range(num_examples):
        query = word()
        if kind == "copy":
            example = {"context": f"{query} =", "target": query}
        elif kind == "reverse":
            example = {"context": f"{query} =", "target": query[::-1]}
        else:
            mapping = dict(zip(alphabet, rng.permutation(letters)))  # this prompt's substitution
            sources = [word() for _ in range(num_pairs)]
            unseen = "".join(sorted(set(query) - set("".join(sources))))
            if unseen:  # one more demonstration shows the query's letters that none has shown
                sources.append(unseen + word()[len(unseen):])
            lines = [f"{s} = {''.join(mapping[c] for c in s)}" for s in sources]
            example = {"context": "\n".join(lines + [f"{query} ="]), "target": "".join(mapping[c] for c in query)}
        if num_choices is not None:
            options = {example["target"]}
            while len(options) < num_choices:
                options.add(word())
            options = [example["target"]] + sorted(options - {example["target"]})
            order = rng.permutation(num_choices)
            example["choices"] = [options[j] for j in order]
            example["target"] = int(np.argmax(order == 0))  # the answer's index
        examples.append(example)
    return examples
