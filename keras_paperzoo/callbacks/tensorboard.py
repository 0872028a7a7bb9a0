"""TensorBoard logs without TensorFlow: epoch scalars and the pictures the other callbacks save.

`keras.callbacks.TensorBoard` writes through `tf.summary`, so it needs TensorFlow; the
package trains without it (JAX, PyTorch). A TensorBoard log is a plain file format: a
sequence of records (length, CRC-32C of the length, an `Event` protocol buffer, CRC-32C of
it) in a file whose name holds `tfevents`. `EventFileWriter` writes the two kinds of
`Event` a training run needs, a scalar (`Summary.Value.simple_value`) and a PNG picture
(`Summary.Value.image`), by encoding the few protocol-buffer fields by hand, on every
backend and without TensorFlow. `tensorboard --logdir RUN/logs` reads them.

Example:

```python
model.fit(x, y, epochs=5, callbacks=[TensorBoardLogs("runs/mine/logs")])
# tensorboard --logdir runs/mine/logs
```
"""

import os
import pathlib
import socket
import struct
import time

import keras


def _crc32c_table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1  # Castagnoli, reflected
        table.append(crc)
    return table


_TABLE = _crc32c_table()


def crc32c(data):
    """CRC-32C (Castagnoli) of `data`; `crc32c(b"123456789") == 0xE3069283`."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    """The TFRecord checksum: the CRC rotated right by 15 bits plus a constant."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


# Protocol-buffer wire format: a field is a varint key (number << 3 | wire type) and its value.
def _varint(value):
    out = bytearray()
    while True:
        bits, value = value & 0x7F, value >> 7
        out.append(bits | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number, wire_type, payload):
    return _varint(number << 3 | wire_type) + payload


def _bytes_field(number, data):
    return _field(number, 2, _varint(len(data)) + data)


def _event(step, summary_value=None, file_version=None):
    """An `Event`: wall_time = 1 (double), step = 2 (int64), file_version = 3, summary = 5."""
    event = _field(1, 1, struct.pack("<d", time.time())) + _field(2, 0, _varint(int(step)))
    if file_version is not None:
        event += _bytes_field(3, file_version.encode())
    if summary_value is not None:
        event += _bytes_field(5, _bytes_field(1, summary_value))  # Summary.value = 1 (repeated)
    return event


def scalar_value(tag, value):
    """A `Summary.Value`: tag = 1, simple_value = 2 (float32)."""
    return _bytes_field(1, tag.encode()) + _field(2, 5, struct.pack("<f", float(value)))


def image_value(tag, png_bytes, height, width, channels):
    """A `Summary.Value` holding `Summary.Image` (height 1, width 2, colorspace 3, encoded PNG 4) at field 4."""
    image = (_field(1, 0, _varint(height)) + _field(2, 0, _varint(width)) + _field(3, 0, _varint(channels))
             + _bytes_field(4, png_bytes))
    return _bytes_field(1, tag.encode()) + _bytes_field(4, image)


def _read_varint(data, at):
    value = shift = 0
    while True:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if not byte & 0x80:
            return value, at


def _fields(message):
    """(number, value) pairs of a protocol-buffer message: ints for varints, bytes otherwise."""
    at = 0
    while at < len(message):
        key, at = _read_varint(message, at)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, at = _read_varint(message, at)
        elif wire_type in (1, 5):
            size = 8 if wire_type == 1 else 4
            value, at = message[at:at + size], at + size
        elif wire_type == 2:
            size, at = _read_varint(message, at)
            value, at = message[at:at + size], at + size
        else:
            raise ValueError(f"unsupported protocol-buffer wire type {wire_type}")
        yield number, value


def read_events(path):
    """The events of one event file as (step, tag, value) triples: a float for a scalar, PNG bytes for a picture.

    Checks every record's two checksums (a torn last record, from a killed run, ends the read).
    """
    data = pathlib.Path(path).read_bytes()
    events, at = [], 0
    while at + 12 <= len(data):
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        event = data[at + 12:at + 12 + length]
        if (len(event) < length or struct.unpack("<I", data[at + 8:at + 12])[0] != masked_crc32c(header)
                or data[at + 12 + length:at + 16 + length] != struct.pack("<I", masked_crc32c(event))):
            break
        at += 16 + length
        fields = list(_fields(event))
        step = next((v for n, v in fields if n == 2), 0)
        for summary in (v for n, v in fields if n == 5):
            for _, value in _fields(summary):
                value = dict(_fields(value))
                if 2 in value:
                    events.append((step, value[1].decode(), struct.unpack("<f", value[2])[0]))
                elif 4 in value:
                    events.append((step, value[1].decode(), dict(_fields(value[4]))[4]))
    return events


