"""Tests of keras_paperzoo.data: every source, the zip cache and every error.

All data is either embedded (digits), written into tmp_path, faked with
tfds.testing.mock_data, or read from the shared data folder (skipped when absent).
No test touches the network.
"""

import io
import os
import pathlib
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from PIL import Image

from keras_paperzoo.data import DatasetError, class_names, load_dataset, require_labels
from keras_paperzoo.data import folders, images

# backend_free (tests/conftest.py): keras_paperzoo.data reads files into NumPy and imports no framework
# (test_import_pulls_in_no_framework); the tfds mock is TensorFlow's on every leg: every leg would run the same code.
pytestmark = pytest.mark.backend_free("tensorflow")

CIFAR_CLASSES = [
    "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"
]  # fmt: skip


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path, monkeypatch):
    """Keep decoded-zip caches out of the home folder."""
    monkeypatch.setenv("PAPERZOO_CACHE_DIR", str(tmp_path / "cache"))


def _png(value, size=(3, 2), mode="L"):
    """PNG bytes of a constant image; size is (width, height) as in PIL."""
    color = value if mode == "L" else tuple(value)
    buf = io.BytesIO()
    Image.new(mode, size, color).save(buf, format="PNG")
    return buf.getvalue()


# Class folders deliberately not created in sorted order; pixel value encodes the file.
TINY = {"zebra/0.png": 10, "zebra/1.png": 20, "ant/0.png": 30, "moth/0.png": 40}


def _write_tree(root, files):
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def _write_zip(path, files):
    with zipfile.ZipFile(path, "w") as archive:
        for rel, data in files.items():
            archive.writestr(rel, data)
    return path


def _tiny_files(prefix=""):
    return {prefix + rel: _png(v) for rel, v in TINY.items()}


# ----------------------------------------------------------------------------- digits


def test_digits_shapes_range_and_labels():
    x, y = load_dataset("digits", "train")
    xt, yt = load_dataset("digits", "test")
    assert x.shape == (1500, 8, 8, 1) and xt.shape == (297, 8, 8, 1)
    assert x.dtype == np.float32 and y.dtype == np.int32 and y.shape == (1500,)
    assert x.min() == 0.0 and x.max() == 1.0  # 16/16
    assert set(np.unique(x * 16)) <= set(range(17))  # levels 0..16 divided by 16
    assert set(y.tolist()) == set(range(10)) and set(yt.tolist()) == set(range(10))
    # Pinned: the fixed RandomState(0) permutation.
    assert y[:12].tolist() == [2, 8, 2, 6, 6, 7, 1, 9, 8, 5, 2, 8]
    assert yt[:12].tolist() == [2, 2, 9, 8, 8, 3, 6, 0, 4, 4, 7, 6]
    assert class_names("digits") == [str(i) for i in range(10)]


def test_digits_split_is_deterministic_disjoint_and_complete():
    from sklearn.datasets import load_digits

    x1, y1 = load_dataset("digits", "train")
    x2, y2 = load_dataset("digits", "train")
    np.testing.assert_array_equal(x1, x2)
    np.testing.assert_array_equal(y1, y2)
    xt, yt = load_dataset("digits", "test")
    order = np.random.RandomState(0).permutation(1797)
    assert len(set(order[:1500]) & set(order[1500:])) == 0
    bunch = load_digits()
    np.testing.assert_array_equal(x1[..., 0] * 16, bunch.images[order[:1500]])
    np.testing.assert_array_equal(yt, bunch.target[order[1500:]])
    # Together the two splits are exactly the 1,797 digits (as a multiset of rows).
    both = np.concatenate([x1, xt]).reshape(1797, -1) * 16
    np.testing.assert_array_equal(np.unique(both, axis=0), np.unique(bunch.data, axis=0))
    assert both.shape[0] == bunch.data.shape[0]


def test_digits_resize_to_28_and_color_modes():
    x, y = load_dataset("digits", "test", image_size=28)
    x8, _ = load_dataset("digits", "test")
    assert x.shape == (297, 28, 28, 1) and x.dtype == np.float32
    assert 0.0 <= x.min() and x.max() <= 1.0
    assert abs(x.mean() - x8.mean()) < 0.01  # bilinear upsampling keeps brightness
    assert y.shape == (297,)
    rgb, _ = load_dataset("digits", "test", image_size=(10, 12), color_mode="rgb")
    assert rgb.shape == (297, 10, 12, 3)
    np.testing.assert_array_equal(rgb[..., 0], rgb[..., 2])
    gray, _ = load_dataset("digits", "test", color_mode="grayscale")
    np.testing.assert_array_equal(gray, x8)


