"""Image arrays: decoding files, pixel scaling, colour conversion and resizing.

Everything here is NumPy (plus PIL for decoding), works on channels-last batches
(N, H, W, C) and never imports a deep-learning framework.
"""

import io

import numpy as np
from PIL import Image

from keras_paperzoo.data.checks import DatasetError

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp")
COLOR_MODES = (None, "grayscale", "rgb")
_LUMA = np.array([0.299, 0.587, 0.114], dtype=np.float32)  # ITU-R 601-2, as PIL's "L"


def check_image_size(image_size):
    """Return `image_size` as an (h, w) tuple of positive ints, or None.

    Args:
        image_size: None, a positive int (square) or a pair of positive ints.

    Example:
        >>> check_image_size(28), check_image_size([32, 48]), check_image_size(None)
        ((28, 28), (32, 48), None)
    """
    if image_size is None:
        return None
    pair = (image_size, image_size) if _is_int(image_size) else image_size
    if (
        isinstance(pair, (tuple, list))
        and len(pair) == 2
        and all(_is_int(v) and v > 0 for v in pair)
    ):
        return int(pair[0]), int(pair[1])
    raise DatasetError(
        f"image_size={image_size!r} is invalid; use a positive int or a (height, width) "
        "pair of positive ints"
    )


def check_color_mode(color_mode):
    """Return `color_mode` if it is None, "grayscale" or "rgb", else raise.

    Example:
        >>> check_color_mode("rgb")
        'rgb'
    """
    if color_mode not in COLOR_MODES:
        raise DatasetError(
            f"color_mode={color_mode!r} is invalid; use None (keep), 'grayscale' or 'rgb'"
        )
    return color_mode


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def decode_image(data):
    """Decode one image file's bytes to a uint8 (H, W, 1) or (H, W, 3) array.

    Grayscale files keep one channel; palette, alpha and other modes become RGB
    (alpha is dropped); 16-bit grayscale keeps its 8 most significant bits.

    Example:
        >>> buf = io.BytesIO()
        >>> Image.new("L", (3, 2), color=7).save(buf, format="PNG")
        >>> decode_image(buf.getvalue()).shape
        (2, 3, 1)
    """
    with Image.open(io.BytesIO(data)) as image:
        if image.mode in ("I;16", "I;16B", "I;16L", "I"):
            array = (np.asarray(image).astype(np.uint32) >> 8).astype(np.uint8)
        elif image.mode in ("L", "1", "LA"):
            array = np.asarray(image.convert("L"))
        else:
            array = np.asarray(image.convert("RGB"))
    return array.reshape(array.shape[:2] + (-1,))


def stack_images(images):
    """Stack decoded uint8 images of one size; grayscale joins RGB as 3 channels.

    Example:
        >>> gray, rgb = np.zeros((2, 2, 1), "uint8"), np.ones((2, 2, 3), "uint8")
        >>> stack_images([gray, rgb]).shape
        (2, 2, 2, 3)
    """
    channels = max(image.shape[-1] for image in images)
    if channels > 1:
        images = [np.repeat(im, channels, axis=-1) if im.shape[-1] == 1 else im for im in images]
    return np.stack(images)


def to_float(x, dataset):
    """Scale pixels to float32 in [0, 1]: integers are divided by 255, floats kept.

    Args:
        x: an integer array with values 0..255, or a float array already in [0, 1].
        dataset: name or path of the dataset, used in the message.

    Example:
        >>> to_float(np.array([0, 51, 255], "uint8"), "demo").tolist()
        [0.0, 0.20000000298023224, 1.0]
    """
    x = np.asarray(x)
    if x.size == 0:
        return x.astype(np.float32)
    low, high = x.min(), x.max()
    if np.issubdtype(x.dtype, np.integer) and low >= 0 and high <= 255:
        out = x.astype(np.float32)
        out /= 255
        return out
    if np.issubdtype(x.dtype, np.floating) and low >= 0 and high <= 1:
        return x.astype(np.float32)
    raise DatasetError(
        f"Dataset {str(dataset)!r} has pixel values in [{low}, {high}] ({x.dtype}); "
        "use integers 0..255 or floats in [0, 1]"
    )


def to_grayscale(x):
    """(N, H, W, C) -> (N, H, W, 1) with the ITU-R 601-2 luma of the RGB channels.

    Example:
        >>> to_grayscale(np.ones((1, 2, 2, 3), "float32")).shape
        (1, 2, 2, 1)
    """
    if x.shape[-1] == 1:
        return x
    _check_channels(x)
    return (x[..., :3] @ _LUMA)[..., None].astype(np.float32)


