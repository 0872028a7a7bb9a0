"""`RunCheckpoint`: a crash-safe checkpoint from which `fit` resumes exactly.

Keras's `BackupAndRestore` rewrites `latest.weights.h5` in place and its metadata
after it: a SIGKILL during the write leaves an unreadable file, or new weights with
the old epoch. It also leaves out what a resumed run needs to repeat the
uninterrupted one: the `SeedGenerator` states (dropout, noise, masks, in-model
augmentation), Python's, NumPy's and (on the torch backend) PyTorch's global random
states (`fit(shuffle=True)` reorders batches with Python's `random`; Keras's dropout
on PyTorch draws from the global generator when its layer has no seed), and the
history of the epochs already done.

At every epoch end `RunCheckpoint` writes, into its folder:

1. `epoch-NNNNNN.weights.h5`: `model.save_weights` (weights, optimizer state,
   batch-norm statistics, queues: every saved variable), under a new name, flushed
   to disk;
2. `state.json`, replaced atomically (written beside, flushed, renamed): the epoch,
   the weights file's name, size and SHA-256, the random states and the history, for
   the newest `keep` checkpoints, and the SHA-256 of all that (`sha256`): a
   checkpoint edited or damaged by hand is refused in one line, never resumed from
   the epoch it claims.

A kill at any moment leaves `state.json` naming complete files. If the newest
weights file cannot be read (a disk error, a truncated copy) the previous one is
used, with a note: the run then redoes one more epoch and still ends where the
uninterrupted run would have. The checkpoint is not deleted when `fit` ends: the
caller removes it once its final files are written
(`keras_paperzoo.recipes.common.Run.finish`).

Resume is exact when the batches of epoch e depend only on (seed, e)
(`EpochShuffledBatches`, `StreamBatches`), as every `paperzoo train` recipe's do.
"""

import json
import os
import pathlib
import random
import signal
import sys
import tempfile

import numpy as np

import keras

from keras_paperzoo.callbacks.non_finite import non_finite_weights
from keras_paperzoo.checksums import sha256_file, state_checksum

STATE_FILE = "state.json"
FORMAT = 1
FAULT_ENV = "PAPERZOO_FAULT"


class CheckpointError(ValueError):
    """A checkpoint cannot be used; the message names the file and what to do."""