def test_resize_matches_pil_bilinear():
    rng = np.random.default_rng(0)
    image = rng.random((13, 17)).astype(np.float32)
    for height, width in [(7, 29), (5, 5), (26, 9)]:
        ours = images.resize(image[None, :, :, None], (height, width))[0, :, :, 0]
        pil = np.asarray(Image.fromarray(image, mode="F").resize((width, height), Image.BILINEAR))
        np.testing.assert_allclose(ours, pil, atol=1e-5)


# ----------------------------------------------------------------------------- npz


def test_npz_round_trip_exact_values(tmp_path):
    x_train = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4) * 10
    x_test = np.full((1, 3, 4), 255, np.uint8)
    path = tmp_path / "tiny.npz"
    np.savez(path, x_train=x_train, y_train=np.array([3, 1], np.uint8), x_test=x_test, y_test=[2])
    x, y = load_dataset(path, "train")
    assert x.shape == (2, 3, 4, 1) and x.dtype == np.float32
    np.testing.assert_array_equal(x[..., 0], x_train.astype(np.float32) / 255)
    assert y.dtype == np.int32 and y.tolist() == [3, 1]
    xt, yt = load_dataset(str(path), "test")
    assert xt.shape == (1, 3, 4, 1) and np.all(xt == 1.0) and yt.tolist() == [2]
    assert class_names(path) == ["0", "1", "2", "3"]


def test_npz_rgb_labels_column_and_validation_split(tmp_path):
    x = np.zeros((3, 2, 2, 3), np.uint8)
    x[..., 0] = 255
    path = tmp_path / "rgb.npz"
    np.savez(path, x_train=x, y_train=[[0], [1], [1]], x_test=x, y_test=[[1], [0], [0]],
             x_val=x[:1], y_val=[[1]])  # fmt: skip
    xr, yr = load_dataset(path, "train")
    assert xr.shape == (3, 2, 2, 3) and yr.tolist() == [0, 1, 1]
    gray, _ = load_dataset(path, "test", color_mode="grayscale")
    np.testing.assert_allclose(gray, 0.299, atol=1e-6)  # luma of pure red
    xv, yv = load_dataset(path, "val")
    assert xv.shape == (1, 2, 2, 3) and yv.tolist() == [1]


def test_npz_missing_keys_names_found_and_needed(tmp_path):
    path = tmp_path / "bad.npz"
    np.savez(path, images=np.zeros((1, 2, 2), np.uint8), x_train=np.zeros((1, 2, 2), np.uint8))
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    message = str(info.value)
    assert "bad.npz" in message and "'images'" in message and "'x_train'" in message
    assert "y_train" in message and "x_test" in message and "y_test" in message
    image, label = np.zeros((1, 2, 2), np.uint8), [0]
    ok = tmp_path / "ok.npz"
    np.savez(ok, x_train=image, y_train=label, x_test=image, y_test=label)
    with pytest.raises(DatasetError, match="split='validation'.*ok.npz.*'train', 'test'"):
        load_dataset(ok, "validation")


def test_npz_bad_pixels_and_corrupt_file(tmp_path):
    path = tmp_path / "floaty.npz"
    big = np.full((1, 2, 2), 7.5, np.float32)
    np.savez(path, x_train=big, y_train=[0], x_test=big, y_test=[0])
    with pytest.raises(DatasetError, match="floaty.npz"):
        load_dataset(path)
    corrupt = tmp_path / "corrupt.npz"
    corrupt.write_bytes(b"not a zip at all")
    with pytest.raises(DatasetError, match="corrupt.npz"):
        load_dataset(corrupt)


# ----------------------------------------------------------------------------- folders


