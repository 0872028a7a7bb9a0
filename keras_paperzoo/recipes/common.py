"""What every recipe does around `fit`: the output folder, exact resume, the final files.

A recipe's `run(args)` goes through four calls, and gets from them everything
`paperzoo train` promises (tests/recipes/test_kill_and_resume.py checks each
registered recipe):

```python
def run(args, extra_callbacks=()):
    run = common.start_run(args, "myrecipe")          # 1. before loading data
    ...  # load data, build the model, keras.utils.set_random_seed(args.seed), compile
    batches = EpochShuffledBatches(x, batch_size=..., seed=args.seed, steps_per_epoch=args.steps_per_epoch)
    history = run.fit(model, batches, epochs=epochs, callbacks=[...], verbose=args.verbose)   # 2.
    run.save_model(model, "model.keras")               # 3. every final file through run.save_model / run.write_text
    ...  # evaluate
    return run.finish(metrics)                         # 4. metrics.json, then the checkpoint is removed
```

1. `start_run` checks `--output-dir` and `--resume` before the data is read. A
   resumed run takes the arguments it was started with; an argument given again
   with another value is refused in one line naming it (`--batch-size 20`, the
   run used 50), as is resuming on another backend.
2. `Run.fit` trains with `shuffle=False` on a batch source whose epoch e depends
   only on (seed, e) (`EpochShuffledBatches`, `StreamBatches`, or a `tf.data`
   pipeline, which it turns into a `StreamBatches`), keeps it in step with the
   epoch, stops at the first non-finite loss (every `*loss` log) with one line, and
   checkpoints atomically at every epoch end (`RunCheckpoint`: weights, optimizer,
   `SeedGenerator` and global random states, history). A run killed at any moment
   (SIGKILL included) and resumed with `--resume` ends bit-identical to the
   uninterrupted run. It returns the history of every epoch, those before the
   resume included. A recipe with two training stages calls it twice with
   different `stage` names. It writes TensorBoard logs of every epoch's values
   and of the pictures of callbacks with a `last_path` to OUTPUT_DIR/logs (a stage
   other than "train": OUTPUT_DIR/logs/STAGE) with `TensorBoardLogs` (no TensorFlow
   needed): `tensorboard --logdir OUTPUT_DIR/logs`.
3. `Run.save_model` / `Run.write_text` write files atomically; `save_model` writes
   `NAME.keras.sha256` beside the model, which `paperzoo export` and `evaluate` check.
4. `Run.finish` writes `metrics.json`, then removes the checkpoint: a kill before
   that leaves a run that `--resume` completes.
"""

import json
import os
import pathlib
import shutil
import time

import keras
import numpy as np

from keras_paperzoo.callbacks.non_finite import StopOnNonFinite, check_finite_weights
from keras_paperzoo.callbacks.tensorboard import TensorBoardLogs
from keras_paperzoo.callbacks.run_checkpoint import (
    CheckpointError,
    FaultInjection,
    RunCheckpoint,
    atomic_write_text,
    faults,
    fsync_path,
    inject_fault,
)
from keras_paperzoo.checksums import remove_keras_checksum, write_keras_checksum
from keras_paperzoo.recipes.checks import ARGUMENTS_FILE, RecipeError, check_output_dir, check_run_folder  # noqa: F401
from keras_paperzoo.training.data_parallel import check_batch_size, device_count, use_data_parallel

LOGS_DIR = "logs"  # TensorBoard: OUTPUT_DIR/logs/{train,validation}, a later stage's in logs/STAGE/
# Namespace fields that do not change what a run computes.
NOT_RUN_ARGUMENTS = ("output_dir", "resume", "verbose", "command", "backend")


def _flag(name):
    return "--" + name.replace("_", "-")


def _plain(value):
    """`value` as it reads back from JSON (tuples become lists, NumPy scalars numbers)."""
    return json.loads(json.dumps(value, default=lambda v: v.item() if hasattr(v, "item") else str(v)))


