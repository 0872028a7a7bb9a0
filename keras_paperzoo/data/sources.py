"""Where the reproductions' real datasets come from: a folder you name, a local copy, the download cache, or a download.

`locate(key)` returns the path of one dataset in the layout below, looking in this order:

1. `data_dir` (the reproductions' `--data-dir`), else `$PAPERZOO_DATA`;
2. a local copy that development machines and CI keep next to the checkout (what the
   tests read; its environment variable is `LOCAL_ENV`);
3. the download cache: `$PAPERZOO_DATA`, else Keras's `~/.keras/datasets` (`$KERAS_HOME`);
4. a download into the first of `data_dir`, `$PAPERZOO_DATA`, `~/.keras/datasets`, from the
   public origin (MNIST and CIFAR-10 from the files `keras.datasets` downloads, with
   their hashes; Tiny Shakespeare and SST-2 from the files tensorflow-datasets
   downloads for `tiny_shakespeare` and `glue/sst2`; Multi30k from its authors'
   repository). Nothing imports Keras or TensorFlow here, so a reproduction can look
   for its data before it selects a backend.

Without network (or with a download that fails) `DatasetError` says in one line which
file to put where. The layout, the same in every folder (files you bring go here too):

| key | dataset | files |
|---|---|---|
| mnist | MNIST | `mnist.npz` (keras.datasets layout: x_train, y_train, x_test, y_test) |
| cifar10 | CIFAR-10 | `cifar10.npz` (the same layout), or `cifar10-jpeg.zip` (train/<class>/*.jpg, test/<class>/*.jpg) |
| tiny_shakespeare | Tiny Shakespeare | `tinyshakespeare.txt` (plain text) |
| multi30k | Multi30k task 1, de-en | `multi30k/{train,val,test_2016_flickr}.{de,en}` (or `.gz`), one sentence a line |
| sst2 | SST-2 (GLUE) | `sst2/train.tsv`, `sst2/dev.tsv` (header `sentence<TAB>label`) |

Example:

```python
from keras_paperzoo.data.sources import locate

path = locate("mnist")  # .../mnist.npz, downloaded on first use
```
"""

import dataclasses
import gzip
import hashlib
import io
import os
import pathlib
import pickle
import sys
import tarfile
import tempfile
import urllib.request
import zipfile

import numpy as np

from keras_paperzoo.data.checks import DatasetError, first_line

DATA_ENV = "PAPERZOO_DATA"
LOCAL_ENV = "PAPERZOO_SHARED_DATA"  # the development copy (tests); not advertised to users
MULTI30K_STEMS = tuple(f"{split}.{language}" for split in ("train", "val", "test_2016_flickr") for language in ("de", "en"))


@dataclasses.dataclass(frozen=True)
class Source:
    """One dataset: its name in words, the path `locate` returns, and the files that must be there.

    `layouts`: alternatives, each (returned relative path, required relative paths); a
    required path "x.gz?" is satisfied by "x.gz" or "x".
    """

    title: str
    layouts: tuple
    bring: str  # the files to put into `subfolder` of the data folder, for the one-line error
    subfolder: str = ""


SOURCES = {
    "mnist": Source("MNIST", (("mnist.npz", ("mnist.npz",)),),
                    "mnist.npz (the keras.datasets file: x_train, y_train, x_test, y_test)"),
    "cifar10": Source("CIFAR-10", (("cifar10.npz", ("cifar10.npz",)), ("cifar10-jpeg.zip", ("cifar10-jpeg.zip",))),
                      "cifar10.npz (x_train, y_train, x_test, y_test as keras.datasets.cifar10 gives them) or "
                      "cifar10-jpeg.zip (train/<class>/*.jpg, test/<class>/*.jpg)"),
    "tiny_shakespeare": Source("Tiny Shakespeare", (("tinyshakespeare.txt", ("tinyshakespeare.txt",)),),
                               "tinyshakespeare.txt (plain text)"),
    "multi30k": Source("Multi30k (task 1, German-English)",
                       (("multi30k", tuple(f"multi30k/{stem}.gz?" for stem in MULTI30K_STEMS)),),
                       "train.de, train.en, val.de, val.en, test_2016_flickr.de, test_2016_flickr.en "
                       "(one sentence a line, or each .gz)", "multi30k"),
    "sst2": Source("SST-2 (GLUE)", (("sst2", ("sst2/train.tsv", "sst2/dev.tsv")),),
                   "train.tsv and dev.tsv (tab-separated sentence, label; a header line)", "sst2"),
}


