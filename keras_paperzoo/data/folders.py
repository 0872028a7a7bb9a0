"""Image-file sources: a folder of class sub-folders, or a .zip of one.

Layouts (the same for folders and zips):

    root/<class>/*.png|jpg|jpeg|bmp            one split, "train"
    root/train/<class>/*, root/test/<class>/*  one split per sub-folder (also val/validation)
    root/*.png                                 unlabelled images (labels are None)

Labels are the index of the class folder in sorted order (the union of the class
folders over all splits, so train and test agree). A zip may wrap all of this in a
single top folder. Decoding a big zip is slow, so each decoded split is cached as an
.npz under $PAPERZOO_CACHE_DIR (default ~/.cache/keras_paperzoo), keyed by the
zip's absolute path, size and modification time.
"""

import hashlib
import os
import pathlib
import zipfile
from typing import NamedTuple

import numpy as np

from keras_paperzoo.data.checks import SPLIT_ALIASES, DatasetError, check_split
from keras_paperzoo.data.images import IMAGE_EXTENSIONS, decode_image, resize_uint8, stack_images

SPLIT_ORDER = ("train", "validation", "test")
_PROGRESS_AT = 5000  # say what is happening before decoding this many images


class ImageIndex(NamedTuple):
    """What a folder or zip holds: sorted class names and, per split, (file, label)."""

    classes: list
    splits: dict


def cache_dir():
    """The folder of decoded-zip caches: $PAPERZOO_CACHE_DIR or ~/.cache/keras_paperzoo.

    Example:
        >>> isinstance(cache_dir(), pathlib.Path)
        True
    """
    folder = os.environ.get("PAPERZOO_CACHE_DIR") or "~/.cache/keras_paperzoo"
    return pathlib.Path(folder).expanduser()


def _is_image(relpath):
    hidden = "/." in "/" + relpath or "__MACOSX" in relpath
    return relpath.lower().endswith(IMAGE_EXTENSIONS) and not hidden


def build_index(paths, dataset):
    """Sort relative image paths into splits and classes.

    Args:
        paths: relative paths of image files, "/"-separated.
        dataset: name or path of the dataset, used in messages.

    Returns:
        ImageIndex(classes, splits) with splits {"train": [(path, label), ...], ...};
        label is None when the images sit directly in the root (no class folders).

    Example:
        >>> index = build_index(["train/b/1.png", "train/a/2.png", "test/b/3.png"], "demo")
        >>> index.classes, index.splits["test"]
        (['a', 'b'], [('test/b/3.png', 1)])
    """
    paths = sorted(p for p in paths if _is_image(p))
    if not paths:
        raise DatasetError(
            f"Dataset {str(dataset)!r} has no images ({', '.join(IMAGE_EXTENSIONS)}); "
            "use a folder of class sub-folders, optionally inside train/ and test/"
        )
    parts = [p.split("/") for p in paths]
    tops = {q[0] for q in parts if len(q) > 1}
    grouped = {}
    if tops and all(t.lower() in SPLIT_ALIASES for t in tops):
        for path, q in zip(paths, parts):
            if len(q) > 1:
                grouped.setdefault(SPLIT_ALIASES[q[0].lower()], []).append((path, q[1:]))
    else:
        grouped["train"] = list(zip(paths, parts))
    classes = sorted({q[0] for items in grouped.values() for _, q in items if len(q) > 1})
    label_of = {name: i for i, name in enumerate(classes)}
    splits = {}
    for split in SPLIT_ORDER:
        items = grouped.get(split)
        if items:
            labelled = [(path, label_of[q[0]]) for path, q in items if len(q) > 1]
            splits[split] = labelled or [(path, None) for path, _ in items]
    return ImageIndex(classes, splits)


def _folder_paths(root):
    paths = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        rel = pathlib.Path(dirpath).relative_to(root).as_posix()
        paths += [f if rel == "." else f"{rel}/{f}" for f in filenames]
    return paths


def _zip_members(archive):
    """{relative path: member name}, dropping a single top folder that wraps everything."""
    names = [n for n in archive.namelist() if not n.endswith("/") and _is_image(n)]
    parts = [n.split("/") for n in names]
    tops = {q[0] for q in parts}
    wrapped = (
        len(tops) == 1
        and all(len(q) >= 3 for q in parts)
        and next(iter(tops)).lower() not in SPLIT_ALIASES
    )
    return {("/".join(q[1:]) if wrapped else n): n for n, q in zip(names, parts)}


def _open_zip(path):
    try:
        return zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as err:
        raise DatasetError(f"Dataset {str(path)!r} is not a readable .zip file ({err})") from err


