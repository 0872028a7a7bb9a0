"""The trainers' shared argument checks: the converted value, or one message naming the value and the rule."""

import numpy as np
import pytest

from keras_paperzoo.models.checks import (
    check_choice,
    check_flag,
    check_int,
    check_int_list,
    check_num_classes,
    check_number,
)


def test_values_pass_converted():
    assert check_int("T", "n", np.int64(3)) == 3 and type(check_int("T", "n", np.int64(3))) is int
    assert check_int("T", "seed", None, low=0, allow_none=True) is None
    assert check_number("T", "tau", np.float32(0.5)) == 0.5 and type(check_number("T", "tau", 1)) is float
    assert check_number("T", "m", 0.0, "[0, 1)") == 0.0 and check_number("T", "m", 1, "[0, 1]") == 1.0
    assert check_number("T", "lam", 0, ">= 0") == 0.0
    assert check_choice("T", "loss", "nce", ("nce", "softmax")) == "nce"
    assert check_int_list("T", "dims", (4, 2)) == [4, 2] and check_int_list("T", "dims", None, allow_none=True) is None
    assert check_flag("T", "flag", False) is False and check_num_classes("T", None) is None


@pytest.mark.parametrize("call, message", [
    (lambda: check_int("SwAV", "queue_length", -1, low=0), "SwAV queue_length must be an int >= 0; got queue_length=-1."),
    (lambda: check_int("T", "n", True), "T n must be an int >= 1; got n=True."),
    (lambda: check_int("T", "n", 2.0), "T n must be an int >= 1; got n=2.0."),
    (lambda: check_int("T", "seed", -1, low=0, allow_none=True), "T seed must be an int >= 0 or None; got seed=-1."),
    (lambda: check_number("T", "tau", 0), "T tau must be a number > 0; got tau=0."),
    (lambda: check_number("T", "tau", "0.1"), "T tau must be a number > 0; got tau='0.1'."),
    (lambda: check_number("T", "m", 1.0, "[0, 1)"), "T m must be a number in [0, 1); got m=1.0."),
    (lambda: check_number("T", "m", -0.1, "[0, 1]"), "T m must be a number in [0, 1]; got m=-0.1."),
    (lambda: check_number("T", "lam", -1, ">= 0", label="lam (lambda)"), "T lam (lambda) must be a number >= 0; got lam=-1."),
    (lambda: check_number("T", "t", 0, rule="> 0 (or None)", named=False), "T t must be > 0 (or None); got 0."),
    (lambda: check_choice("T", "loss", "x", ("nce", "softmax")), "T loss must be 'nce' or 'softmax'; got loss='x'."),
    (lambda: check_choice("T", "c", "x", ("a", "b", "c")), "T c must be one of ('a', 'b', 'c'); got c='x'."),
    (lambda: check_int_list("T", "dims", []), "T dims must be a non-empty list of ints >= 1; got dims=[]."),
    (lambda: check_int_list("T", "dims", [8, 0], allow_none=True),
     "T dims must be a non-empty list of ints >= 1 or None; got dims=[8, 0]."),
    (lambda: check_flag("T", "flag", 1, named=False), "T flag must be True or False; got 1."),
    (lambda: check_num_classes("T", 1), "T num_classes (the online linear classifier) must be an int >= 2 or None; got 1."),
])
def test_refusals_name_the_owner_argument_rule_and_value(call, message):
    with pytest.raises(ValueError) as error:
        call()
    assert str(error.value) == message
