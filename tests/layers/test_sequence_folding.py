"""FoldSequences / UnfoldSequences: (B, S, T) -> (B * S, T) -> back, row order kept."""

import numpy as np

import keras
from keras import ops

from keras_paperzoo.layers.sequence_folding import FoldSequences, UnfoldSequences
from tests.model_checks import check_config_roundtrip


def test_fold_then_unfold_is_the_identity_and_keeps_row_order():
    ids = np.arange(2 * 3 * 4).reshape(2, 3, 4).astype("int32")
    folded = ops.convert_to_numpy(FoldSequences()(ids))
    np.testing.assert_array_equal(folded, ids.reshape(6, 4))  # row b*S + s is sequence s of example b
    hidden = np.random.default_rng(0).normal(size=(6, 4, 5)).astype("float32")
    unfolded = ops.convert_to_numpy(UnfoldSequences()(hidden, ids))
    np.testing.assert_array_equal(unfolded, hidden.reshape(2, 3, 4, 5))


def test_shapes_are_known_symbolically():
    ids = keras.Input((3, None), dtype="int32")
    folded = FoldSequences()(ids)
    assert tuple(folded.shape) == (None, None)
    assert FoldSequences().compute_output_shape((2, 3, 7)) == (6, 7)
    assert tuple(UnfoldSequences()(keras.Input((None, 8)), ids).shape) == (None, 3, None, 8)
    for layer in (FoldSequences(), UnfoldSequences()):
        check_config_roundtrip(layer)