def test_folder_of_class_folders(tmp_path):
    root = _write_tree(tmp_path / "pics", _tiny_files())
    (root / "notes.txt").write_text("ignored")
    x, y = load_dataset(root)
    assert class_names(root) == ["ant", "moth", "zebra"]
    assert x.shape == (4, 2, 3, 1) and x.dtype == np.float32
    # Sorted file order: ant/0, moth/0, zebra/0, zebra/1.
    assert y.tolist() == [0, 1, 2, 2]
    np.testing.assert_array_equal(x[:, 0, 0, 0], np.array([30, 40, 10, 20], np.float32) / 255)
    x16, _ = load_dataset(str(root), image_size=16, color_mode="rgb")
    assert x16.shape == (4, 16, 16, 3)
    np.testing.assert_allclose(x16[2], 10 / 255, atol=1e-6)  # constant images stay constant
    with pytest.raises(DatasetError, match="'test'") as info:
        load_dataset(root, "test")
    assert "'train'" in str(info.value) and "pics" in str(info.value)


def test_folder_with_train_and_test_subfolders(tmp_path):
    files = {
        "train/cat/a.png": _png(1), "train/dog/b.png": _png(2), "train/dog/c.png": _png(3),
        "test/dog/d.png": _png(4), "test/eel/e.png": _png(5),
    }  # fmt: skip
    root = _write_tree(tmp_path / "split", files)
    assert class_names(root) == ["cat", "dog", "eel"]  # union over splits
    x, y = load_dataset(root, "train")
    assert y.tolist() == [0, 1, 1]
    np.testing.assert_array_equal(x[:, 1, 2, 0] * 255, np.float32([1, 2, 3]))
    xt, yt = load_dataset(root, "test")
    assert yt.tolist() == [1, 2] and xt.shape == (2, 2, 3, 1)
    np.testing.assert_allclose(xt[:, 0, 0, 0] * 255, [4, 5], atol=1e-4)
    with pytest.raises(DatasetError, match="'validation'"):
        load_dataset(root, "validation")


def test_folder_mixed_modes_sizes_and_unlabelled(tmp_path):
    mixed = _write_tree(tmp_path / "mixed", {
        "a/gray.png": _png(100), "b/red.jpg": _jpeg_red(), "b/rgba.png": _rgba(),
    })  # fmt: skip
    x, y = load_dataset(mixed)
    assert x.shape == (3, 2, 3, 3) and y.tolist() == [0, 1, 1]
    np.testing.assert_allclose(x[0], 100 / 255, atol=1e-6)  # gray repeated over RGB
    np.testing.assert_allclose(x[2, 0, 0], np.float32([0, 0, 255]) / 255)  # alpha dropped
    assert x[1, 0, 0, 0] > 0.9 and x[1, 0, 0, 1] < 0.1  # JPEG red, lossy
    sizes = _write_tree(
        tmp_path / "sizes", {"a/1.png": _png(9, (4, 4)), "a/2.png": _png(9, (6, 1))}
    )
    with pytest.raises(DatasetError, match="image_size"):
        load_dataset(sizes)
    xs, _ = load_dataset(sizes, image_size=(3, 3))
    assert xs.shape == (2, 3, 3, 1) and np.allclose(xs, 9 / 255)
    flat = _write_tree(tmp_path / "flat", {"1.png": _png(0), "2.png": _png(255)})
    xf, yf = load_dataset(flat)
    assert yf is None and xf.shape == (2, 2, 3, 1) and class_names(flat) == []
    assert require_labels(np.array([1], np.int32), "resnet").tolist() == [1]
    with pytest.raises(DatasetError, match="Recipe 'resnet' needs labels.*flat"):
        require_labels(yf, "resnet", flat)


def _jpeg_red():
    buf = io.BytesIO()
    Image.new("RGB", (3, 2), (255, 0, 0)).save(buf, format="JPEG", quality=95)
    return buf.getvalue()


def _rgba():
    buf = io.BytesIO()
    Image.new("RGBA", (3, 2), (0, 0, 255, 7)).save(buf, format="PNG")
    return buf.getvalue()


# ----------------------------------------------------------------------------- zips


