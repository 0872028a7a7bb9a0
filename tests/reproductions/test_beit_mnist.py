"""The pieces of the `beit` reproduction that are not the models' own code (the smoke runs are in test_reproduce.py)."""

import numpy as np
import pytest

from keras_paperzoo.reproductions import beit_mnist


def test_beit_two_standard_errors_is_the_binomial_formula():
    assert beit_mnist.two_standard_errors(50.0, 100) == 10.0  # 200 sqrt(0.25 / 100)
    assert beit_mnist.two_standard_errors(90.0, 1000) == pytest.approx(200 * np.sqrt(0.09 / 1000), abs=0.01)
    assert beit_mnist.two_standard_errors(100.0, 60) == 0.0