def to_rgb(x):
    """(N, H, W, C) -> (N, H, W, 3): grayscale is repeated, an alpha channel dropped.

    Example:
        >>> to_rgb(np.zeros((1, 2, 2, 1), "float32")).shape
        (1, 2, 2, 3)
    """
    if x.shape[-1] == 1:
        return np.repeat(x, 3, axis=-1)
    _check_channels(x)
    return x[..., :3]


def _check_channels(x):
    if x.shape[-1] not in (3, 4):
        raise DatasetError(
            f"Images with {x.shape[-1]} channels cannot be converted; use 1 (grayscale), "
            "3 (RGB) or 4 (RGBA)"
        )


def resize_weights(size_in, size_out):
    """The (size_out, size_in) matrix of antialiased bilinear resampling along one axis.

    It is PIL's BILINEAR filter: a triangle kernel on half-pixel centres, widened by
    the scale factor when shrinking (antialiasing), renormalised at the borders.

    Example:
        >>> resize_weights(2, 4).tolist()
        [[1.0, 0.0], [0.75, 0.25], [0.25, 0.75], [0.0, 1.0]]
    """
    scale = size_in / size_out
    support = max(scale, 1.0)
    centres = (np.arange(size_out) + 0.5) * scale
    positions = np.arange(size_in) + 0.5
    weights = np.clip(1.0 - np.abs(positions[None, :] - centres[:, None]) / support, 0.0, None)
    return weights / weights.sum(axis=1, keepdims=True)


def available_memory():
    """Bytes of memory this machine can still give (MemAvailable on Linux), or None when unknown."""
    import os

    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(needed, what):
    """Refuse, naming the size, an array of `needed` bytes larger than the memory available.

    Example:
        >>> check_memory(1024, "a tiny batch")
    """
    available = available_memory()
    if available is not None and needed > available:
        raise DatasetError(
            f"{what} take {needed / 2**30:,.1f} GiB as float32; this machine has {available / 2**30:,.1f} GiB "
            "available (choose a smaller image_size)"
        )


def resize(x, size, chunk=4096):
    """Resize a float (N, H, W, C) batch to (N, h, w, C), antialiased bilinear.

    Args:
        x: float array, channels last.
        size: (h, w) target size.
        chunk: images resampled per step, to bound memory.

    Example:
        >>> resize(np.ones((2, 8, 8, 1), "float32"), (28, 28)).shape
        (2, 28, 28, 1)
    """
    height, width = size
    if x.shape[1:3] == (height, width):
        return x
    check_memory(x.shape[0] * height * width * x.shape[3] * 4, f"{x.shape[0]:,} images of {height} x {width}")
    rows = resize_weights(x.shape[1], height).astype(np.float32)
    cols = resize_weights(x.shape[2], width).astype(np.float32)
    out = np.empty((x.shape[0], height, width, x.shape[3]), dtype=np.float32)
    for start in range(0, x.shape[0], chunk):
        part = _resample_axis(x[start : start + chunk].astype(np.float32), rows, axis=1)
        out[start : start + chunk] = _resample_axis(part, cols, axis=2)
    return out


def _resample_axis(x, weights, axis):
    moved = np.moveaxis(x, axis, 0)
    flat = weights @ moved.reshape(moved.shape[0], -1)
    return np.moveaxis(flat.reshape((weights.shape[0],) + moved.shape[1:]), 0, axis)


def resize_uint8(image, size):
    """Resize one uint8 (H, W, C) image to `size`, rounding back to uint8.

    Example:
        >>> resize_uint8(np.full((4, 4, 3), 9, "uint8"), (2, 2))[..., 0].tolist()
        [[9, 9], [9, 9]]
    """
    out = resize(image[None].astype(np.float32), size)[0]
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def finish(x, dataset, image_size=None, color_mode=None):
    """Turn a source's raw pixels into the float32 [0, 1] batch `load_dataset` returns.

    Args:
        x: (N, H, W, C) integer (0..255) or float ([0, 1]) pixels.
        dataset: name or path of the dataset, used in messages.
        image_size: checked (h, w) or None to keep the size.
        color_mode: None (keep), "grayscale" or "rgb".

    Example:
        >>> x = np.full((1, 8, 8, 1), 255, "uint8")
        >>> finish(x, "demo", (4, 4), "rgb").shape
        (1, 4, 4, 3)
    """
    x = to_float(x, dataset)
    if color_mode == "grayscale":
        x = to_grayscale(x)
    if image_size is not None:
        x = resize(x, image_size)
    if color_mode == "rgb":
        x = to_rgb(x)
    np.clip(x, 0.0, 1.0, out=x)
    return np.ascontiguousarray(x, dtype=np.float32)