# --- folders ---------------------------------------------------------------------------------
def cache_dir():
    """Where downloads go without `data_dir`: $PAPERZOO_DATA, else Keras's datasets cache ($KERAS_HOME or ~/.keras)."""
    if os.environ.get(DATA_ENV):
        return pathlib.Path(os.environ[DATA_ENV]).expanduser()
    home = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
    return pathlib.Path(home) / "datasets"


def local_copy():
    """The local copy: the folder the `LOCAL_ENV` variable names, else the data folder development machines keep
    beside the working directory or this checkout; None when there is none."""
    if os.environ.get(LOCAL_ENV):
        return pathlib.Path(os.environ[LOCAL_ENV]).expanduser()
    beside = os.path.join("shared", "data")
    candidates = [pathlib.Path.cwd().parent / beside, pathlib.Path(__file__).resolve().parents[3] / beside]
    return next((path for path in candidates if path.is_dir()), None)


def download_dir(data_dir=None):
    """The folder a download goes into: `data_dir`, else `cache_dir()`."""
    return pathlib.Path(data_dir).expanduser() if data_dir else cache_dir()


def folders(data_dir=None):
    """The folders `locate` looks in, in order (see the module docstring); duplicates once."""
    named = pathlib.Path(data_dir).expanduser() if data_dir else (
        pathlib.Path(os.environ[DATA_ENV]).expanduser() if os.environ.get(DATA_ENV) else None)
    ordered = []
    for folder in (named, local_copy(), cache_dir()):
        if folder is not None and folder not in ordered:
            ordered.append(folder)
    return ordered


def _present(folder, relative):
    if relative.endswith("?"):
        stem = relative[:-1]
        return (folder / stem).is_file() or (folder / stem[:-len(".gz")]).is_file()
    return (folder / relative).is_file()


def find(key, folder):
    """The dataset's path in `folder` if all its files are there, else None."""
    for returned, required in _source(key).layouts:
        if all(_present(folder, r) for r in required):
            return folder / returned
    return None


def _source(key):
    if key not in SOURCES:
        raise DatasetError(f"Unknown dataset {key!r}; the datasets found or downloaded by name: {', '.join(SOURCES)}")
    return SOURCES[key]


def missing_message(key, target, why, hint=None):
    """One line: the dataset was not found nor downloaded; which files to put into which folder."""
    source = _source(key)
    folder = pathlib.Path(target) / source.subfolder if source.subfolder else pathlib.Path(target)
    text = (f"{source.title} was not found and could not be downloaded ({why}): put {source.bring} into "
            f"{folder}{os.sep}, or set ${DATA_ENV} (or --data-dir) to a folder that holds them")
    return text + (f"; {hint}" if hint else "")


def locate(key, data_dir=None, download=True, hint=None):
    """The path of dataset `key` (see the module docstring for the order and the layout).

    Args:
        key: "mnist", "cifar10", "tiny_shakespeare", "multi30k" or "sst2".
        data_dir: a folder looked in first, and downloaded into (default $PAPERZOO_DATA).
        download: fetch it from its public origin when no folder has it.
        hint: what else the user can do, appended to the error (e.g. "--dataset digits").

    Returns:
        pathlib.Path: the file (mnist.npz, cifar10.npz or cifar10-jpeg.zip,
        tinyshakespeare.txt) or folder (multi30k, sst2).

    Raises:
        DatasetError: not found and not downloaded: one line naming the files and the folder.
    """
    _source(key)
    for folder in folders(data_dir):
        path = find(key, folder)
        if path is not None:
            return path
    target = download_dir(data_dir)
    if not download:
        raise DatasetError(missing_message(key, target, "downloads are off", hint))
    try:  # (CIFAR-10 that keras.datasets.cifar10 left in the folder is converted, not fetched again)
        FETCH[key](target)
    except Exception as error:  # offline, refused, a bad file: the message says what to do instead
        raise DatasetError(missing_message(key, target, first_line(error), hint)) from error
    path = find(key, target)
    if path is None:
        raise DatasetError(missing_message(key, target, "the download did not give the expected files", hint))
    return path


