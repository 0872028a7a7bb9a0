"""keras_paperzoo.data.sources: the lookup order, the download cache, and the one-line error when offline.

No test touches the network: downloads are monkeypatched, or read file:// URLs.
"""

import ast
import gzip
import hashlib
import os
import pathlib
import pickle
import re
import urllib.error

import numpy as np
import pytest

from keras_paperzoo.data import load_dataset, sources

pytestmark = pytest.mark.backend_free("jax")

PACKAGE = pathlib.Path(sources.__file__).resolve().parents[1]


@pytest.fixture
def folders(tmp_path, monkeypatch):
    """Empty $PAPERZOO_DATA, local copy and Keras cache (`KERAS_HOME`); downloads recorded, and refused."""
    paths = {name: tmp_path / name for name in ("data", "local", "keras")}
    monkeypatch.setenv(sources.DATA_ENV, str(paths["data"]))
    monkeypatch.setenv(sources.LOCAL_ENV, str(paths["local"]))
    monkeypatch.setenv("KERAS_HOME", str(paths["keras"]))
    paths["fetched"] = []

    def no_network(url, path, sha256=None):
        paths["fetched"].append(url)
        raise urllib.error.URLError("no network in the tests")

    monkeypatch.setattr(sources, "fetch_url", no_network)
    return paths


def write_mnist(path, n=6, value=7):
    path.parent.mkdir(parents=True, exist_ok=True)
    images = np.full((n, 28, 28), value, np.uint8)
    np.savez(path, x_train=images, y_train=np.arange(n, dtype=np.uint8) % 10, x_test=images[:2],
             y_test=np.array([3, 4], np.uint8))
    return path


@pytest.mark.parametrize("key, files, subfolder", [
    ("mnist", ["mnist.npz"], ""),
    ("cifar10", ["cifar10.npz", "cifar10-jpeg.zip"], ""),
    ("tiny_shakespeare", ["tinyshakespeare.txt"], ""),
    ("multi30k", ["train.de", "train.en", "val.de", "val.en", "test_2016_flickr.de", "test_2016_flickr.en"], "multi30k"),
    ("sst2", ["train.tsv", "dev.tsv"], "sst2"),
])
def test_offline_the_error_is_one_line_naming_the_files_and_the_folder(folders, key, files, subfolder):
    with pytest.raises(ValueError) as error:
        sources.locate(key, hint="or pass --dataset digits")
    message = str(error.value)
    assert "\n" not in message and folders["fetched"], message  # a download was tried, and failed
    assert message.startswith(f"{sources.SOURCES[key].title} was not found and could not be downloaded (URLError")
    target = folders["data"] / subfolder if subfolder else folders["data"]
    assert f"into {target}{os.sep}," in message and message.endswith("; or pass --dataset digits")
    for name in files:
        assert name in message, (name, message)
    assert "http" not in message and "shared" not in message


def test_without_paperzoo_data_the_download_goes_to_the_keras_cache(folders, monkeypatch):
    monkeypatch.delenv(sources.DATA_ENV)
    with pytest.raises(ValueError, match=re.escape(f"into {folders['keras'] / 'datasets'}{os.sep},")):
        sources.locate("mnist")
    assert folders["fetched"] == [sources.MNIST_URL]


def test_the_lookup_order_paperzoo_data_then_the_local_copy_then_the_cache(folders, monkeypatch):
    cache = write_mnist(folders["keras"] / "datasets" / "mnist.npz")
    monkeypatch.delenv(sources.DATA_ENV)
    assert sources.locate("mnist") == cache  # only in the Keras cache (where keras.datasets.mnist puts it)
    local = write_mnist(folders["local"] / "mnist.npz")
    assert sources.locate("mnist") == local  # the local copy before the cache
    monkeypatch.setenv(sources.DATA_ENV, str(folders["data"]))
    mine = write_mnist(folders["data"] / "mnist.npz", value=200)
    assert sources.locate("mnist") == mine  # $PAPERZOO_DATA first
    explicit = write_mnist(folders["keras"] / "elsewhere" / "mnist.npz")
    assert sources.locate("mnist", data_dir=explicit.parent) == explicit  # --data-dir before $PAPERZOO_DATA
    assert folders["fetched"] == []
    x, y = load_dataset(str(mine), "train")  # the file found is what load_dataset reads
    assert x.shape == (6, 28, 28, 1) and np.allclose(x, 200 / 255) and y.tolist() == [0, 1, 2, 3, 4, 5]


