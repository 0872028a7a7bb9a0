"""The pieces of the `igpt` and `beit` reproductions that are not the models' own code.

`LayerFeatures` computes iGPT's probe features f^0 .. f^L of every layer in one compiled
pass; it must equal `IGPT.features` layer by layer for both objectives. The smoke runs
themselves are in test_reproduce.py.
"""

import numpy as np
import pytest

import keras

from keras_paperzoo.reproductions import beit_mnist, igpt_mnist


@pytest.mark.parametrize("objective", ["autoregressive", "bert"])
def test_layer_features_equal_igpt_features_at_every_layer(objective):
    budget = {"width": 16, "colors": 4, "image_size": 4, "layers": 2}
    igpt = igpt_mnist.build_igpt(objective, budget, seed=0)
    ids = np.random.default_rng(0).integers(0, 4, (5, 16)).astype("int32")
    layers = igpt_mnist.LayerFeatures(igpt, batch_size=2)  # 3 chunks: 2, 2, 1
    got = layers.all_layers(ids)
    assert len(got) == 3 and all(f.shape == (5, 16) for f in got)
    for layer in range(3):
        expected = keras.ops.convert_to_numpy(igpt.features(ids, layer))
        np.testing.assert_allclose(got[layer], expected, atol=1e-5)
        assert layers.features(ids, layer) is layers.features(ids.copy(), layer)  # cached by value
    assert not np.allclose(got[0], got[2], atol=1e-3)  # the layers differ


def test_beit_two_standard_errors_is_the_binomial_formula():
    assert beit_mnist.two_standard_errors(50.0, 100) == 10.0  # 200 sqrt(0.25 / 100)
    assert beit_mnist.two_standard_errors(90.0, 1000) == pytest.approx(200 * np.sqrt(0.09 / 1000), abs=0.01)
    assert beit_mnist.two_standard_errors(100.0, 60) == 0.0
