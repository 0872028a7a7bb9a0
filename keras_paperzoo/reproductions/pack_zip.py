"""Pack a zip of many small files (CIFAR-10's 60,000 JPEGs) into one .npz and back.

    python -m keras_paperzoo.reproductions.pack_zip pack DATA/cifar10-jpeg.zip .data/cifar10.npz   # 65 -> 56 MB
    python -m keras_paperzoo.reproductions.pack_zip unpack .data/cifar10.npz /tmp/cifar10.zip                  # the same zip

The zip's per-file headers cost 10 MB for CIFAR-10; without them the data fits beside the
package in the 64 MB that travels to a lent GPU machine. `unpack` writes the same names and
bytes (stored, uncompressed), which `load_dataset` reads as before.
"""
import sys
import zipfile
import zlib

import numpy as np


def pack(src, dst):
    z = zipfile.ZipFile(src)
    names, blobs = [], []
    for info in z.infolist():
        if info.is_dir():
            continue
        names.append(info.filename)
        blobs.append(z.read(info))
    lengths = np.array([len(b) for b in blobs], np.uint32)
    packed_names = np.frombuffer(zlib.compress("\n".join(names).encode()), np.uint8)
    np.savez(dst, names=packed_names, lengths=lengths,
             data=np.frombuffer(b"".join(blobs), np.uint8))


def unpack(src, dst):
    f = np.load(src)
    names = zlib.decompress(f["names"].tobytes()).decode().split("\n")
    data = f["data"].tobytes()
    offsets = np.concatenate([[0], np.cumsum(f["lengths"].astype(np.int64))])
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as z:
        for i, name in enumerate(names):
            z.writestr(name, data[offsets[i]:offsets[i + 1]])


if __name__ == "__main__":
    {"pack": pack, "unpack": unpack}[sys.argv[1]](sys.argv[2], sys.argv[3])
