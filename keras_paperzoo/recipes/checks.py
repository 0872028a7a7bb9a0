"""The checks of a `paperzoo train` request that need no Keras: `paperzoo train` runs them before importing it.

`RecipeError` (a problem with the user's request, one line from the CLI), the output
folder and `--resume` against what the folder holds, `--dataset` and `--task-data`
files, a `--preset` that no model has (the preset tables are read from the sources,
not imported). `recipes/common.py` uses the same functions when a recipe starts its run.
"""

import builtins
import difflib
import functools
import os
import pathlib
import sys
import types

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


MODELS = pathlib.Path(__file__).resolve().parents[1] / "models"


class _Stub:
    """What a preset table's module gets for an import that would load Keras: any attribute, never called here."""

    def __getattr__(self, name):
        return _Stub()

    def __call__(self, *args, **kwargs):
        raise RuntimeError("a stub of a module that the preset check does not import")


def _preset_tables(path, loaded):
    """The `*_PRESETS` dicts of one models/*/*_presets.py, run with its sibling tables loaded the same way
    and every other package import stubbed, so that no Keras is imported."""
    if path not in loaded:
        def importer(name, globals=None, locals=None, fromlist=(), level=0):
            if name.split(".")[0] in sys.stdlib_module_names:
                return __import__(name, globals, locals, fromlist, level)
            parts = name.split(".")
            if parts[:2] == ["keras_paperzoo", "models"] and parts[-1].endswith("_presets"):
                return types.SimpleNamespace(**_preset_tables(MODELS.joinpath(*parts[2:]).with_suffix(".py"), loaded))
            return _Stub()

        namespace = {"__name__": f"_presets_{path.stem}", "__builtins__": {**vars(builtins), "__import__": importer}}
        exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
        loaded[path] = namespace
    return loaded[path]


@functools.cache
def preset_names():
    """Every preset name of every model: the keys of the `*_PRESETS` tables of models/*/*_presets.py."""
    loaded, names = {}, set()
    for path in sorted(MODELS.glob("*/*_presets.py")):
        tables = _preset_tables(path, loaded)
        names.update(key for name, table in tables.items() if name.endswith("_PRESETS") for key in table)
    return frozenset(names)


def check_preset(args):
    """One line for a `--preset` that is no model's preset (a preset of another paper is left to the recipe)."""
    preset = getattr(args, "preset", None)
    if preset is not None and preset not in preset_names():
        names = sorted(preset_names())
        extended = [name for name in names if name.startswith(preset)]  # "resnet20" -> "resnet20_cifar"
        nearest = (extended + difflib.get_close_matches(preset, names, n=3, cutoff=0.5))[:3]
        hint = f"; nearest: {', '.join(nearest)}" if nearest else ""
        raise RecipeError(f"{args.recipe}: --preset {preset!r} is not a preset of any model{hint} "
                          "(docs/models.md lists them).")
