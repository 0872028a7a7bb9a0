"""Digits on a canvas (`data/digit_canvas.py`): the dense task of DenseCL's reproduction and example."""

import numpy as np
import pytest

from keras_paperzoo.data.digit_canvas import BACKGROUND, cell_labels, digit_canvases


def test_scenes_hold_their_digits_in_labelled_boxes_without_overlap():
    rng = np.random.default_rng(0)
    digits = rng.random((20, 8, 8, 1)).astype("float32") * 0.9 + 0.1  # no zero pixel: every box shows
    labels = np.arange(20) % 10
    images, masks = digit_canvases(digits, labels, count=30, canvas_size=24, per_scene=2, seed=3)
    assert images.shape == (30, 24, 24, 3) and masks.shape == (30, 24, 24)
    np.testing.assert_array_equal(images[..., 0], images[..., 2])  # grey
    for image, mask in zip(images, masks):
        foreground = mask != BACKGROUND
        assert foreground.sum() == 2 * 64  # two whole 8 x 8 boxes, not overlapping
        np.testing.assert_array_equal(image[..., 0] > 0, foreground)  # pixels only inside the boxes
    again, _ = digit_canvases(digits, labels, count=30, canvas_size=24, seed=3)
    np.testing.assert_array_equal(again, images)  # seeded


def test_cell_labels_take_each_cells_majority_and_bad_sizes_are_named():
    mask = np.full((1, 4, 4), BACKGROUND)
    mask[0, :2, :2] = 3  # the top-left cell is all 3
    mask[0, 2, 2] = 7  # one pixel of 7 in the bottom-right cell: background wins
    np.testing.assert_array_equal(cell_labels(mask, 2)[0], [[3, BACKGROUND], [BACKGROUND, BACKGROUND]])
    with pytest.raises(ValueError, match="mask size 4x4 must be divisible by grid 3"):
        cell_labels(mask, 3)
    with pytest.raises(ValueError, match="canvas_size 12 must be at least twice the digit side 8"):
        digit_canvases(np.zeros((2, 8, 8)), [0, 1], 1, canvas_size=12)
