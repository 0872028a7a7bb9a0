import numpy as np
import pytest

import keras

from keras_paperzoo.layers import Maxout
from tests.model_checks import check_config_roundtrip, check_fit, check_saved_model


def test_maxout_takes_the_max_over_each_units_pieces():
    layer = Maxout(units=2, pieces=3, kernel_initializer="identity", bias_initializer="zeros")
    x = np.array([[1.0, -2.0, 3.0, 0.5, 4.0, -1.0]], "float32")  # identity kernel: z = x
    y = keras.ops.convert_to_numpy(layer(x))
    np.testing.assert_allclose(y, [[3.0, 4.0]])  # max(1,-2,3), max(0.5,4,-1)
    assert layer.compute_output_shape((None, 6)) == (None, 2)
    assert layer.count_params() == 6 * 6 + 6


def test_maxout_paper_sizes_and_errors():
    layer = Maxout(240, 5)
    assert layer(np.zeros((2, 784), "float32")).shape == (2, 240)
    assert layer.count_params() == 784 * 1200 + 1200
    with pytest.raises(ValueError, match="pieces must be a positive int"):
        Maxout(4, 0)
    with pytest.raises(ValueError, match="units must be a positive int"):
        Maxout(2.5, 2)


def test_maxout_config_save_and_fit(tmp_path):
    check_config_roundtrip(Maxout(3, 2, name="m"))
    model = keras.Sequential([keras.Input((4,)), Maxout(3, 2), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x = np.random.default_rng(0).normal(size=(16, 4)).astype("float32")
    check_fit(model, x, x[:, :1], batch_size=8)
    check_saved_model(model, x, tmp_path)
