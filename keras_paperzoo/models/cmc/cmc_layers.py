"""`LabViews`: CMC's two views of an RGB image, its L and ab channels, normalised as the authors do.

CMC (Tian et al. 2019), on ImageNet, contrasts the luminance L of an image
with its chroma ab in the CIE L*a*b* colour space. The authors' `train_CMC.py`
(HobbitLong/CMC) converts each augmented RGB crop with scikit-image's `rgb2lab` and
normalises each channel to about [-1, 1] by the mid-point and half-range of its values
over sRGB:

    L:  (L - 50) / 50                      (L in [0, 100])
    a:  (a - 6.025) / 92.208               (a in [-86.183, 98.233])
    b:  (b + 6.6895) / 101.1675            (b in [-107.857, 94.478])

then splits the 3 channels into L (1) and ab (2) for the two encoders. This layer
does the same on `keras.ops` (`layers.rgb_to_lab`, checked against scikit-image). It
takes the RGB images the trainer's augmentation leaves: when the augmentation
normalised them by the training set's per-channel `input_mean` and `input_std`, they
are mapped back to [0, 1] first, so the exported encoder takes the same normalised
images as every other trainer's.

Example:

```python
luminance, chroma = LabViews()(images)      # images (B, H, W, 3) in [0, 1]
luminance.shape, chroma.shape               # (B, H, W, 1), (B, H, W, 2)
```
"""

import keras
from keras import ops

from keras_paperzoo.layers.rgb_to_lab import rgb_to_lab, split_lab

# Mid-point and half-range of L, a, b over sRGB (the authors' Normalize(mean, std) for view 'Lab').
LAB_MEAN = ((0.0 + 100.0) / 2, (-86.183 + 98.233) / 2, (-107.857 + 94.478) / 2)
LAB_STD = ((100.0 - 0.0) / 2, (86.183 + 98.233) / 2, (107.857 + 94.478) / 2)


def check_rgb(images, owner="CMC"):
    """Refuse images whose last axis is not 3 RGB channels, naming the shape."""
    shape = tuple(getattr(images, "shape", ()))
    if len(shape) != 4 or shape[-1] != 3:
        raise ValueError(
            f"{owner} splits RGB images into their L and ab channels (Lab colour space), so it needs images of "
            f"shape (B, H, W, 3); got shape {shape}."
        )


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class LabViews(keras.layers.Layer):
    """RGB (B, H, W, 3) -> (L (B, H, W, 1), ab (B, H, W, 2)), each Lab channel normalised to about [-1, 1].

    Args:
        input_mean, input_std: None, or the per-channel RGB statistics (3 numbers
            each) by which the inputs were normalised; they are undone first.
    """

    @classmethod
    def undoing(cls, augmentation, **kwargs):
        """LabViews that undo `augmentation`'s per-channel normalisation (its `mean` and `std`), if it has one."""
        mean, std = getattr(augmentation, "mean", None), getattr(augmentation, "std", None)
        if isinstance(mean, (list, tuple)) and isinstance(std, (list, tuple)):
            return cls(list(mean), list(std), **kwargs)
        return cls(None, None, **kwargs)

    def __init__(self, input_mean=None, input_std=None, **kwargs):
        kwargs.setdefault("autocast", False)
        super().__init__(**kwargs)
        if (input_mean is None) != (input_std is None):
            raise ValueError("LabViews input_mean and input_std go together: pass both or neither; got "
                             f"input_mean={input_mean!r}, input_std={input_std!r}.")
        if input_mean is not None:
            input_mean, input_std = [float(v) for v in input_mean], [float(v) for v in input_std]
            if len(input_mean) != 3 or len(input_std) != 3 or min(input_std) <= 0:
                raise ValueError("LabViews input_mean and input_std must be 3 numbers each (RGB), std > 0; got "
                                 f"input_mean={input_mean!r}, input_std={input_std!r}.")
        self.input_mean = input_mean
        self.input_std = input_std

    def call(self, images):
        check_rgb(images)
        rgb = ops.cast(images, "float32")
        if self.input_mean is not None:
            rgb = rgb * ops.convert_to_tensor(self.input_std) + ops.convert_to_tensor(self.input_mean)  # to [0, 1]
        lab = (rgb_to_lab(rgb) - ops.convert_to_tensor(LAB_MEAN)) / ops.convert_to_tensor(LAB_STD)  # (B, H, W, 3)
        return split_lab(lab)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (1,), tuple(input_shape[:-1]) + (2,)

    def get_config(self):
        return {**super().get_config(), "input_mean": self.input_mean, "input_std": self.input_std}