def read_logs(log_dir):
    """Every value under `log_dir` as {(run folder, tag, step): value}, later files winning (a resumed run's)."""
    log_dir = pathlib.Path(log_dir)
    values = {}
    for path in sorted(log_dir.rglob("*tfevents*"), key=lambda p: p.stat().st_mtime_ns):
        run = path.parent.relative_to(log_dir).as_posix()
        for step, tag, value in read_events(path):
            values[(run, tag, step)] = value
    return values


class EventFileWriter:
    """Append TensorBoard events to a new `events.out.tfevents.*` file in `log_dir`.

    Args:
        log_dir: the folder (one TensorBoard "run"); created if missing.

    Example:

    ```python
    writer = EventFileWriter("runs/mine/logs/train")
    writer.add_scalar("epoch_loss", 0.25, step=3)
    writer.add_png("samples", "runs/mine/samples_epoch_004.png", step=3)
    writer.close()
    ```
    """

    def __init__(self, log_dir):
        self.log_dir = pathlib.Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        name = f"events.out.tfevents.{int(time.time())}.{socket.gethostname()}.{os.getpid()}.{id(self)}"
        self.path = self.log_dir / name
        self._file = open(self.path, "ab")
        self._write(_event(0, file_version="brain.Event:2"))

    def _write(self, event):
        length = struct.pack("<Q", len(event))
        self._file.write(length + struct.pack("<I", masked_crc32c(length)) + event
                         + struct.pack("<I", masked_crc32c(event)))

    def add_scalar(self, tag, value, step):
        self._write(_event(step, scalar_value(tag, value)))

    def add_png(self, tag, path, step):
        """Log the PNG file at `path` as a picture (its size is read from the PNG header)."""
        data = pathlib.Path(path).read_bytes()
        width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
        channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(data[25], 3)  # PNG colour type -> channels
        self._write(_event(step, image_value(tag, data, height, width, channels)))

    def flush(self):
        self._file.flush()

    def close(self):
        self._file.close()


class TensorBoardLogs(keras.callbacks.Callback):
    """Write every epoch's logs and new pictures to TensorBoard, on any backend, with or without TensorFlow.

    Follows `keras.callbacks.TensorBoard`'s layout: training values under
    `log_dir/train` and `val_*` values under `log_dir/validation`, as `epoch_<name>`
    at step = epoch index. Callbacks in `pictures` that expose `last_path` (the
    package's `SampleGrid`, `MAEReconstruction`) have each new picture logged under
    the file's name without its epoch suffix (`samples`, `reconstruction`). A resumed
    run appends a new event file; TensorBoard merges the files of a folder.

    Args:
        log_dir: the logs folder (`paperzoo train` uses OUTPUT_DIR/logs).
        pictures: callbacks whose `last_path` names the picture they saved last;
            put this callback after them.
    """

    def __init__(self, log_dir, pictures=()):
        super().__init__()
        self.log_dir = pathlib.Path(log_dir)
        self.pictures = list(pictures)
        self._writers = {}
        self._logged = {}

    def _writer(self, name):
        if name not in self._writers:
            self._writers[name] = EventFileWriter(self.log_dir / name)
        return self._writers[name]

    def on_epoch_end(self, epoch, logs=None):
        for key, value in (logs or {}).items():
            try:
                value = float(keras.ops.convert_to_numpy(value))
            except (TypeError, ValueError):
                continue  # not a scalar
            if key.startswith("val_"):
                self._writer("validation").add_scalar(f"epoch_{key[4:]}", value, epoch)
            else:
                self._writer("train").add_scalar(f"epoch_{key}", value, epoch)
        for callback in self.pictures:
            path = getattr(callback, "last_path", None)
            if path is not None and self._logged.get(id(callback)) != path and pathlib.Path(path).is_file():
                self._logged[id(callback)] = path
                tag = pathlib.Path(path).stem.split("_epoch_")[0]
                self._writer("train").add_png(tag, path, epoch)
        for writer in self._writers.values():
            writer.flush()

    def on_train_end(self, logs=None):
        for writer in self._writers.values():
            writer.close()
        self._writers = {}