class Run:
    """One training run in its output folder: checked arguments, exact resume, atomic final files.

    Args:
        output_dir: the run's folder.
        arguments: dict of everything that decides what the run computes (JSON values).
        resume: continue the interrupted run in `output_dir`.
        namespace: optional argparse namespace whose unset (None) attributes take the
            resumed run's values.

    See the module docstring for the four calls of a recipe.
    """

    def __init__(self, output_dir, arguments, resume=False, namespace=None):
        self.output_dir = check_run_folder(output_dir, resume)  # (recipes/checks.py: also run by the CLI)
        self.checkpoint_dir = self.output_dir / "checkpoint"
        self.arguments = _plain(dict(arguments))
        self.resume = bool(resume)
        self.resumed_from = None
        stored = self._stored_arguments()
        if self.resume:
            self._take_stored(stored, namespace)

    def _stored_arguments(self):
        path = self.checkpoint_dir / ARGUMENTS_FILE
        if not path.is_file():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))["arguments"]
        except (ValueError, KeyError, TypeError, OSError) as error:
            raise RecipeError(f"--resume: {str(path)!r} is unreadable ({type(error).__name__}); delete "
                              f"{str(self.checkpoint_dir)!r} to start the run again.") from None

    def _take_stored(self, stored, namespace):
        for name in sorted(set(stored) | set(self.arguments)):
            given, kept = self.arguments.get(name), stored.get(name)
            if given == kept:
                continue
            if name == "recipe":
                raise RecipeError(f"--resume: {self.output_dir} holds a {kept!r} run, not {given!r}.")
            if name == "backend":
                raise RecipeError(f"--resume: the run in {self.output_dir} was trained on the {kept} backend; "
                                  f"resume it with --backend {kept} (this is {given}).")
            if given is None:  # not given again: the run's value
                self.arguments[name] = kept
                if namespace is not None and hasattr(namespace, name):
                    setattr(namespace, name, kept)
                continue
            was = "without it" if kept is None else f"with {_flag(name)} {kept}"
            raise RecipeError(
                f"--resume: {_flag(name)} {given} differs from the run's: it was started {was}; leave "
                f"{_flag(name)} out to keep the run's value, or start a new run in another --output-dir."
            )

    def _record_arguments(self):
        self.checkpoint_dir.mkdir(parents=True, exist_ok=True)
        path = self.checkpoint_dir / ARGUMENTS_FILE
        if not path.is_file():
            atomic_write_text(path, json.dumps({"arguments": self.arguments}, indent=2, sort_keys=True) + "\n")

    def fit(self, model, data, epochs, callbacks=(), steps_per_epoch=None, validation_data=None, verbose=1,
            stage="train"):
        """`model.fit` that resumes exactly (see the module docstring); returns the `History` of every epoch.

        Args:
            model: a compiled Keras model.
            data: `EpochShuffledBatches` (or a subclass), `StreamBatches`, or a `tf.data.Dataset`
                (an infinite one needs `steps_per_epoch`).
            epochs: total epochs of the run, those before a resume included.
            callbacks: the recipe's callbacks (put before the checkpoint, which saves last).
            steps_per_epoch: for a `tf.data.Dataset` only (the others carry their own).
            stage: names this stage's checkpoint, for a recipe that trains twice.
        """
        data = resumable_batches(data, steps_per_epoch)
        try:
            check_batch_size(getattr(data, "batch_size", None))
        except ValueError as error:
            raise RecipeError(str(error)) from None
        self._record_arguments()
        guard = StopOnNonFinite()
        checkpoint = RunCheckpoint(self.checkpoint_dir / stage)
        pictures = [c for c in callbacks if hasattr(c, "last_path")]
        log_dir = self.output_dir / LOGS_DIR / ("" if stage == "train" else stage)
        logs = TensorBoardLogs(log_dir, pictures=pictures)
        every = [data.epoch_callback(), guard, *callbacks, logs]
        if faults():
            every.append(FaultInjection())
        every.append(checkpoint)
        try:
            history = model.fit(data, epochs=epochs, callbacks=every, validation_data=validation_data,
                                shuffle=False, verbose=verbose)
        except CheckpointError as error:
            raise RecipeError(str(error)) from None
        finally:
            model._initial_epoch = None  # Keras keeps it; a later fit of the same model must not start there
        if checkpoint.restored_epoch:
            self.resumed_from = checkpoint.restored_epoch
        if guard.problem is not None:
            remove_checkpoint(self.output_dir)
            raise RecipeError(
                f"training diverged: {guard.message()}; nothing was saved (try a smaller learning rate or "
                "another --seed)."
            )
        inject_fault("fitted")
        history.history = checkpoint.history
        return history

    def save_model(self, model, filename):
        """`model.save` into the output folder, atomically; returns the path. A model with NaN or infinite
        weights is refused (one line naming how many arrays and the first), never written."""
        path = self.output_dir / filename
        try:
            check_finite_weights(model, filename)
        except ValueError as error:
            raise RecipeError(f"training diverged: {error}; try a smaller learning rate or another --seed.") from None
        partial = path.with_name(f".{path.stem}.partial.keras")
        model.save(partial)
        fsync_path(partial)
        remove_keras_checksum(path)  # (a kill before the new one is written leaves a .keras without: it loads)
        os.replace(partial, path)
        write_keras_checksum(path)  # NAME.keras.sha256, checked by export and evaluate
        return path

    def write_text(self, filename, text):
        """Write a text file into the output folder, atomically; returns the path."""
        return atomic_write_text(self.output_dir / filename, text)

    def finish(self, metrics):
        """Write metrics.json (the run's last file), remove the checkpoint; returns `metrics`.

        A `--data-parallel` run adds `data_parallel_devices`, the devices each batch was split over.
        """
        if self.arguments.get("data_parallel"):
            metrics = {**metrics, "data_parallel_devices": device_count()}
        write_metrics(self.output_dir, metrics)
        return metrics