def test_a_download_lands_in_the_layout_and_is_found_without_a_second_download(folders, monkeypatch):
    calls = []

    def fake_fetch(url, path, sha256=None):
        calls.append((url, pathlib.Path(path).relative_to(folders["data"]).as_posix(), sha256))
        pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(path, "wt", encoding="utf-8") as out:
            out.write("ein Satz\n")
        return path

    monkeypatch.setattr(sources, "fetch_url", fake_fetch)
    assert sources.locate("multi30k") == folders["data"] / "multi30k"
    assert [c[1] for c in calls] == [f"multi30k/{stem}.gz" for stem in sources.MULTI30K_STEMS]
    assert calls[0][0] == sources.MULTI30K_URL.format(stem="train.de")
    assert sources.locate("multi30k") == folders["data"] / "multi30k" and len(calls) == 6


def test_text_datasets_are_found_in_one_folder_plain_or_gzipped(folders):
    folder = folders["data"]
    (folder / "multi30k").mkdir(parents=True)
    for i, stem in enumerate(sources.MULTI30K_STEMS):  # half plain, half gzipped
        name = folder / "multi30k" / (stem if i % 2 else f"{stem}.gz")
        name.write_bytes(gzip.compress(b"x\n") if not i % 2 else b"x\n")
    (folder / "sst2").mkdir()
    (folder / "sst2" / "train.tsv").write_text("sentence\tlabel\ngood\t1\n")
    (folder / "tinyshakespeare.txt").write_text("First Citizen:\n")
    with pytest.raises(ValueError, match=re.escape(f"put train.tsv and dev.tsv") + ".*" + re.escape(
            f"into {folder / 'sst2'}{os.sep},")):
        sources.locate_together(("tiny_shakespeare", "multi30k", "sst2"))  # dev.tsv is missing
    (folder / "sst2" / "dev.tsv").write_text("sentence\tlabel\nbad\t0\n")
    assert sources.locate_together(("tiny_shakespeare", "multi30k", "sst2")) == folder
    assert sources.locate("tiny_shakespeare") == folder / "tinyshakespeare.txt"


def test_cifar10_left_by_keras_datasets_is_converted_not_downloaded(folders, monkeypatch):
    batches = folders["data"] / "cifar-10-batches-py-target" / "cifar-10-batches-py"
    batches.mkdir(parents=True)
    rng = np.random.default_rng(0)
    pixels = {}
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        data = rng.integers(0, 256, (2, 3 * 32 * 32), dtype=np.uint8)
        pixels[name] = data
        batch = {b"data": data, b"labels": [int(name[-1]) if name[-1].isdigit() else 9, 0]}
        (batches / name).write_bytes(pickle.dumps(batch))
    path = sources.locate("cifar10")
    assert path == folders["data"] / "cifar10.npz" and folders["fetched"] == []
    x, y = load_dataset(str(path), "test")
    assert x.shape == (2, 32, 32, 3) and y.tolist() == [9, 0]
    # CIFAR's rows are the red, green, blue planes of 32 x 32: pixel (0, 1) of image 0 in RGB.
    planes = pixels["test_batch"][0].reshape(3, 32, 32)
    assert np.allclose(x[0, 0, 1] * 255, planes[:, 0, 1], atol=1e-3)
    assert load_dataset(str(path), "train")[1].tolist() == [1, 0, 2, 0, 3, 0, 4, 0, 5, 0]


def test_fetch_url_checks_the_hash_and_leaves_no_partial_file(tmp_path):
    origin = tmp_path / "origin.txt"
    origin.write_text("to be or not to be\n")
    digest = hashlib.sha256(origin.read_bytes()).hexdigest()
    target = tmp_path / "cache" / "tinyshakespeare.txt"
    with pytest.raises(OSError, match="SHA-256"):
        sources.fetch_url(origin.as_uri(), target, sha256="0" * 64)
    assert not target.parent.exists() or list(target.parent.iterdir()) == []
    assert sources.fetch_url(origin.as_uri(), target, sha256=digest) == target
    assert target.read_text() == "to be or not to be\n"


def test_unknown_names_are_refused_in_one_line():
    with pytest.raises(ValueError, match="Unknown dataset 'imagenet'; the datasets found or downloaded by name: mnist"):
        sources.locate("imagenet")


# --- no user-facing text names a "shared" folder -------------------------------------------------
SHARED_FOLDER = re.compile(r"shared[ /]data|shared folder|\.\./shared/data", re.IGNORECASE)


def test_no_string_of_the_package_names_a_shared_data_folder():
    """Help texts, messages, docstrings and metrics strings: every str literal of keras_paperzoo and applications."""
    found = []
    for root in (PACKAGE, PACKAGE.parent / "applications"):
        for path in sorted(root.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and SHARED_FOLDER.search(node.value):
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert found == []


def test_the_reproduce_help_names_no_shared_folder(capsys):
    from keras_paperzoo.cli import main
    from keras_paperzoo.reproductions import common

    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    parser = common.ArgumentParser("x")
    parser.print_help()
    text = capsys.readouterr().out
    assert "--data-dir" in text and "PAPERZOO_DATA" in text and not SHARED_FOLDER.search(text)