def _subset(entries, limit):
    """All entries, or `limit` of them evenly spaced (so every class shows up)."""
    if limit is None:
        return entries
    step = max(1, len(entries) // limit)
    return entries[::step][:limit]


def _labels(entries):
    if not entries or entries[0][1] is None:
        return None
    return np.array([label for _, label in entries], dtype=np.int32)


def _decode_entries(read, entries, image_size, dataset):
    """Decode entries with `read(path) -> bytes`; returns (uint8 batch, resized?)."""
    images = []
    for path, _ in entries:
        try:
            images.append(decode_image(read(path)))
        except (OSError, SyntaxError, ValueError) as err:
            raise DatasetError(f"Dataset {str(dataset)!r}: cannot decode {path!r} ({err})") from err
    sizes = sorted({image.shape[:2] for image in images})
    if len(sizes) == 1:
        return stack_images(images), False
    if image_size is None:
        raise DatasetError(
            f"Dataset {str(dataset)!r} has images of different sizes ({sizes[0]}, "
            f"{sizes[-1]}, ...); pass image_size=(height, width)"
        )
    images = [im if im.shape[:2] == image_size else resize_uint8(im, image_size) for im in images]
    return stack_images(images), True


def load_folder(root, split="train", image_size=None, limit=None):
    """Decode one split of a folder of class sub-folders.

    Args:
        root: the folder.
        split: "train" (the only split without train/ and test/ sub-folders), "test"
            or "validation".
        image_size: (h, w), needed only when the images differ in size.
        limit: decode only this many images, evenly spaced over the split.

    Returns:
        (x, y): uint8 (N, H, W, C) and int32 (N,) labels, or None without class folders.

    Example:
        >>> import tempfile
        >>> from PIL import Image
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> (root / "cat").mkdir()
        >>> Image.new("RGB", (4, 3)).save(root / "cat" / "1.png")
        >>> x, y = load_folder(root)
        >>> x.shape, y.tolist()
        ((1, 3, 4, 3), [0])
    """
    root = pathlib.Path(root)
    index = build_index(_folder_paths(root), root)
    split = check_split(split, tuple(index.splits), root)
    entries = _subset(index.splits[split], limit)
    x, _ = _decode_entries(lambda rel: (root / rel).read_bytes(), entries, image_size, root)
    return x, _labels(entries)


def folder_class_names(root):
    """Sorted class-folder names of a folder dataset (empty when unlabelled).

    Example:
        >>> import tempfile
        >>> from PIL import Image
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> for name in ("dog", "cat"):
        ...     (root / name).mkdir()
        ...     Image.new("L", (2, 2)).save(root / name / "1.png")
        >>> folder_class_names(root)
        ['cat', 'dog']
    """
    root = pathlib.Path(root)
    return build_index(_folder_paths(root), root).classes


def zip_cache_file(path, split, image_size=None):
    """Where the decoded `split` of zip `path` is cached (the file may not exist yet).

    The name hashes the zip's absolute path, size and modification time, so an
    edited or replaced zip is decoded afresh.

    Example:
        >>> import tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "a.zip"
        >>> zipfile.ZipFile(path, "w").close()
        >>> zip_cache_file(path, "train").name.startswith("a-train-")
        True
    """
    path = pathlib.Path(path).resolve()
    stat = path.stat()
    key = f"{path}|{stat.st_size}|{stat.st_mtime_ns}|{split}|{image_size}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return cache_dir() / f"{path.stem}-{split}-{digest}.npz"


def _read_cache(file):
    try:
        with np.load(file, allow_pickle=False) as data:
            return data["x"], (data["y"] if "y" in data else None)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile):
        return None  # absent or damaged: decode again


def _write_cache(file, x, y):
    arrays = {"x": x} if y is None else {"x": x, "y": y}
    tmp = file.with_name(f".{file.name}.{os.getpid()}.tmp")
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as handle:
            np.savez(handle, **arrays)
        os.replace(tmp, file)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        print(f"keras_paperzoo: could not cache decoded images at {file} ({err})")


def load_zip(path, split="train", image_size=None, limit=None, cache=True):
    """Decode one split of a .zip of class sub-folders, reading members with PIL.

    The first full decode of a split is saved under `cache_dir()` and later calls
    load that instead (a 60,000-JPEG zip takes tens of seconds to decode).

    Args:
        path: the .zip file.
        split: "train", "test" or "validation" (see `load_folder`).
        image_size: (h, w), needed only when the images differ in size.
        limit: decode only this many images, evenly spaced; never cached.
        cache: read and write the cache.

    Returns:
        (x, y): uint8 (N, H, W, C) and int32 (N,) labels, or None without class folders.

    Example:
        >>> import io, tempfile
        >>> from PIL import Image
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.zip"
        >>> png = io.BytesIO()
        >>> Image.new("L", (2, 2), 255).save(png, format="PNG")
        >>> with zipfile.ZipFile(path, "w") as z:
        ...     z.writestr("test/b/1.png", png.getvalue())
        >>> x, y = load_zip(path, "test", cache=False)
        >>> x.shape, y.tolist()
        ((1, 2, 2, 1), [0])
    """
    path = pathlib.Path(path)
    canonical = SPLIT_ALIASES.get(split.lower()) if isinstance(split, str) else None
    use_cache = cache and limit is None and canonical is not None
    if use_cache:
        for size in dict.fromkeys((None, image_size)):
            hit = _read_cache(zip_cache_file(path, canonical, size))
            if hit is not None:
                return hit
    with _open_zip(path) as archive:
        members = _zip_members(archive)
        index = build_index(members, path)
        split = check_split(split, tuple(index.splits), path)
        entries = _subset(index.splits[split], limit)
        if len(entries) >= _PROGRESS_AT:
            print(f"keras_paperzoo: decoding {len(entries)} images of {path} (cached afterwards)")
        x, resized = _decode_entries(
            lambda rel: archive.read(members[rel]), entries, image_size, path
        )
    y = _labels(entries)
    if use_cache:
        _write_cache(zip_cache_file(path, split, image_size if resized else None), x, y)
    return x, y


def zip_index(path):
    """The ImageIndex of a zip (class names and member paths), without decoding.

    Example:
        >>> import tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.zip"
        >>> with zipfile.ZipFile(path, "w") as z:
        ...     z.writestr("data/cat/1.png", b"")
        >>> zip_index(path).classes
        ['cat']
    """
    with _open_zip(path) as archive:
        return build_index(_zip_members(archive), path)


def zip_class_names(path):
    """Sorted class-folder names of a zip dataset (empty when unlabelled).

    Example:
        >>> import tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.zip"
        >>> with zipfile.ZipFile(path, "w") as z:
        ...     z.writestr("train/dog/1.png", b"")
        ...     z.writestr("train/cat/1.png", b"")
        >>> zip_class_names(path)
        ['cat', 'dog']
    """
    return zip_index(path).classes