def start_run(args, recipe, **arguments):
    """Begin or resume the run `args` asks for (the first call of a recipe's `run`); returns a `Run`.

    Every attribute of the argparse namespace `args` except the output folder,
    `--resume`, `--verbose` and `--backend` is a run argument (the backend is
    recorded as the one Keras runs on); `arguments` adds values the recipe decides
    itself. On `--resume`, attributes left unset (None) take the run's values, in
    `args` too. `args.seed` left unset is 0.
    """
    output_dir = getattr(args, "output_dir", None) or os.path.join("runs", recipe)
    args.output_dir = str(output_dir)
    values = {k: v for k, v in vars(args).items() if k not in NOT_RUN_ARGUMENTS}
    values.update(arguments, recipe=recipe, backend=keras.backend.backend())
    if values.get("seed") is None and not getattr(args, "resume", False):
        values["seed"] = args.seed = 0
    run = Run(output_dir, values, resume=getattr(args, "resume", False), namespace=args)
    if getattr(args, "seed", 0) is None:
        args.seed = 0
    if getattr(args, "data_parallel", None):  # (a resumed run takes the run's --data-parallel)
        try:
            use_data_parallel()
        except ValueError as error:
            raise RecipeError(str(error)) from None
    return run


def resumable_batches(data, steps_per_epoch=None):
    """`data` as a batch source whose epoch e depends only on (seed, e); see `Run.fit`."""
    from keras_paperzoo.data.epoch_batches import StreamBatches

    if isinstance(data, keras.utils.PyDataset) and hasattr(data, "set_epoch") and hasattr(data, "epoch_callback"):
        if steps_per_epoch is not None and steps_per_epoch != len(data):
            raise ValueError(f"steps_per_epoch={steps_per_epoch} but the batch source has {len(data)} batches per "
                             "epoch; give it to the batch source.")
        return data
    if type(data).__module__.startswith("tensorflow"):
        return StreamBatches.from_dataset(data, steps_per_epoch)
    raise TypeError(
        f"Run.fit needs an EpochShuffledBatches, a StreamBatches or a tf.data.Dataset, whose epochs a resumed run "
        f"can repeat; got {type(data).__name__}."
    )


def prepare_output_dir(output_dir, resume):
    """The older entry point (no argument check): prefer `start_run`. Creates the folder; checks `--resume`."""
    output_dir = check_output_dir(output_dir)
    backup = output_dir / "checkpoint"
    if resume and not backup.is_dir():
        raise RecipeError(f"--resume: no interrupted run to resume in {output_dir} (no {backup}).")
    if not resume and backup.is_dir():
        raise RecipeError(
            f"{output_dir} holds an interrupted run; pass --resume to continue it, or "
            "choose another --output-dir."
        )
    return output_dir


