"""The checks of a `paperzoo train` request that need no Keras: `paperzoo train` runs them before importing it.

`RecipeError` (a problem with the user's request, one line from the CLI), the output
folder and `--resume` against what the folder holds, `--dataset` and `--task-data`
files. `recipes/common.py` uses the same functions when a recipe starts its run.
"""

import os
import pathlib

ARGUMENTS_FILE = "run.json"  # OUTPUT_DIR/checkpoint/run.json: the arguments of an interrupted run
# A --dataset ending so names a file (not a dataset's name).
FILE_SUFFIXES = (".npz", ".zip", ".txt", ".json", ".jsonl", ".csv", ".tsv", ".gz", ".tar", ".conll")


class RecipeError(ValueError):
    """A problem with the user's request, reported as one line by the CLI."""


def check_output_dir(output_dir):
    """The output folder as a Path, created; one line if it is a file, lies under one or cannot be written."""
    output_dir = pathlib.Path(output_dir)
    if output_dir.exists() and not output_dir.is_dir():
        raise RecipeError(f"--output-dir {str(output_dir)!r} is a file, not a folder.")
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RecipeError(f"--output-dir {str(output_dir)!r} cannot be created ({error.strerror or error}).") from None
    if not os.access(output_dir, os.W_OK | os.X_OK):
        raise RecipeError(f"--output-dir {str(output_dir)!r} is not writable.")
    return output_dir


def check_run_folder(output_dir, resume):
    """The output folder (created) as a Path, after checking `--resume` against the interrupted run it holds, if any."""
    output_dir = check_output_dir(output_dir)
    checkpoint_dir = output_dir / "checkpoint"
    stored = (checkpoint_dir / ARGUMENTS_FILE).is_file()
    if resume and not stored:
        if checkpoint_dir.is_dir() and any(checkpoint_dir.glob("latest.weights.h5*")):
            raise RecipeError(
                f"--resume: {checkpoint_dir} was written by an older paperzoo and cannot be resumed "
                "exactly; delete it and start the run again."
            )
        raise RecipeError(f"--resume: no interrupted run to resume in {output_dir} (no {checkpoint_dir}).")
    if not resume and (stored or (checkpoint_dir.is_dir() and any(checkpoint_dir.iterdir()))):
        raise RecipeError(f"{output_dir} holds an interrupted run; pass --resume to continue it, or "
                          "choose another --output-dir.")
    return output_dir


def check_files(args):
    """One line for a `--dataset` or `--task-data` file that does not exist (a dataset's name passes)."""
    dataset = getattr(args, "dataset", None)
    if dataset is not None:
        path = pathlib.Path(dataset).expanduser()
        named_as_file = path.is_absolute() or dataset.startswith((".", "~")) or path.suffix.lower() in FILE_SUFFIXES
        if named_as_file and not path.exists():
            raise RecipeError(f"--dataset {dataset!r} does not exist (a file or folder of that name is expected).")
    task_data = getattr(args, "task_data", None)
    if task_data is not None and not pathlib.Path(task_data).exists():
        raise RecipeError(f"{args.recipe}: --task-data {str(task_data)!r} does not exist.")
