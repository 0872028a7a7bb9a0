"""SHA-256 checksums of what `paperzoo train` writes, checked before the files are used.

- A saved model: `Run.save_model` writes `NAME.keras.sha256` beside `NAME.keras`, the
  SHA-256 of its weights (the archive's `model.weights.h5`, stored uncompressed, so a
  flipped byte would load as a wrong weight). `check_keras_file` (export, evaluate)
  refuses a file whose weights no longer match, and a file that is not a complete
  `.keras` archive. A `.keras` without the file beside it (made by the user) loads.
- A checkpoint: `RunCheckpoint` records each weights file's SHA-256 in `state.json`
  and the SHA-256 of the state itself (`state_checksum`), so that a damaged or edited
  checkpoint is refused on `--resume` rather than resumed from the wrong epoch.

No Keras here: the CLI checks files before importing it.
"""

import hashlib
import json
import os
import pathlib
import zipfile

WEIGHTS_MEMBER = "model.weights.h5"
SUFFIX = ".sha256"


class ChecksumError(ValueError):
    """A file does not match its checksum, or is not the file it claims to be; the message says what to do."""


def sha256_file(path_or_file):
    """The hex SHA-256 of a file (a path or an open binary file)."""
    digest = hashlib.sha256()
    with (open(path_or_file, "rb") if isinstance(path_or_file, (str, os.PathLike)) else path_or_file) as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def state_checksum(states):
    """The hex SHA-256 of a checkpoint's `states` (canonical JSON)."""
    text = json.dumps(states, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def checksum_path(model_path):
    model_path = pathlib.Path(model_path)
    return model_path.with_name(model_path.name + SUFFIX)


def _open_keras(model_path):
    try:
        archive = zipfile.ZipFile(model_path)
        names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        reason = "a truncated or damaged zip archive" if pathlib.Path(model_path).stat().st_size else "empty"
        raise ChecksumError(f"{str(model_path)!r} is not a valid .keras file ({reason}: "
                            f"{error}); copy it again or retrain.") from None
    missing = [name for name in ("config.json", WEIGHTS_MEMBER) if name not in names]
    if missing:
        archive.close()
        raise ChecksumError(f"{str(model_path)!r} is not a valid .keras file (no {missing[0]} in the archive); "
                            "copy it again or retrain.")
    return archive


def keras_weights_sha256(model_path):
    """The hex SHA-256 of a `.keras` file's weights (its `model.weights.h5`)."""
    with _open_keras(model_path) as archive:
        try:
            return sha256_file(archive.open(WEIGHTS_MEMBER))
        except (zipfile.BadZipFile, OSError, EOFError) as error:
            raise ChecksumError(f"{str(model_path)!r} is not a valid .keras file (its weights cannot be read: "
                                f"{error}); copy it again or retrain.") from None


def write_keras_checksum(model_path):
    """Write `NAME.keras.sha256` beside a saved model (`sha256sum` format); returns its path."""
    path = checksum_path(model_path)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(f"{keras_weights_sha256(model_path)}  {WEIGHTS_MEMBER}\n", encoding="utf-8")
    os.replace(partial, path)
    return path


def remove_keras_checksum(model_path):
    checksum_path(model_path).unlink(missing_ok=True)


def check_keras_file(model_path):
    """Refuse, in one line, a `.keras` that is not a complete archive or whose weights differ from its checksum.

    Without a `NAME.keras.sha256` beside it only the archive is checked (its members'
    CRC-32s: reading the weights checks theirs).
    """
    model_path = pathlib.Path(model_path)
    recorded = checksum_path(model_path)
    actual = keras_weights_sha256(model_path)
    if recorded.is_file() and recorded.read_text(encoding="utf-8").split()[:1] != [actual]:
        raise ChecksumError(
            f"the weights in {str(model_path)!r} do not match the SHA-256 in {recorded.name} written when it was "
            f"saved: the file was damaged or changed since; copy it again or retrain (delete {recorded.name} only "
            "if you changed the weights on purpose)."
        )