def checkpoint_callback(output_dir, stage="train"):
    """A `RunCheckpoint` into DIR/checkpoint/STAGE (prefer `Run.fit`, which adds it and the rest).

    It is kept when `fit` ends; `write_metrics` removes it once the run's files are written.
    """
    return RunCheckpoint(pathlib.Path(output_dir) / "checkpoint" / stage)


def to_number(value):
    value = np.asarray(keras.ops.convert_to_numpy(value))
    return value.item() if value.size == 1 else value.tolist()


def write_metrics(output_dir, metrics):
    """Write OUTPUT_DIR/metrics.json atomically: the run's last file, so the checkpoint kept for --resume goes after it."""
    path = pathlib.Path(output_dir) / "metrics.json"
    clean = {k: (to_number(v) if not isinstance(v, (str, dict, list, type(None))) else v) for k, v in metrics.items()}
    atomic_write_text(path, json.dumps(clean, indent=2, sort_keys=True) + "\n")
    if "keep-checkpoint" not in faults():
        remove_checkpoint(output_dir)
    return path


def image_run_metrics(dataset, x_train, epochs, steps_per_epoch, batch_size, timer):
    """The metrics.json entries of every image recipe: its data, its schedule, the backend and the training time."""
    return {
        "dataset": str(dataset),
        "train_images": int(len(x_train)),
        "image_shape": list(x_train.shape[1:]),
        "epochs": epochs,
        "steps_per_epoch": steps_per_epoch,
        "batch_size": batch_size,
        "backend": keras.backend.backend(),
        "train_seconds": round(timer.seconds, 2),
    }


class Timer:
    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.start


def remove_checkpoint(output_dir):
    shutil.rmtree(pathlib.Path(output_dir) / "checkpoint", ignore_errors=True)


def requested_task(args, recipe, tasks):
    """(task, path) of `--task` / `--task-data`, checked: tasks[0] (the default) takes no file, the others need one."""
    task = getattr(args, "task", None) or tasks[0]
    path = getattr(args, "task_data", None)
    if task not in tasks:
        raise RecipeError(f"{recipe}: --task {task!r} is not one of {', '.join(tasks)}.")
    if task == tasks[0]:
        if path is not None:
            raise RecipeError(f"{recipe}: --task-data is read by --task {' / '.join(tasks[1:])}; --task {task} "
                              "takes no task file.")
        return task, None
    if path is None:
        raise RecipeError(f"{recipe}: --task {task} needs --task-data PATH, the fine-tuning examples.")
    path = pathlib.Path(path)
    if not path.exists():
        raise RecipeError(f"{recipe}: --task-data {str(path)!r} does not exist.")
    return task, path


def read_jsonl(path, fields):
    """[(line number, record), ...] of a JSON-lines file, each non-blank line an object holding `fields`.

    A line that is not JSON, not an object or lacks a field raises a ValueError naming
    the file, the line and the rule.
    """
    path = pathlib.Path(path)
    names = ", ".join(repr(name) for name in fields)
    if not path.is_file():
        raise ValueError(f"{str(path)!r} is not a file; a JSON-lines file (one object a line) is expected.")
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path} line {number}: not JSON ({error.msg}); each line should be one JSON object "
                             f"with {names}.") from None
        if not isinstance(record, dict):
            raise ValueError(f"{path} line {number}: a JSON {type(record).__name__}, not an object with {names}.")
        missing = [name for name in fields if name not in record]
        if missing:
            raise ValueError(f"{path} line {number}: no {missing[0]!r} field; each line needs {names}.")
        records.append((number, record))
    if not records:
        raise ValueError(f"{path} holds no JSON lines.")
    return records


def encoder_knn_accuracy(encoder, x_train, y_train, x_test, y_test, verbose=0):
    """kNN top-1 (k = min(200, N), InstDisc's weighted vote) of a frozen encoder's features; None without labels."""
    from keras_paperzoo.evaluation.knn import knn_accuracy

    if y_train is None or y_test is None:
        return None
    train = encoder.predict(x_train, batch_size=256, verbose=verbose)  # (N, D)
    test = encoder.predict(x_test, batch_size=256, verbose=verbose)  # (M, D)
    return knn_accuracy(train, y_train, test, y_test, k=min(200, len(train)), verbose=verbose)