def test_zip_of_class_folders_matches_folder(tmp_path):
    root = _write_tree(tmp_path / "pics", _tiny_files())
    path = _write_zip(tmp_path / "pics.zip", _tiny_files())
    x, y = load_dataset(path)
    xf, yf = load_dataset(root)
    np.testing.assert_array_equal(x, xf)
    assert y.tolist() == yf.tolist() == [0, 1, 2, 2]
    assert class_names(path) == ["ant", "moth", "zebra"]
    # One wrapping top folder (as when zipping a folder) is looked through.
    wrapped = _write_zip(tmp_path / "wrapped.zip", _tiny_files("pics/train/"))
    xw, yw = load_dataset(wrapped, "train")
    np.testing.assert_array_equal(xw, xf)
    assert yw.tolist() == [0, 1, 2, 2] and class_names(wrapped) == ["ant", "moth", "zebra"]


def test_zip_cache_is_written_and_reused(tmp_path, monkeypatch):
    files = {**_tiny_files("train/"), "test/moth/9.png": _png(77)}
    path = _write_zip(tmp_path / "data.zip", files)
    x, y = load_dataset(path, "train")
    cache = folders.zip_cache_file(path, "train")
    assert cache.parent == tmp_path / "cache" and cache.is_file()
    with np.load(cache) as saved:
        assert saved["x"].dtype == np.uint8 and saved["x"].shape == (4, 2, 3, 1)

    def must_not_decode(*args, **kwargs):
        raise AssertionError("decoded again instead of using the cache")

    monkeypatch.setattr(folders, "_decode_entries", must_not_decode)
    x2, y2 = load_dataset(path, "train", image_size=4)  # resizing happens after the cache
    assert x2.shape == (4, 4, 4, 1)
    x3, y3 = load_dataset(path, "train")
    np.testing.assert_array_equal(x3, x)
    assert y3.tolist() == y.tolist() == [0, 1, 2, 2]
    # The test split was never decoded, and a changed zip is decoded afresh.
    with pytest.raises(AssertionError, match="decoded again"):
        load_dataset(path, "test")
    os.utime(path, ns=(1, 1))
    with pytest.raises(AssertionError, match="decoded again"):
        load_dataset(path, "train")


def test_zip_errors(tmp_path):
    empty = _write_zip(tmp_path / "empty.zip", {"readme.txt": b"nothing"})
    with pytest.raises(DatasetError, match="empty.zip.*no images"):
        load_dataset(empty)
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK not really")
    with pytest.raises(DatasetError, match="broken.zip"):
        load_dataset(broken)
    bad_member = _write_zip(tmp_path / "badpng.zip", {"a/1.png": b"garbage"})
    with pytest.raises(DatasetError, match="a/1.png"):
        load_dataset(bad_member)


# ----------------------------------------------------------------------------- tfds


@pytest.mark.needs_tensorflow
def test_tfds_names_with_mock_data():
    tfds = pytest.importorskip("tensorflow_datasets")
    with tfds.testing.mock_data(num_examples=6):
        x, y = load_dataset("mnist", "train")
        xc, yc = load_dataset("cifar10", "test", image_size=16, color_mode="grayscale")
    assert x.shape == (6, 28, 28, 1) and x.dtype == np.float32
    assert 0.0 <= x.min() and x.max() <= 1.0 and x.max() > 0.5  # random uint8 / 255
    np.testing.assert_array_equal(np.round(x * 255), x * 255)  # exact multiples of 1/255
    assert y.dtype == np.int32 and y.shape == (6,) and set(y.tolist()) <= set(range(10))
    assert xc.shape == (6, 16, 16, 1) and yc.shape == (6,)
    assert class_names("mnist") == [str(i) for i in range(10)]


@pytest.mark.needs_tensorflow
def test_tfds_unknown_name_and_failed_download(monkeypatch):
    tfds = pytest.importorskip("tensorflow_datasets")
    with pytest.raises(DatasetError) as info:
        load_dataset("not_a_dataset_xyz")
    message = str(info.value)
    assert "'not_a_dataset_xyz'" in message and "'digits'" in message and "\n" not in message

    def offline(*args, **kwargs):
        raise ConnectionError("Failed to resolve storage.googleapis.com")

    monkeypatch.setattr(tfds, "load", offline)
    with pytest.raises(DatasetError, match="'fashion_mnist'.*internet") as info:
        load_dataset("fashion_mnist", "test")
    assert isinstance(info.value.__cause__, ConnectionError)
    assert "\n" not in str(info.value)


# ----------------------------------------------------------------------------- errors


