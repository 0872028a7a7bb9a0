"""`RGBToLab`: sRGB images in [0, 1] to CIE L*a*b*, and the split into CMC's L and ab views.

CMC (Tian et al. 2019, Sec. 4.1) learns from two views of one image, its luminance L
and its chroma ab in the Lab colour space, one encoder per view. The conversion is
the standard one (as scikit-image's `rgb2lab`, illuminant D65, 2-degree observer):

1. undo the sRGB gamma: c / 12.92 for c <= 0.04045, else ((c + 0.055) / 1.055)^2.4;
2. linear RGB -> XYZ by the sRGB matrix, divided by the D65 white point;
3. f(t) = t^(1/3) above (6/29)^3, else t / (3 (6/29)^2) + 4/29;
   L = 116 f(Y) - 16, a = 500 (f(X) - f(Y)), b = 200 (f(Y) - f(Z)).

L lies in [0, 100], a and b roughly in [-86, 98] and [-108, 94] for sRGB inputs.
Everything is `keras.ops`, so it runs inside a model on every backend (and in a
`tf.data` pipeline on TensorFlow).

Example:

```python
lab = RGBToLab()(images)                 # (B, H, W, 3) in [0, 1] -> (B, H, W, 3) L*a*b*
luminance, chroma = split_lab(lab)       # (B, H, W, 1), (B, H, W, 2)
```
"""

import keras
import numpy as np
from keras import ops

# linear sRGB -> XYZ (scikit-image's `xyz_from_rgb`), rows X, Y, Z
XYZ_FROM_RGB = np.array([[0.412453, 0.357580, 0.180423],
                         [0.212671, 0.715160, 0.072169],
                         [0.019334, 0.119193, 0.950227]], dtype="float32")
D65_WHITE = np.array([0.95047, 1.0, 1.08883], dtype="float32")  # (X, Y, Z) of the 2-degree D65 white
_DELTA = 6.0 / 29.0


def rgb_to_lab(images):
    """(..., 3) sRGB in [0, 1] -> (..., 3) L*a*b* (float32)."""
    rgb = ops.cast(images, "float32")
    linear = ops.where(rgb <= 0.04045, rgb / 12.92, ops.power((ops.maximum(rgb, 0.04045) + 0.055) / 1.055, 2.4))
    xyz = ops.matmul(linear, ops.convert_to_tensor(XYZ_FROM_RGB.T)) / D65_WHITE  # (..., 3), white -> 1
    f = ops.where(xyz > _DELTA**3, ops.power(ops.maximum(xyz, _DELTA**3), 1.0 / 3.0),
                  xyz / (3.0 * _DELTA**2) + 4.0 / 29.0)
    fx, fy, fz = f[..., 0:1], f[..., 1:2], f[..., 2:3]
    return ops.concatenate([116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)], axis=-1)


def split_lab(lab):
    """CMC's two views of a Lab image: (L (..., 1), ab (..., 2))."""
    return lab[..., :1], lab[..., 1:]


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class RGBToLab(keras.layers.Layer):
    """sRGB images in [0, 1] (B, H, W, 3) -> CIE L*a*b* (B, H, W, 3); see the module docstring."""

    def __init__(self, **kwargs):
        kwargs.setdefault("autocast", False)
        super().__init__(**kwargs)

    def call(self, images):
        if images.shape[-1] != 3:
            raise ValueError(f"RGBToLab needs RGB images with 3 channels in the last axis; got shape "
                             f"{tuple(images.shape)}.")
        return rgb_to_lab(images)

    def compute_output_shape(self, input_shape):
        return input_shape
