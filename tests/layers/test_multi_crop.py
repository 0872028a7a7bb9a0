"""Multi-crop grouping (SwAV Sec. 3.2): crops of each size through the backbone together, in order."""

import numpy as np
import pytest

import keras

from keras_paperzoo.layers.multi_crop import (
    check_assignment_crops,
    check_crop_sizes,
    crop_sizes,
    encode_crops,
    full_size_crops,
    same_size_runs,
)


def _crops(*sides, batch=2):
    rng = np.random.default_rng(0)
    return [keras.ops.convert_to_tensor(rng.random((batch, s, s, 3)).astype("float32")) for s in sides]


def test_runs_of_consecutive_same_size_crops():
    assert same_size_runs(_crops(8, 8, 4, 4, 4)) == [(0, 2), (2, 5)]
    assert same_size_runs(_crops(8, 4, 8)) == [(0, 1), (1, 2), (2, 3)]  # runs, not sizes: the authors' unique_consecutive
    assert same_size_runs([]) == []


def test_encode_crops_calls_the_encoder_once_per_run_and_keeps_the_crops_order():
    crops = _crops(8, 8, 4, 4, 4)
    calls = []

    def encode(group):  # (n B, h, w, C) -> (n B, 2): the side and the mean of each image
        calls.append(tuple(group.shape))
        return keras.ops.stack([keras.ops.full((group.shape[0],), float(group.shape[1])),
                                keras.ops.mean(group, axis=(1, 2, 3))], axis=-1)

    features = keras.ops.convert_to_numpy(encode_crops(encode, crops))
    assert calls == [(4, 8, 8, 3), (6, 4, 4, 3)]
    assert features.shape == (10, 2)
    np.testing.assert_array_equal(features[:, 0], [8] * 4 + [4] * 6)
    expected = np.concatenate([keras.ops.convert_to_numpy(c).mean(axis=(1, 2, 3)) for c in crops])
    np.testing.assert_allclose(features[:, 1], expected, rtol=1e-6)


def test_crop_size_checks_name_the_sizes_and_the_backbone():
    fixed = keras.Sequential([keras.Input((8, 8, 3)), keras.layers.Conv2D(2, 3)], name="fixed")
    check_crop_sizes("SwAV", fixed, [(8, 8)])
    with pytest.raises(ValueError, match=r"SwAV's crops of size \[\(4, 4\)\] do not fit backbone fixed.*\(8, 8\)"):
        check_crop_sizes("SwAV", fixed, [(8, 8), (4, 4), (4, 4)])
    any_size = keras.Sequential([keras.Input((None, None, 3)), keras.layers.Conv2D(2, 3)], name="any")
    check_crop_sizes("SwAV", any_size, [(8, 8), (4, 4)])
    assert crop_sizes(None) == [] and crop_sizes(keras.layers.Identity()) == []
    check_assignment_crops("SwAV", [2, 6], [0, 1])
    for counts, assign in (([1], [0]), ([2, 2], [0, 4]), ([2, 2], [1, 1])):
        with pytest.raises(ValueError, match="needs at least 2 crops and distinct crops_for_assign"):
            check_assignment_crops("SwAV", counts, assign)


def test_full_size_crops_sets_the_augmentation_size_and_keeps_the_backbone_open():
    assert full_size_crops((32, 24, 3), "default") == {"augmentation": {"image_size": [32, 24]},
                                                       "image_shape": (None, None, 3)}
    assert full_size_crops((32, 32, 1), {"blur": False, "image_size": 16}) == {
        "augmentation": {"blur": False, "image_size": [32, 32]}, "image_shape": (None, None, 1)}
    assert full_size_crops((None, None, 3), "default") == {}
    assert full_size_crops((32, 32, 3), keras.layers.Identity()) == {}