BAD_CALLS = [
    ({"name_or_path": "/no/such/dir/data.npz"}, "'/no/such/dir/data.npz'"),
    ({"name_or_path": "./missing_folder"}, "'./missing_folder'"),
    ({"name_or_path": ""}, "''"),
    ({"name_or_path": 123}, "'123'"),
    ({"name_or_path": "digits", "split": "validation"}, "split='validation'"),
    ({"name_or_path": "digits", "split": None}, "split=None"),
    ({"name_or_path": "digits", "image_size": 0}, "image_size=0"),
    ({"name_or_path": "digits", "image_size": (28,)}, "image_size=(28,)"),
    ({"name_or_path": "digits", "image_size": (28, -1)}, "image_size=(28, -1)"),
    ({"name_or_path": "digits", "image_size": 2.5}, "image_size=2.5"),
    ({"name_or_path": "digits", "image_size": True}, "image_size=True"),
    ({"name_or_path": "digits", "color_mode": "cmyk"}, "color_mode='cmyk'"),
]


def test_errors_name_the_offending_value():
    for kwargs, needle in BAD_CALLS:
        with pytest.raises(DatasetError) as info:
            load_dataset(**kwargs)
        message = str(info.value)
        assert needle in message and "\n" not in message, (kwargs, message)
        assert isinstance(info.value, ValueError)
    with pytest.raises(DatasetError, match="'train', 'test'"):
        load_dataset("digits", "validation")


def test_missing_path_message_lists_accepted_sources(tmp_path):
    with pytest.raises(DatasetError) as info:
        load_dataset(tmp_path / "nope")
    message = str(info.value)
    assert str(tmp_path / "nope") in message
    for accepted in ("'digits'", "tensorflow-datasets", ".npz", "class sub-folders", ".zip"):
        assert accepted in message
    with pytest.raises(DatasetError, match="nope"):
        class_names(tmp_path / "nope")


def test_empty_folder_and_unsupported_file(tmp_path):
    (tmp_path / "empty" / "cat").mkdir(parents=True)
    (tmp_path / "empty" / "cat" / "x.txt").write_text("not an image")
    with pytest.raises(DatasetError, match="empty.*no images"):
        load_dataset(tmp_path / "empty")
    text = tmp_path / "data.csv"
    text.write_text("1,2,3")
    with pytest.raises(DatasetError, match="data.csv"):
        load_dataset(text)


# ----------------------------------------------------------------------------- misc


def test_import_pulls_in_no_framework():
    """`keras_paperzoo.data` itself imports neither TensorFlow, JAX nor PyTorch."""
    package_dir = pathlib.Path(__file__).resolve().parents[2] / "keras_paperzoo"
    code = (
        "import sys, types\n"
        "pkg = types.ModuleType('keras_paperzoo')\n"
        f"pkg.__path__ = [{str(package_dir)!r}]\n"
        "sys.modules['keras_paperzoo'] = pkg\n"
        "import keras_paperzoo.data\n"
        "print(sorted({'tensorflow', 'jax', 'torch', 'keras', 'sklearn'} & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ----------------------------------------------------------------------------- shared data


def test_shared_mnist_npz(shared_data):
    x, y = load_dataset(shared_data / "mnist.npz", "test")
    assert x.shape == (10000, 28, 28, 1) and x.dtype == np.float32
    assert x.min() == 0.0 and x.max() == 1.0
    assert y.shape == (10000,) and set(y.tolist()) == set(range(10))
    assert class_names(shared_data / "mnist.npz") == [str(i) for i in range(10)]


def test_shared_cifar_zip_layout_and_a_few_images(shared_data):
    path = shared_data / "cifar10-jpeg.zip"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    index = folders.zip_index(path)
    assert index.classes == CIFAR_CLASSES
    assert len(index.splits["train"]) == 50000 and len(index.splits["test"]) == 10000
    x, y = folders.load_zip(path, "test", limit=20)  # 20 evenly spaced JPEGs, no cache
    assert x.shape == (20, 32, 32, 3) and x.dtype == np.uint8
    assert y.tolist() == sorted(y.tolist()) and set(y.tolist()) == set(range(10))
    assert not list((pathlib.Path(os.environ["PAPERZOO_CACHE_DIR"])).glob("*.npz"))
