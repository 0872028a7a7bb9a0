"""What an export and its TensorFlow child process share: `exporters`, `text` and `translator` use it.

On JAX and PyTorch an export runs in a child process, `python -m keras_paperzoo.export`
with `KERAS_BACKEND=tensorflow` (Keras writes SavedModel and LiteRT from TensorFlow
only): `save_for_child` writes the live model to a temporary `.keras` file,
`run_child` starts the child and reads its one JSON line back, re-raising its error
with its type. The result both sides describe (`ExportResult`), the checks made before
any export work (`check_tolerance`, `check_path_only`, `prepare_path`) and the error
of a failed check (`ExportMismatchError`) live here too, so that no export module
reaches into another's private helpers.
"""

import dataclasses
import json
import math
import os
import shutil
import subprocess
import sys

from keras_paperzoo.optional import require_installed

DEFAULT_TOLERANCE = 1e-4

# Exit codes of `python -m keras_paperzoo.export`.
EXIT_OK = 0
EXIT_OVER_TOLERANCE = 1
EXIT_ERROR = 2


@dataclasses.dataclass(frozen=True)
class ExportResult:
    """What `export_model` wrote and how closely it reproduces the Keras model.

    Attributes:
        path: absolute path of the SavedModel directory or `.tflite` file.
        format: `"saved_model"` or `"litert"`.
        max_abs_diff: largest |Keras - artifact| over all outputs on the sample batch
            (`inf` if the outputs' number or shapes differ).
        tolerance: the threshold `ok` is judged against.
    """

    path: str
    format: str
    max_abs_diff: float
    tolerance: float = DEFAULT_TOLERANCE

    @property
    def ok(self):
        """True when `max_abs_diff <= tolerance` (False for NaN)."""
        return bool(self.max_abs_diff <= self.tolerance)

    def to_dict(self):
        """Plain dict (JSON-ready) with path, format, max_abs_diff, tolerance and ok."""
        return {
            "path": self.path,
            "format": self.format,
            "max_abs_diff": self.max_abs_diff,
            "tolerance": self.tolerance,
            "ok": self.ok,
        }


class ExportMismatchError(RuntimeError):
    """The exported graph does not reproduce the Keras model on the sample texts."""


def check_tolerance(tolerance):
    try:
        value = float(tolerance)
    except (TypeError, ValueError):
        value = float("nan")
    if math.isnan(value) or value < 0:
        raise ValueError(f"tolerance must be a number >= 0; got {tolerance!r}")
    return value


def prepare_path(path, format, overwrite):
    """Validate the output path for `format`, then clear what is there. Returns abs path."""
    path = check_path_only(path, format, overwrite)
    if os.path.lexists(path):
        is_dir = os.path.isdir(path) and not os.path.islink(path)
        if not is_dir:
            os.remove(path)
        elif format == "litert" or os.listdir(path):
            shutil.rmtree(path)
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    return path


def check_path_only(path, format, overwrite):
    """Like `prepare_path` but never deletes anything (used before a child process)."""
    path = os.path.abspath(os.fspath(path))
    if format == "litert" and not path.endswith(".tflite"):
        raise ValueError(f"path for format='litert' must end with '.tflite'; got {path!r}")
    if os.path.lexists(path) and not overwrite:
        is_dir = os.path.isdir(path) and not os.path.islink(path)
        empty = (not os.listdir(path)) if is_dir else os.lstat(path).st_size == 0
        if format == "litert" and is_dir:
            raise ValueError(
                f"path {path!r} is a directory; format='litert' writes a single "
                ".tflite file (pass overwrite=True to replace the directory)."
            )
        if not empty:
            raise ValueError(
                f"output path {path!r} already exists and is not empty; choose a new "
                "path or pass overwrite=True to replace it."
            )
    return path


def backend():
    import keras

    return keras.backend.backend()


def package_root():
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_child(model_path, path, format, submodel, tolerance, overwrite, inputs_npz=None,
              outputs_npz=None, extra_args=()):
    """Run `python -m keras_paperzoo.export` under the TF backend; returns its JSON dict."""
    require_installed("tensorflow", f"Export ({format})")
    cmd = [
        sys.executable, "-m", "keras_paperzoo.export",
        os.path.abspath(os.fspath(model_path)), path,
        "--format", format, "--tolerance", repr(float(tolerance)),
    ]
    if submodel:
        cmd += ["--submodel", submodel]
    if overwrite:
        cmd.append("--overwrite")
    if inputs_npz:
        cmd += ["--sample-inputs", inputs_npz]
    if outputs_npz:
        cmd += ["--save-outputs", outputs_npz]
    cmd += list(extra_args)
    env = dict(os.environ)
    env["KERAS_BACKEND"] = "tensorflow"
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    root = package_root()
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    payload = None
    for line in reversed(proc.stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                payload = json.loads(line)
                break
            except json.JSONDecodeError:
                continue
    if payload is None:
        tail = "\n".join(proc.stderr.strip().splitlines()[-20:])
        raise RuntimeError(
            f"export child process (KERAS_BACKEND=tensorflow) exited with code "
            f"{proc.returncode} and no result.\ncommand: {' '.join(cmd)}\nstderr tail:\n{tail}"
        )
    if "error" in payload:
        error_type = {"ValueError": ValueError, "TypeError": TypeError,
                      "ExportMismatchError": ExportMismatchError}.get(
            payload.get("error_type"), RuntimeError
        )
        raise error_type(payload["error"])
    return payload


def save_for_child(model, folder):
    """`folder/model.keras` for the TensorFlow child process, or a ValueError saying why it cannot be written."""
    model_file = os.path.join(folder, "model.keras")
    try:
        model.save(model_file)
    except Exception as err:  # noqa: BLE001 - re-raised with the reason
        raise ValueError(
            f"on the {backend()!r} backend the export runs under TensorFlow in a "
            "child process, which needs the model saved to a .keras file; saving "
            f"failed: {err}"
        ) from err
    return model_file
