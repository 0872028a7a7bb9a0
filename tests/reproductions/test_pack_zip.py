"""keras_paperzoo/reproductions/pack_zip.py: a zip packed into one .npz and unpacked is the same files."""

import zipfile

from keras_paperzoo.reproductions import pack_zip


def test_pack_then_unpack_gives_the_same_names_and_bytes(tmp_path):
    source = tmp_path / "images.zip"
    files = {"train/cat/0001.jpg": b"\xff\xd8cat", "train/dog/0002.jpg": b"", "test/cat/0003.jpg": bytes(range(256))}
    with zipfile.ZipFile(source, "w") as z:
        z.writestr("train/", b"")  # a folder entry: not a file, not packed
        for name, data in files.items():
            z.writestr(name, data)
    pack_zip.pack(source, tmp_path / "packed.npz")
    pack_zip.unpack(tmp_path / "packed.npz", tmp_path / "again.zip")
    with zipfile.ZipFile(tmp_path / "again.zip") as z:
        assert z.namelist() == list(files)
        assert {name: z.read(name) for name in files} == files
