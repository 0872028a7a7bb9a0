"""MemoryBank: InstDisc's update rule against its formula, reads by index, uniform negatives, state kept."""

import numpy as np
import pytest

import keras
from keras import ops

from keras_paperzoo.layers.memory_bank import MemoryBank
from tests.model_checks import check_config_roundtrip


def _np(x):
    return np.asarray(ops.convert_to_numpy(x))


def test_rows_start_as_unit_vectors_and_reads_are_the_rows_of_the_index():
    bank = MemoryBank(size=10, dim=4, seed=0)
    stored = _np(bank.bank)
    np.testing.assert_allclose(np.linalg.norm(stored, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(_np(bank.read(np.array([3, 3, 7]))), stored[[3, 3, 7]])
    assert bank.read(np.array([[1, 2], [0, 9]])).shape == (2, 2, 4)


def test_update_is_normalize_of_m_v_plus_one_minus_m_f_on_the_given_rows_only():
    bank = MemoryBank(size=6, dim=3, momentum=0.5, seed=1)
    before = _np(bank.bank).copy()
    features = np.random.default_rng(0).normal(size=(2, 3)).astype("float32")
    bank.update(np.array([4, 1]), features)
    after = _np(bank.bank)
    expected = 0.5 * before[[4, 1]] + 0.5 * features
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(after[[4, 1]], expected, rtol=1e-5, atol=1e-6)
    untouched = [0, 2, 3, 5]
    np.testing.assert_array_equal(after[untouched], before[untouched])
    bank_zero = MemoryBank(size=6, dim=3, momentum=0.0, seed=1)  # m = 0: the row becomes f / ||f||
    bank_zero.update(np.array([0]), features[:1])
    np.testing.assert_allclose(_np(bank_zero.bank)[0], features[0] / np.linalg.norm(features[0]), rtol=1e-5)


def test_negatives_are_uniform_over_the_rows_and_reproducible():
    bank = MemoryBank(size=5, dim=2, seed=3)
    drawn = _np(bank.sample(5000, 4))
    assert drawn.shape == (5000, 4) and drawn.min() == 0 and drawn.max() == 4
    counts = np.bincount(drawn.ravel(), minlength=5) / drawn.size
    np.testing.assert_allclose(counts, 0.2, atol=0.01)  # 20,000 draws: sd of a frequency 0.003
    assert not np.array_equal(drawn, _np(bank.sample(5000, 4)))  # the generator moves on
    again = MemoryBank(size=5, dim=2, seed=3)
    np.testing.assert_array_equal(_np(again.sample(5000, 4)), drawn)


def test_the_bank_is_saved_with_a_model_and_the_config_round_trips(tmp_path):
    bank = MemoryBank(size=8, dim=4, momentum=0.3, seed=2, name="bank")
    check_config_roundtrip(bank)
    inputs = keras.Input((), dtype="int32")
    model = keras.Model(inputs, bank(inputs))
    bank.update(np.arange(4), np.ones((4, 4), "float32"))
    model.save(tmp_path / "bank.keras")
    loaded = keras.saving.load_model(tmp_path / "bank.keras", safe_mode=True)
    np.testing.assert_array_equal(_np(loaded.layers[-1].bank), _np(bank.bank))
    assert loaded.layers[-1].momentum == 0.3


def test_bad_arguments_get_one_message_naming_the_value_and_the_rule():
    with pytest.raises(ValueError, match=r"size must be an int >= 1; got size=0"):
        MemoryBank(0, 4)
    with pytest.raises(ValueError, match=r"momentum must be a number in \[0, 1\); got momentum=1.0"):
        MemoryBank(4, 4, momentum=1.0)
    bank = MemoryBank(16, 4)
    with pytest.raises(ValueError, match="A memory bank of 16 rows cannot give 4096 negatives"):
        bank.sample(2, 4096)
    with pytest.raises(ValueError, match=r"got features of shape \(2, 3\); expected \(B, 4\)"):
        bank.update(np.array([0, 1]), np.ones((2, 3), "float32"))
    with pytest.raises(ValueError, match="indices must be integers; got dtype float32"):
        bank.read(np.array([0.0, 1.0], "float32"))