def locate_together(keys, data_dir=None, hint=None):
    """One folder holding every dataset of `keys` (the text reproductions read them from one folder).

    The first folder of `folders(data_dir)` with all of them; else those missing from the
    download folder are fetched into it.
    """
    for key in keys:
        _source(key)
    for folder in folders(data_dir):
        if all(find(key, folder) is not None for key in keys):
            return folder
    target = download_dir(data_dir)
    for key in keys:
        if find(key, target) is None:
            locate(key, data_dir=target, hint=hint)
    return target


# --- downloads -------------------------------------------------------------------------------
MNIST_URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz"
MNIST_SHA256 = "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"
CIFAR10_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
CIFAR10_SHA256 = "6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce"
SHAKESPEARE_URL = "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
SHAKESPEARE_SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
SST2_URL = "https://dl.fbaipublicfiles.com/glue/data/SST-2.zip"
SST2_SHA256 = "d67e16fb55739c1b32cdce9877596db1c127dc322d93c082281f64057c16deaa"
MULTI30K_URL = "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw/{stem}.gz"


def fetch_url(url, path, sha256=None):
    """Download `url` to `path` (through a temporary file beside it), checking its SHA-256 when given."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    print(f"Downloading {url} to {path}", file=sys.stderr, flush=True)
    handle, partial = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".part")
    try:
        digest = hashlib.sha256()
        with os.fdopen(handle, "wb") as out, urllib.request.urlopen(url, timeout=60) as response:
            for block in iter(lambda: response.read(1 << 20), b""):
                digest.update(block)
                out.write(block)
        if sha256 and digest.hexdigest() != sha256:
            raise OSError(f"the download of {url} has SHA-256 {digest.hexdigest()}, not {sha256}")
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    return path


def _fetch_mnist(folder):
    fetch_url(MNIST_URL, folder / "mnist.npz", MNIST_SHA256)


def _cifar_batches(read):
    """(x_train, y_train, x_test, y_test) from CIFAR-10's python batches; `read(name)` gives a batch's bytes."""
    def batch(name):
        content = pickle.loads(read(name), encoding="bytes")
        x = np.asarray(content[b"data"], np.uint8).reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        return x, np.asarray(content[b"labels"], np.uint8)

    train = [batch(f"data_batch_{i}") for i in range(1, 6)]
    x_test, y_test = batch("test_batch")
    return np.concatenate([x for x, _ in train]), np.concatenate([y for _, y in train]), x_test, y_test


def _write_cifar_npz(folder, arrays):
    x_train, y_train, x_test, y_test = arrays
    partial = folder / "cifar10.npz.part.npz"
    np.savez(partial, x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)
    os.replace(partial, folder / "cifar10.npz")


def _fetch_cifar10(folder):
    for extracted in (folder / "cifar-10-batches-py-target" / "cifar-10-batches-py", folder / "cifar-10-batches-py"):
        if (extracted / "test_batch").is_file():  # keras.datasets.cifar10 was here before
            _write_cifar_npz(folder, _cifar_batches(lambda name: (extracted / name).read_bytes()))
            return
    archive = fetch_url(CIFAR10_URL, folder / "cifar-10-python.tar.gz", CIFAR10_SHA256)
    with tarfile.open(archive) as tar:
        arrays = _cifar_batches(lambda name: tar.extractfile(f"cifar-10-batches-py/{name}").read())
    _write_cifar_npz(folder, arrays)
    archive.unlink()


def _fetch_shakespeare(folder):
    fetch_url(SHAKESPEARE_URL, folder / "tinyshakespeare.txt", SHAKESPEARE_SHA256)


def _fetch_sst2(folder):
    archive = fetch_url(SST2_URL, folder / "SST-2.zip", SST2_SHA256)
    (folder / "sst2").mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(archive) as zipped:
        for name in ("train.tsv", "dev.tsv"):
            (folder / "sst2" / name).write_bytes(zipped.read(f"SST-2/{name}"))
    archive.unlink()


def _fetch_multi30k(folder):
    for stem in MULTI30K_STEMS:
        path = fetch_url(MULTI30K_URL.format(stem=stem), folder / "multi30k" / f"{stem}.gz")
        with gzip.open(path) as check:  # a gzip file of text, not an error page
            io.TextIOWrapper(check, encoding="utf-8").readline()


FETCH = {"mnist": _fetch_mnist, "cifar10": _fetch_cifar10, "tiny_shakespeare": _fetch_shakespeare,
         "multi30k": _fetch_multi30k, "sst2": _fetch_sst2}

