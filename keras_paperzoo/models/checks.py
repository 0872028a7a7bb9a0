"""Constructor-argument checks shared by the trainers: one message style for every refusal.

Each check returns the value converted (int, float, list) or raises a ValueError that
names the owner, the argument, the rule and the value:

    SwAV num_prototypes must be an int >= 1; got num_prototypes=0.

`label` names the argument in the paper's words where that helps ("num_clusters (k)");
`named=False` shows the value alone ("got 0"), the form some trainers' tests pin;
`rule` replaces the rule's words where a trainer's rule says more ("> 0 (or None for the
version's)"). Numbers are Python or NumPy numbers, never bools.
"""

import numbers


def refuse(owner, name, rule, value, label=None, named=True):
    """Raise the one-line ValueError: "<owner> <label> must be <rule>; got <name>=<value>."."""
    got = f"{name}={value!r}" if named else repr(value)
    raise ValueError(f"{owner} {label or name} must be {rule}; got {got}.")


def is_int(value, low=None):
    """An int (Python or NumPy, not a bool), at least `low` when given."""
    return (isinstance(value, numbers.Integral) and not isinstance(value, bool)
            and (low is None or value >= low))


def is_number(value):
    """A real number (Python or NumPy, not a bool)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_int(owner, name, value, low=1, allow_none=False, **style):
    """`value` as an int >= `low` (None passes through when `allow_none`)."""
    if value is None and allow_none:
        return None
    if not is_int(value, low):
        refuse(owner, name, style.pop("rule", None) or f"an int >= {low}" + (" or None" if allow_none else ""),
               value, **style)
    return int(value)


def _in_range(value, bounds):
    """Whether `value` satisfies `bounds`: "> 0", ">= 0", "[0, 1]" or "[0, 1)"."""
    if bounds[0] in "[(":
        low, high = (float(v) for v in bounds[1:-1].split(","))
        above = value >= low if bounds[0] == "[" else value > low
        below = value <= high if bounds[-1] == "]" else value < high
        return above and below
    operator, bound = bounds.split()
    return value > float(bound) if operator == ">" else value >= float(bound)


def check_number(owner, name, value, bounds="> 0", allow_none=False, **style):
    """`value` as a float within `bounds` ("> 0", ">= 0", "[0, 1]", "[0, 1)"); None when `allow_none`."""
    if value is None and allow_none:
        return None
    if not is_number(value) or not _in_range(value, bounds):
        words = f"in {bounds}" if bounds[0] in "[(" else bounds
        refuse(owner, name, style.pop("rule", None) or f"a number {words}", value, **style)
    return float(value)


def check_choice(owner, name, value, choices, **style):
    """`value` if it is one of `choices` ("'a' or 'b'" for two, else "one of (...)")."""
    if value not in choices:
        words = " or ".join(repr(c) for c in choices) if len(choices) == 2 else f"one of {tuple(choices)}"
        refuse(owner, name, style.pop("rule", None) or words, value, **style)
    return value


def check_flag(owner, name, value, **style):
    """`value` if it is True or False."""
    if not isinstance(value, bool):
        refuse(owner, name, "True or False", value, **style)
    return value


def check_int_list(owner, name, values, low=1, allow_none=False, **style):
    """`values` as a non-empty list of ints >= `low` (None passes through when `allow_none`)."""
    if values is None and allow_none:
        return None
    if not isinstance(values, (list, tuple)) or not values or not all(is_int(v, low) for v in values):
        rule = f"a non-empty list of ints >= {low}" + (" or None" if allow_none else "")
        refuse(owner, name, style.pop("rule", None) or rule, values, **style)
    return [int(v) for v in values]


def check_num_classes(owner, num_classes):
    """The online linear classifier's classes: an int >= 2, or None for no classifier."""
    return check_int(owner, "num_classes", num_classes, low=2, allow_none=True,
                     label="num_classes (the online linear classifier)", named=False)


def check_transformer_sizes(owner, num_layers, hidden_dim, num_heads, mlp_dim):
    """A Transformer encoder's L, D, heads and MLP width as positive ints, D divisible by the heads."""
    num_layers, hidden_dim, num_heads, mlp_dim = (
        check_int(owner, name, value, rule="a positive int")
        for name, value in (("num_layers", num_layers), ("hidden_dim", hidden_dim), ("num_heads", num_heads),
                            ("mlp_dim", mlp_dim))
    )
    if hidden_dim % num_heads:
        raise ValueError(f"hidden_dim {hidden_dim} should be divisible by num_heads {num_heads}.")
    return num_layers, hidden_dim, num_heads, mlp_dim
