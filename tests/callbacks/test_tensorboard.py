"""TensorBoardLogs / EventFileWriter: files TensorFlow's own reader accepts, values equal to the history."""

import numpy as np
import pytest

import keras

from keras_paperzoo.callbacks.image_grid import save_png
from keras_paperzoo.callbacks.tensorboard import (
    EventFileWriter,
    TensorBoardLogs,
    crc32c,
    masked_crc32c,
    read_events,
    read_logs,
)


def test_crc32c_matches_the_castagnoli_check_values():
    assert crc32c(b"123456789") == 0xE3069283  # the standard check value of CRC-32C
    assert crc32c(b"") == 0
    assert crc32c(bytes(32)) == 0x8A9136AA  # RFC 3720, B.4: 32 bytes of zeros
    crc = crc32c(b"123456789")
    assert masked_crc32c(b"123456789") == ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) % 2**32


def test_scalars_and_pictures_read_back(tmp_path):
    picture = save_png(np.arange(6 * 4 * 3, dtype="uint8").reshape(6, 4, 3), tmp_path / "grid.png")
    writer = EventFileWriter(tmp_path / "logs")
    writer.add_scalar("epoch_loss", 0.125, step=0)
    writer.add_scalar("epoch_loss", -3.5, step=7)
    writer.add_png("grid", picture, step=7)
    writer.close()
    events = read_events(writer.path)
    assert events[:2] == [(0, "epoch_loss", 0.125), (7, "epoch_loss", -3.5)]
    assert events[2][:2] == (7, "grid") and events[2][2] == picture.read_bytes()
    # a run killed while writing leaves a torn last record: the records before it are read
    writer.path.write_bytes(writer.path.read_bytes()[:-10])
    assert read_events(writer.path) == events[:2]


def test_tensorflow_reads_the_files(tmp_path):
    if keras.backend.backend() != "tensorflow":
        pytest.skip("reads with TensorFlow's summary_iterator: on the tensorflow leg")
    import tensorflow as tf

    picture = save_png(np.zeros((5, 3, 1), "uint8"), tmp_path / "grey.png")
    writer = EventFileWriter(tmp_path / "logs")
    writer.add_scalar("epoch_accuracy", 0.75, step=2)
    writer.add_png("samples", picture, step=2)
    writer.close()
    events = list(tf.compat.v1.train.summary_iterator(str(writer.path)))  # checks both CRCs of every record
    assert events[0].file_version == "brain.Event:2"
    scalar, image = events[1].summary.value[0], events[2].summary.value[0]
    assert (events[1].step, scalar.tag, scalar.simple_value) == (2, "epoch_accuracy", 0.75)
    assert (image.tag, image.image.height, image.image.width, image.image.colorspace) == ("samples", 5, 3, 1)
    assert image.image.encoded_image_string == picture.read_bytes()


class _Pictures(keras.callbacks.Callback):
    """Saves a picture at epochs 0 and 2, as SampleGrid does at its chosen epochs."""

    def __init__(self, directory):
        super().__init__()
        self.directory, self.last_path = directory, None

    def on_epoch_end(self, epoch, logs=None):
        if epoch in (0, 2):
            self.last_path = save_png(np.full((4, 4), epoch, "uint8"), self.directory / f"samples_epoch_{epoch + 1:03d}.png")


def test_fit_logs_every_epoch_value_and_each_new_picture(tmp_path):
    keras.utils.set_random_seed(0)
    x = np.random.default_rng(0).normal(size=(32, 3)).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse", metrics=["mae"])
    pictures = _Pictures(tmp_path)
    history = model.fit(x, y, validation_data=(x, y), epochs=3, batch_size=8, verbose=0,
                        callbacks=[pictures, TensorBoardLogs(tmp_path / "logs", pictures=[pictures])])
    logged = read_logs(tmp_path / "logs")
    for name, values in history.history.items():
        run, tag = ("validation", name[4:]) if name.startswith("val_") else ("train", name)
        assert [logged[(run, f"epoch_{tag}", step)] for step in range(3)] == pytest.approx(values, rel=1e-7)
    assert sorted(k for k in logged if k[1] == "samples") == [("train", "samples", 0), ("train", "samples", 2)]
    assert logged[("train", "samples", 2)] == (tmp_path / "samples_epoch_003.png").read_bytes()
