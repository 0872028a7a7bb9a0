"""Argument checks of the view layers: each refuses a bad value with a message naming it."""


def check_range(name, value, low, high):
    """Refuse `value` unless it is a number in [low, high], naming `name`."""
    if not (isinstance(value, (int, float)) and low <= value <= high):
        raise ValueError(f"{name} must be a number in [{low}, {high}]; got {value!r}.")


def check_interval(name, interval, low=0.0):
    if (
        not isinstance(interval, (list, tuple))
        or len(interval) != 2
        or not all(isinstance(v, (int, float)) for v in interval)
        or not low < interval[0] <= interval[1]
    ):
        raise ValueError(
            f"{name} must be (min, max) with {low} < min <= max; got {interval!r}."
        )
    return (float(interval[0]), float(interval[1]))


def check_value_range(value_range):
    if (
        not isinstance(value_range, (list, tuple))
        or len(value_range) != 2
        or not value_range[0] < value_range[1]
    ):
        raise ValueError(f"value_range must be (low, high) with low < high; got {value_range!r}.")
    return (float(value_range[0]), float(value_range[1]))


def check_image_size(image_size):
    """An int or (height, width) as a (height, width) tuple of ints >= 1."""
    size = (image_size, image_size) if isinstance(image_size, int) else image_size
    size = tuple(size) if isinstance(size, (list, tuple)) else ()
    if len(size) != 2 or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in size):
        raise ValueError(f"image_size must be an int or (height, width) of ints >= 1; got {image_size!r}.")
    return size


def check_mean_std(mean, std):
    """Per-channel normalisation constants as lists of floats (or both None)."""
    if (mean is None) != (std is None):
        raise ValueError("mean and std go together: pass both or neither.")
    if mean is None:
        return None, None
    if any(float(s) <= 0 for s in std):
        raise ValueError(f"std must be > 0 per channel; got {std!r}.")
    return [float(m) for m in mean], [float(s) for s in std]
