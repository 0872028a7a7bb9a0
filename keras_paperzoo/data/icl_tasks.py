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

Rule episodes (`rule_episodes`, `rule_training_rows`; GPT-3's reproduction) test in-context
learning without leaving the answer in the prompt: an episode draws a rule parameter (a
Caesar shift s of a letter, "shift"; an offset c of both digits of a number, "digits"), its
shots are solved pairs of that rule, and its questions are other inputs, whose choices are
the question under other parameters and never a shot's output. `copy_and_exclude` is the
retrieval baseline that such tasks hold at chance.

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


# --- rule episodes: the answer follows a rule the shots show, never a pair they contain -------------
LETTERS, DIGITS = string.ascii_lowercase, string.digits
RULE_VOCABULARY = "\n" + LETTERS + DIGITS  # token ids: "\n" 0, letter i -> 1 + i, digit d -> 27 + d
RULE_FAMILIES = {"shift": tuple(range(26)), "digits": tuple(range(10))}  # each family's rule parameters
HELD_OUT_SHIFTS = (2, 7, 12, 17, 22)  # Caesar shifts never trained on (the "shift, held out" evaluation)


def apply_rule(family, text, parameter):
    """The rule of `family` with `parameter` on `text`.

    "shift": a Caesar shift of letters, x -> x + s mod 26 ("c" with s = 3 -> "f");
    "digits": an offset on every digit, d -> d + c mod 10 ("37" with c = 5 -> "82").
    """
    if family == "shift":
        return "".join(LETTERS[(LETTERS.index(ch) + parameter) % 26] for ch in text)
    if family == "digits":
        return "".join(DIGITS[(int(ch) + parameter) % 10] for ch in text)
    raise ValueError(f"family {family!r} is not a rule family; choose one of {tuple(RULE_FAMILIES)}.")


def rule_inputs(family):
    """Every input of `family`: the 26 letters ("shift") or the 100 two-digit strings "00".."99" ("digits")."""
    if family == "shift":
        return list(LETTERS)
    if family == "digits":
        return [f"{n:02d}" for n in range(100)]
    raise ValueError(f"family {family!r} is not a rule family; choose one of {tuple(RULE_FAMILIES)}.")


def rule_training_rows(rows, rng, families, length=48):
    """Token ids (rows, length) of training text: each row one episode, lines "input output\\n" without spaces.

    A row draws its family (`families`: {name: (probability, parameters)}), one rule parameter
    from that family's parameters, and distinct inputs, so no input repeats within a row: a
    value is predictable only through the rule, which the earlier lines of the row show. Ids
    as `RULE_VOCABULARY`; lines run on to the row's end (the last may be cut).
    """
    names = list(families)
    p = np.asarray([families[n][0] for n in names], "float64")
    family = rng.choice(len(names), size=rows, p=p / p.sum())
    out = np.zeros((rows, length), "int32")
    for f, name in enumerate(names):
        chosen = np.flatnonzero(family == f)
        if not len(chosen):
            continue
        parameters = np.asarray(families[name][1])
        offset = parameters[rng.integers(0, len(parameters), len(chosen))][:, None]  # (n, 1)
        if name == "shift":
            lines = -(-length // 3)
            inputs = np.argsort(rng.random((len(chosen), 26)), axis=-1)[:, :lines]  # distinct letters
            tokens = np.stack([inputs + 1, (inputs + offset) % 26 + 1, np.zeros_like(inputs)], -1)
        else:
            lines = -(-length // 5)
            inputs = np.argsort(rng.random((len(chosen), 100)), axis=-1)[:, :lines]  # distinct numbers
            tens, units = inputs // 10, inputs % 10
            tokens = np.stack([tens + 27, units + 27, (tens + offset) % 10 + 27, (units + offset) % 10 + 27,
                               np.zeros_like(inputs)], -1)
        out[chosen] = tokens.reshape(len(chosen), -1)[:, :length]
    return out


def rule_episodes(rng, family, parameters, episodes, queries, pool=8, choices=4, first_task=0):
    """(shots, questions): example dicts of `episodes` episodes of `family`, each with a parameter from `parameters`.

    An episode draws its rule parameter, `pool` distinct inputs whose solved pairs are the
    shots, and `queries` questions on other inputs: a question's input is never a shot's.
    Its choices are the answer and `choices - 1` distractors, the question under other
    parameters of `parameters` (the family's output space), none equal to any shot's
    output, so no choice can be read off the shots. Each dict: "context" (the input),
    "target" (the answer), "choices", "task" (episode index, from `first_task`),
    "family", "parameter", "role" ("shot" or "query").
    """
    if len(parameters) < choices:
        raise ValueError(f"family {family!r}: {len(parameters)} parameters give fewer than {choices} choices.")
    inputs = rule_inputs(family)
    if pool + queries > len(inputs):
        raise ValueError(f"family {family!r}: pool={pool} + queries={queries} inputs, more than its {len(inputs)}.")
    shots, questions = [], []
    for e in range(episodes):
        parameter = parameters[rng.integers(len(parameters))]
        others = [q for q in parameters if q != parameter]
        for _ in range(1000):
            drawn = [inputs[i] for i in rng.permutation(len(inputs))[: pool + queries]]
            seen = {apply_rule(family, x, parameter) for x in drawn[:pool]}
            options = [[q for q in others if apply_rule(family, x, q) not in seen] for x in drawn[pool:]]
            if all(len(o) >= choices - 1 for o in options):
                break
        else:  # pragma: no cover - a few dozen letters always leave room
            raise ValueError(f"family {family!r}: no {choices} choices avoid the outputs of {pool} shots.")

        def example(x, role, distractors):
            answer = apply_rule(family, x, parameter)
            texts = [answer] + [apply_rule(family, x, q) for q in distractors]
            return {"context": x, "target": answer, "choices": [texts[j] for j in rng.permutation(len(texts))],
                    "task": first_task + e, "family": family, "parameter": int(parameter), "role": role}

        for x in drawn[:pool]:
            shots.append(example(x, "shot", rng.choice(others, choices - 1, replace=False)))
        for x, o in zip(drawn[pool:], options):
            questions.append(example(x, "query", rng.choice(o, choices - 1, replace=False)))
    return shots, questions


def copy_and_exclude(task, shots, seed=1234, anywhere=False):
    """Per question: did "pick a choice that the K shots show as an output, else one at random" get it right?

    The retrieval baseline (`FewShotTask` `task`, its `draw_shots`): a model that copies from
    the prompt without inferring the rule. With `anywhere`, a choice shown anywhere in the
    shots (as an input or an output) counts. On rule episodes it is at chance.
    """
    rng = np.random.default_rng(seed)
    correct = []
    for index, example in enumerate(task.evaluation):
        shown = [task.train[j] for j in task.draw_shots(index, shots, seed)]
        seen = {task.target_text(s) for s in shown} | ({str(s[task.context_field]) for s in shown} if anywhere else set())
        options = task.choices_of(example)
        candidates = [i for i, c in enumerate(options) if c in seen] or list(range(len(options)))
        correct.append(int(rng.choice(candidates)) == task.target_index(example))
    return correct