def fsync_path(path):
    """Flush a written file (or a folder's entries) to disk."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) if pathlib.Path(path).is_dir() else os.O_RDONLY
    try:
        fd = os.open(path, flags)
    except OSError:  # folders cannot be opened on some systems
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_text(path, text):
    """Write `text` to `path` so that a crash leaves either the old file or the new one, never a part.

    Example:

    ```python
    atomic_write_text("out/metrics.json", json.dumps(metrics))
    ```
    """
    path = pathlib.Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        pathlib.Path(tmp).unlink(missing_ok=True)
        raise
    fsync_path(path.parent)
    return path


def faults():
    """The fault-injection points named in $PAPERZOO_FAULT (comma-separated), for the crash tests."""
    return {item.strip() for item in os.environ.get(FAULT_ENV, "").split(",") if item.strip()}


def inject_fault(point):
    """Test hook: SIGKILL this process at `point` when $PAPERZOO_FAULT names `kill@POINT`.

    Points: `batch:E:B` (after batch B of epoch E, 0-based), `save:E` (the weights of
    the checkpoint after epoch E written, `state.json` not yet replaced), `fitted`
    (`fit` returned, the final files not yet written). Used by
    tests/recipes/test_kill_and_resume.py; a no-op otherwise.
    """
    if f"kill@{point}" in faults():
        sys.stdout.flush()
        sys.stderr.flush()
        os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))


class FaultInjection(keras.callbacks.Callback):
    """Calls `inject_fault(f"batch:{epoch}:{batch}")` after every batch (added only when $PAPERZOO_FAULT is set)."""

    def __init__(self):
        super().__init__()
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        inject_fault(f"batch:{self.epoch}:{batch}")


def seed_generator_states(model):
    """The `SeedGenerator` state variables of `model` and its layers, in a fixed order."""
    return [v for v in model.variables if "seed_generator_state" in v.path]


def _number(value):
    value = np.asarray(keras.ops.convert_to_numpy(value))
    return value.item() if value.size == 1 else value.tolist()


def _finite_losses(logs):
    for name, value in (logs or {}).items():
        if name.endswith("loss"):
            try:
                if not np.all(np.isfinite(np.asarray(_number(value), dtype="float64"))):
                    return False
            except (TypeError, ValueError):
                continue
    return True


def _python_random_state():
    version, internal, gauss = random.getstate()
    return [version, list(internal), gauss]


def _numpy_random_state():
    name, keys, position, has_gauss, cached = np.random.get_state()
    return [name, keys.tolist(), int(position), int(has_gauss), float(cached)]


def _torch_random_state():
    """PyTorch's global generator, on the torch backend: Keras's dropout draws from it when the layer's
    `SeedGenerator` has no seed of its own (keras-hub's transformer blocks), so a resumed run needs it."""
    if keras.backend.backend() != "torch":
        return None
    import base64

    import torch

    return base64.b64encode(torch.get_rng_state().numpy().tobytes()).decode("ascii")


def _set_torch_random_state(state):
    if state is None or keras.backend.backend() != "torch":
        return
    import base64

    import torch

    torch.set_rng_state(torch.from_numpy(np.frombuffer(base64.b64decode(state), dtype=np.uint8).copy()))


class RunCheckpoint(keras.callbacks.Callback):
    """Save the whole training state at every epoch end, atomically; restore it when `fit` starts.

    Restores at `on_train_begin` and makes `fit` start at the epoch after the newest
    checkpoint, like `BackupAndRestore`, but exactly (random states, history) and
    crash-safe (see the module docstring). Put it last in the callback list, so that
    it saves after every other callback's epoch end.

    Args:
        directory: the checkpoint folder (created at the first save).
        keep: how many checkpoints to keep (default 2: the newest and a fallback).

    Attributes:
        history: `{name: [value per epoch]}` of every epoch, those before a resume included.
        restored_epoch: the epoch `fit` resumed at (0: a fresh start).
        note: a line saying a fallback was used, or None.

    Example:

    ```python
    checkpoint = RunCheckpoint("out/checkpoint")
    model.fit(batches, epochs=10, callbacks=[batches.epoch_callback(), checkpoint])  # killed ...
    model.fit(batches, epochs=10, callbacks=[batches.epoch_callback(), checkpoint])  # ... goes on from the last epoch end
    print(checkpoint.history["loss"])  # all 10 epochs
    ```
    """

    def __init__(self, directory, keep=2):
        super().__init__()
        if not isinstance(keep, int) or keep < 1:
            raise ValueError(f"keep must be an int >= 1; got {keep!r}.")
        self.directory = pathlib.Path(directory)
        self.keep = keep
        self.history = {}
        self.restored_epoch = 0
        self.note = None

    # --- reading -------------------------------------------------------------------------

    def read_state(self):
        """The parsed `state.json`, or None when no epoch has been saved."""
        path = self.directory / STATE_FILE
        if not path.is_file():
            return None
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
            if state.get("format") != FORMAT or not isinstance(state.get("states"), list):
                raise ValueError(f"format {state.get('format')!r}")
        except (ValueError, OSError, AttributeError) as error:
            raise CheckpointError(
                f"checkpoint {str(path)!r} is unreadable ({type(error).__name__}: {error}); delete "
                f"{str(self.directory)!r} to start the run again."
            ) from None
        if state.get("sha256") != state_checksum(state["states"]):
            raise CheckpointError(
                f"checkpoint {str(path)!r} does not match its SHA-256 (edited or damaged since it was written); "
                f"delete {str(self.directory)!r} to start the run again."
            )
        return state

    def on_train_begin(self, logs=None):
        self.history, self.restored_epoch, self.note = {}, 0, None
        state = self.read_state()
        if not state or not state["states"]:
            return
        failures = []
        for entry in state["states"]:
            try:
                self._load(entry)
            except (OSError, ValueError, KeyError) as error:
                failures.append(f"{entry.get('weights')}: {type(error).__name__}: {str(error).splitlines()[0][:120]}")
                continue
            if failures:
                self.note = (f"the newest checkpoint was unreadable ({failures[0]}); resumed from the one "
                             f"after epoch {entry['epoch']} instead")
                print(f"paperzoo: note: {self.note}", file=sys.stderr)
            return
        raise CheckpointError(
            f"no checkpoint in {str(self.directory)!r} can be read ({'; '.join(failures)}); delete the folder to "
            "start the run again."
        )

    def _load(self, entry):
        path = self.directory / entry["weights"]
        if not path.is_file():
            raise OSError(f"{path.name} is missing")
        if path.stat().st_size != entry["bytes"]:
            raise OSError(f"{path.name} has {path.stat().st_size} bytes, {entry['bytes']} were written")
        if sha256_file(path) != entry["sha256"]:
            raise OSError(f"{path.name} does not match the SHA-256 written with it (damaged since)")
        model = self.model
        if model.optimizer is not None and not model.optimizer.built:
            model.optimizer.build(model.trainable_variables)
        states = seed_generator_states(model)
        if len(states) != len(entry["seed_generators"]):
            raise ValueError(
                f"the model has {len(states)} random seed generators, the checkpoint {len(entry['seed_generators'])}: "
                "not the model that was trained"
            )
        model.load_weights(str(path))
        for variable, value in zip(states, entry["seed_generators"]):
            variable.assign(np.asarray(value).astype(variable.dtype))
        version, internal, gauss = entry["python_random"]
        random.setstate((version, tuple(internal), gauss))
        name, keys, position, has_gauss, cached = entry["numpy_random"]
        np.random.set_state((name, np.asarray(keys, dtype="uint32"), position, has_gauss, cached))
        _set_torch_random_state(entry.get("torch_random"))
        self.history = {name: list(values) for name, values in entry["history"].items()}
        self.restored_epoch = int(entry["epoch"])
        model._initial_epoch = self.restored_epoch

    # --- writing -------------------------------------------------------------------------

    def on_epoch_end(self, epoch, logs=None):
        for name, value in (logs or {}).items():
            try:
                self.history.setdefault(name, []).append(_number(value))
            except (TypeError, ValueError):
                continue
        if not _finite_losses(logs) or non_finite_weights(self.model):
            return  # a diverged epoch (its loss or its weights) is not worth resuming from: the last good one stays
        self.save(epoch + 1)

    def save(self, epoch):
        """Write the checkpoint of the state after `epoch` epochs (see the module docstring)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        name = f"epoch-{epoch:06d}.weights.h5"
        path = self.directory / name
        path.unlink(missing_ok=True)  # a part written by a killed run
        self.model.save_weights(str(path))
        fsync_path(path)
        inject_fault(f"save:{epoch - 1}")
        entry = {
            "epoch": int(epoch),
            "weights": name,
            "bytes": path.stat().st_size,
            "sha256": sha256_file(path),
            "seed_generators": [_number(v.value) for v in seed_generator_states(self.model)],
            "python_random": _python_random_state(),
            "numpy_random": _numpy_random_state(),
            "torch_random": _torch_random_state(),
            "history": self.history,
        }
        previous = self.read_state() if (self.directory / STATE_FILE).is_file() else None
        older = [e for e in (previous or {}).get("states", []) if e["epoch"] < epoch]
        states = [entry] + older[: self.keep - 1]
        state = {"format": FORMAT, "states": states, "sha256": state_checksum(states)}
        atomic_write_text(self.directory / STATE_FILE, json.dumps(state) + "\n")
        kept = {e["weights"] for e in states}
        for old in self.directory.glob("epoch-*.weights.h5"):
            if old.name not in kept:
                old.unlink(missing_ok=True)
