"""Bad arguments of the view layers name the value (data/views/checks.py's checks, in each layer)."""

import re

import pytest

from keras_paperzoo.data.views import ColorJitter, GaussianBlur, RandomResizedCrop, RandomSolarization, ViewAugmentation


def test_bad_arguments_name_the_value():
    with pytest.raises(ValueError, match="scale is a fraction of the image area"):
        RandomResizedCrop(8, 8, scale=(0.5, 2.0))
    with pytest.raises(ValueError, match="hue must be a number in"):
        ColorJitter(hue=0.7)
    with pytest.raises(ValueError, match="sigma must be"):
        GaussianBlur(sigma=(2.0, 1.0))
    with pytest.raises(ValueError, match="mean and std go together"):
        ViewAugmentation(16, mean=[0.5, 0.5, 0.5])
    cases = [
        (lambda: ViewAugmentation(16, blur_probability=1.5), "blur_probability must be a number in [0.0, 1.0]; got 1.5"),
        (lambda: ViewAugmentation(16, solarize_probability=-0.1), "solarize_probability must be a number in [0.0, 1.0]; got -0.1"),
        (lambda: ViewAugmentation(16, grayscale_probability=2), "grayscale_probability must be a number in [0.0, 1.0]; got 2"),
        (lambda: ViewAugmentation(0), "image_size must be an int or (height, width) of ints >= 1; got 0"),
        (lambda: RandomSolarization(probability=1.2), "probability must be a number in [0.0, 1.0]; got 1.2"),
        (lambda: GaussianBlur(kernel_size=0), "kernel_size must be an int >= 1 or None; got 0"),
    ]
    for make, message in cases:
        with pytest.raises(ValueError, match=re.escape(message)):
            make()
