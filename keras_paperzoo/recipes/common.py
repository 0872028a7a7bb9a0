"""What every recipe does around `fit`: output folder, checkpoints, metrics.json."""

import json
import pathlib
import shutil
import time

import keras
import numpy as np


class RecipeError(ValueError):
    """A problem with the user's request, reported as one line by the CLI."""


def prepare_output_dir(output_dir, resume):
    output_dir = pathlib.Path(output_dir)
    backup = output_dir / "checkpoint"
    if resume and not backup.is_dir():
        raise RecipeError(f"--resume: no interrupted run to resume in {output_dir} (no {backup}).")
    if not resume and backup.is_dir():
        raise RecipeError(
            f"{output_dir} holds an interrupted run; pass --resume to continue it, or "
            "choose another --output-dir."
        )
    output_dir.mkdir(parents=True, exist_ok=True)
    return output_dir


def checkpoint_callback(output_dir):
    """Keras's `BackupAndRestore` into DIR/checkpoint: weights, optimizer, RNG, epoch.

    It is removed when training ends normally; an interrupted run leaves it for
    `--resume`.
    """
    return keras.callbacks.BackupAndRestore(str(pathlib.Path(output_dir) / "checkpoint"))


def to_number(value):
    value = np.asarray(keras.ops.convert_to_numpy(value))
    return value.item() if value.size == 1 else value.tolist()


def write_metrics(output_dir, metrics):
    path = pathlib.Path(output_dir) / "metrics.json"
    clean = {k: (to_number(v) if not isinstance(v, (str, dict, list, type(None))) else v) for k, v in metrics.items()}
    path.write_text(json.dumps(clean, indent=2, sort_keys=True) + "\n")
    return path


class Timer:
    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.start


def remove_checkpoint(output_dir):
    shutil.rmtree(pathlib.Path(output_dir) / "checkpoint", ignore_errors=True)
