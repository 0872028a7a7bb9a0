"""CPC's grid of positions: an image's overlapping patches, or a sequence's time steps, checked once.

The CPC trainer predicts the encodings of positions k rows ahead (van den Oord et al.
2018, Sec. 2 and 3.2). On images the positions are a grid of patches (v1: 7 x 7 patches
of 64 x 64 pixels at stride 32 from 256 x 256 images); on sequences (v1's audio) the
encoder's time steps, a grid with one column. `cpc_grid` works out that grid from the
backbone and the constructor's arguments and refuses, in one message naming the value and
the rule, what does not fit: a grid too short for `prediction_steps` in a direction, a
sequence given an image's arguments, an image of other channels than the backbone's.
"""

import keras

from keras_paperzoo.models.checks import check_int
from keras_paperzoo.models.cpc.cpc_layers import DIRECTIONS, grid_shape


def check_cpc_backbone(backbone):
    """The encoder g_enc's input shape: (B, p, p, C) patches or (B, T, C) sequences."""
    if not isinstance(backbone, keras.Model):
        raise ValueError(f"CPC needs a keras.Model backbone (the encoder g_enc); got {type(backbone).__name__}.")
    input_shape = tuple(backbone.input_shape) if isinstance(getattr(backbone, "input_shape", None), tuple) else ()
    if len(input_shape) not in (3, 4):
        raise ValueError(
            f"CPC needs a backbone taking patches (B, p, p, C) or sequences (B, T, C); {backbone.name} has input "
            f"shape {input_shape or None}."
        )
    return input_shape


def check_directions(directions):
    """The prediction directions as a list of distinct names among `DIRECTIONS` (one name: a list of it)."""
    directions = [directions] if isinstance(directions, str) else list(directions or [])
    if not directions or any(d not in DIRECTIONS for d in directions) or len(set(directions)) < len(directions):
        raise ValueError(f"CPC directions must be distinct names among {DIRECTIONS}; got {directions!r}.")
    return directions


def cpc_grid(backbone, image_shape, patch_stride, patch_jitter, directions, prediction_steps, augmentation):
    """{"sequence", "grid_size", "image_shape", "patch_size", "patch_stride", "patch_jitter"} of a CPC trainer.

    Args: the CPC constructor's (see `CPC`); `directions` a list of names already checked.
    """
    input_shape = check_cpc_backbone(backbone)
    sequence = len(input_shape) == 3
    if sequence:
        if image_shape is not None or patch_stride is not None:
            raise ValueError(f"CPC on sequences (a backbone taking (B, T, C)) takes no image_shape or "
                             f"patch_stride; got image_shape={image_shape!r}, patch_stride={patch_stride!r}.")
        length = backbone.output_shape[1] if len(backbone.output_shape) == 3 else "not a sequence"
        if not isinstance(length, int):
            raise ValueError(f"CPC needs a sequence backbone with a known output length (B, T', D); "
                             f"{backbone.name} returns {backbone.output_shape}.")
        if directions != ["down"]:
            raise ValueError(f"CPC on sequences predicts forward in time only: directions=['down']; "
                             f"got {directions!r}.")
        if augmentation not in (None, "default"):
            raise ValueError(f"CPC on sequences takes no augmentation (the paper augments no audio); "
                             f"got {augmentation!r}.")
        grid = {"sequence": True, "grid_size": (length, 1), "image_shape": None, "patch_size": None,
                "patch_stride": None, "patch_jitter": 0}
    else:
        if image_shape is None:
            raise ValueError("CPC on images needs image_shape=(H, W, C), the images the grid is cut from "
                             f"({backbone.name} takes patches of shape {input_shape[1:]}).")
        image_shape = tuple(image_shape)
        if len(image_shape) != 3 or image_shape[-1] != input_shape[-1]:
            raise ValueError(f"CPC image_shape must be (H, W, C) with the backbone's {input_shape[-1]} channels; "
                             f"got {image_shape!r}.")
        patch_size = tuple(input_shape[1:3])
        if patch_stride is None:
            patch_stride = tuple(max(1, p // 2) for p in patch_size)  # "32 pixels overlap" of 64
        stride = (patch_stride, patch_stride) if isinstance(patch_stride, int) else tuple(patch_stride)
        if patch_jitter is None:
            patch_jitter = min(patch_size) // 16  # v1: a 60 x 60 subcrop of a 64 x 64 patch
        grid = {"sequence": False, "grid_size": grid_shape(image_shape[:2], patch_size, stride, owner="CPC"),
                "image_shape": image_shape, "patch_size": patch_size, "patch_stride": list(stride),
                "patch_jitter": check_int("CPC", "patch_jitter", patch_jitter, low=0, named=False)}
    _check_length(grid, directions, prediction_steps)
    return grid


def _check_length(grid, directions, prediction_steps):
    """Each direction needs more than `prediction_steps` rows (or columns, or steps)."""
    rows, cols = grid["grid_size"]
    for direction in directions:
        length, axis = (rows, "rows") if direction in ("down", "up") else (cols, "columns")
        if length <= prediction_steps:
            what = (f"{length} steps" if grid["sequence"] else
                    f"the {rows} x {cols} grid of {grid['image_shape'][0]}-pixel images ({length} {axis})")
            raise ValueError(
                f"CPC prediction_steps {prediction_steps} needs at least {prediction_steps + 1} "
                f"{'steps' if grid['sequence'] else axis} to predict '{direction}'; {what} has fewer."
            )
